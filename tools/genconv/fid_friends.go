package main

import "time"

// writeFriends is two old friends catching up in a messaging app over
// most of 2023, in the manner of LoCoMo: Maya (Edinburgh, a nurse who
// takes up pottery) and Jonas (Gothenburg, a designer who changes jobs).
// Life events — a sister's engagement and wedding, a new job, a cat, a
// move, a new relationship — are mentioned once, in passing, between
// pages of everyday chat, and asked about much later in other words.
func writeFriends(g *gen) {
	g.conv = "conv-friends-maya-jonas"
	g.prefix = "chat"
	g.now = time.Date(2023, 3, 4, 17, 12, 5, 311_000_000, time.UTC)
	g.system("A private chat between two old friends from university, written by them (no AI takes part): Maya Okafor (role \"user\") lives in Edinburgh and works as a nurse; Jonas Lindqvist (role \"assistant\") lives in Gothenburg and works as a graphic designer. They write every week or two.")

	topics := friendsTopics
	d := newDeck(g, len(topics))
	ds := newDeck(g, len(friendsStories))
	s := &storyline{g: g, minGap: 7, maxGap: 16, fromHour: 8, toHour: 20, fillLo: 3, fillHi: 5, tailLo: 7, tailHi: 10,
		filler: func() {
			if g.chance(0.35) {
				g.talk(friendsStories[ds.draw()]...)
				return
			}
			g.talk(topics[d.draw()]...)
		},
		opening: func(k int) {
			if g.chance(0.5) {
				g.chat("u:{Hey Jonas!|Jonas! Hi!|Hi Jonas :)|Morning Jonas!|Hej hej Jonas} {How are you?|How's your week going?|You alive over there?|Got a minute?|Long time no chat!}",
					"a:{Maya! Good to hear from you.|Hey Maya! All good here.|Hi Maya :) I'm alive, just about.|Maya! Perfect timing, I'm on a break.} {How about you?|What's new?|How's Edinburgh?|Tell me everything.}")
			} else {
				g.chat("a:{Hey Maya!|Maya! Hi!|Hi Maya :)|Evening Maya!|Maya, you there?} {How's things?|How was your week?|Got time for a chat?|I have news, sort of.|Missed our chats.}",
					"u:{Hey Jonas! Yes, I'm here.|Hi Jonas! Just got off shift.|Jonas! Always time for you.|Hi! Just sat down with a tea.} {What's up?|Go on then.|How are you doing?|Spill.}")
			}
		},
		closing: func(k int) {
			g.chat(g.pick(
				"x:{Right, I need to sleep|I have to run|Okay, dinner's ready|My break's over|I should go and be productive}. {Talk soon!|Speak soon x|Catch you later!|Bye for now!}",
				"x:{Oh no, look at the time.|Okay, I'll let you go.|Anyway, enough about me.} {Talk next week?|Let's catch up again soon.|Same time next week?}",
			), "y:{Talk soon!|Bye!! x|Yes! Speak soon.|Definitely. Take care!|Night night!|Later!|See you soon!|See you!}")
		},
	}

	var hvar1, maidID, sigridID string
	s.run([][]func(){
		{ // 1: March
			func() {
				ev := g.user("Just got home from my very first wheel-throwing class at the arts centre on Fenwick Street! My bowl collapsed twice and the third one is hilariously lopsided, but I loved every second of it.")
				g.talk("a:Haha, that's brilliant. Photo or it didn't happen.", "u:[photo] Behold: the leaning bowl of Fenwick Street.", "a:I mean it holds things. Probably. Respect.")
				g.askWhen("When was Maya's first pottery class?", []string{"wheel-throwing"}, ev)
			},
			func() {
				ev := g.assistant("Also I did a stupid thing. I bought the old Volvo 240 estate car my neighbour was selling. Dark green, 310,000 km on the clock, smells faintly of wet dog. It was 900 euros and it has character.")
				g.talk("u:You did NOT. Jonas, the man who cycles everywhere, owns a car now?", "a:I contain multitudes. Also IKEA trips were getting ridiculous on a bike.")
				g.ask(catWhat, "What car did Jonas buy from the man next door?", []string{"Volvo 240"}, ev)
				g.ask(catHowMany, "How much did Jonas pay for the car?", []string{"900 euros"}, ev)
			},
		},
		{ // 2
			func() {
				ev := g.user("Family news!! My little sister Adaeze got engaged! Kwame took her up Arthur's Seat at sunrise and popped the question at the top. Apparently she said yes before he finished the sentence.")
				g.talk("a:Oh that's wonderful! Tell her congratulations from me. Your little sister, getting married... I feel ancient.", "u:Right?? Mum has already started a spreadsheet.")
				g.ask(catWho, "Who is Maya's sister going to marry?", []string{"Kwame"}, ev)
				g.ask(catWhere, "Where did the proposal to Maya's sister happen?", []string{"Arthur's Seat"}, ev)
			},
		},
		{ // 3
			func() {
				ev := g.assistant("Today was day one of the new job at Tallberg Studio. New laptop, new badge, and I already got lost looking for the toilets twice.")
				g.talk("u:Yay, congrats on surviving day one! Are the people nice?", "a:Very. Someone brought cinnamon buns, so I've decided to stay forever.")
				g.askWhen("When did Jonas start his new job?", []string{"Tallberg"}, ev)
			},
			func() {
				ev := g.user("Our teacher at the class, Rosalind, threw an entire teapot in the time it took me to find my apron while telling us about her divorce. Absolute legend.")
				g.talk("a:Multitasking queen.", "u:I want to be her when I grow up. Minus the divorce.")
				g.ask(catWho, "Who teaches Maya's pottery class?", []string{"Rosalind"}, ev)
			},
		},
		{ // 4
			func() {
				ev := g.user("We adopted a rescue cat! Grey tabby, three years old, from the Dogs & Cats Home. We've called her Pickle because she sat sulking in the corner like a little gherkin.")
				g.talk("a:A CAT. Photos immediately.", "u:[photo] [photo] [photo]", "a:She looks like she's judging me and I accept it.")
				g.ask(catWhat, "What's the name of Maya's cat?", []string{"Pickle"}, ev)
			},
			func() {
				ev := g.assistant("Ran the Göteborgsvarvet half on Saturday: 1:52:40. Four minutes off my best, and my legs have filed a formal complaint.")
				g.talk("u:Jonas!! That's amazing. Are you walking like a baby giraffe now?", "a:Stairs are my enemy. Worth it though.")
				g.ask(catHowMany, "By how many minutes did Jonas improve his best time in the race?", []string{"Four minutes"}, ev)
			},
		},
		{ // 5
			func() {
				hvar1 = g.assistant("Summer holiday sorted: we booked two weeks on Hvar in July, a little stone house above Stari Grad. No laptops allowed.")
				g.talk("u:Oh, jealous. I'll be here in the Edinburgh drizzle thinking of you.", "a:I'll send you one (1) photo of the sea per day as emotional support.")
			},
		},
		{ // 6
			func() {
				ev := g.user("Book club picked The Remains of the Day for next month. I've never read any Ishiguro, is it sad?")
				g.talk("a:Quietly devastating. Bring tissues and a butler.", "u:Perfect, exactly what my night shifts need.")
				g.ask(catWhat, "Which book is Maya's reading group doing?", []string{"The Remains of the Day", "Remains of the Day"}, ev)
			},
			func() {
				ev := g.user("Update from the bride-to-be: they've capped the wedding at 140 people. In our family that's practically an elopement.")
				g.talk("a:Haha, how many did your mum want?", "u:Don't ask. Let's say there were negotiations.")
				g.ask(catHowMany, "How many people are invited to Adaeze's wedding?", []string{"140 people"}, ev)
			},
		},
		{ // 7
			func() {
				ev := g.user("I SOLD ELEVEN MUGS at the Leith craft fair today!! Strangers! Paying actual money! For my mugs!")
				g.talk("a:MAYA. That's huge! A professional potter now.", "u:I'm framing the first fiver.")
				g.askWhen("When did Maya first sell her pottery?", []string{"craft fair"}, ev)
				g.ask(catHowMany, "How many things did Maya sell the first time she had a stall?", []string{"eleven mugs"}, ev)
			},
		},
		{ // 8
			func() {
				ev := g.assistant("New hobby alert: I'm learning the cello! Rented one from a little shop in Haga. My downstairs neighbours must hate me.")
				g.talk("u:Oh I love that. Play me something next time we call.", "a:Give me six months. Currently it sounds like a sad whale.")
				g.ask(catWhat, "What instrument is Jonas learning?", []string{"cello"}, ev)
			},
		},
		{ // 9
			func() {
				ev := g.user("WE GOT THE FLAT. Stockbridge, top floor, tiny kitchen, enormous window. I can see the water of Leith if I lean out dangerously.")
				g.talk("a:Congratulations!! Please don't lean out dangerously.", "u:No promises.")
				g.ask(catWhere, "Which area is Maya's new flat in?", []string{"Stockbridge"}, ev)
			},
			func() {
				ev := g.assistant("Work thing: my boss Henrik asked me to lead the wayfinding project for the new ferry terminal. My own project!")
				g.talk("u:Look at you, climbing the ladder!", "a:Mostly climbing the terminal with a tape measure, but yes.")
				g.ask(catWho, "Who is Jonas's boss?", []string{"Henrik"}, ev)
			},
		},
		{ // 10
			func() {
				ev := g.user("Moving day. The van arrived at 7:40, the cat is hiding in the bathtub, and I'm sitting on a box in the new flat eating crisps for breakfast.")
				g.talk("a:The glamour. Good luck! Lift with your legs!", "u:My legs have resigned.")
				g.askWhen("When did Maya move into her new flat?", []string{"Moving day"}, ev)
			},
		},
		{ // 11
			func() {
				maidID = g.user("Wedding dress fitting with Adaeze today. She's wearing a green gele with a cream dress, and I'm in emerald as maid of honour. We cried in the shop.")
				g.talk("a:Aww. You'll both look incredible.", "u:The shop lady gave us tissues like it happens every day. It probably does.")
				g.ask(catWhat, "What colour will Maya have on at her sister's wedding?", []string{"emerald"}, maidID)
			},
		},
		{ // 12
			func() {
				sigridID = g.assistant("So... I've been seeing someone. Her name's Sigrid, we met at the bouldering gym in Majorna. She's a vet and she's much better at climbing than me.")
				g.talk("u:JONAS. Tell me everything. How long??", "a:A month-ish. I didn't want to jinx it.", "u:I'm so happy for you!")
				g.ask(catWho, "Who is Jonas dating?", []string{"Sigrid"}, sigridID)
				g.ask(catWhere, "Where did Jonas meet his girlfriend?", []string{"bouldering gym"}, sigridID)
			},
		},
		{ // 13
			func() {
				ev := g.assistant("Back from the island! It was perfect. We swam all 13 days, even the stormy one, and I ate my body weight in grilled fish.")
				g.talk("u:You look so relaxed in the photos. Tanned Jonas is a new look.", "a:It'll last about a week in Swedish weather.")
				g.ask(catWhere, "Where did Jonas go on holiday in July?", []string{"Hvar", "Stari Grad"}, hvar1)
				g.ask(catHowMany, "How many days did Jonas swim on holiday?", []string{"13 days"}, ev)
			},
		},
		{ // 14
			func() {
				ev := g.user("I've finished their wedding present: a whole dinner set. Plates, bowls, a big serving platter, all in that speckled oatmeal glaze. Took me six weeks of evenings.")
				g.talk("a:That's the most thoughtful gift ever. They'll use it forever.", "u:Or until the first dishwasher disaster.")
				g.ask(catWhat, "What did Maya give the couple for their wedding?", []string{"dinner set"}, ev)
			},
		},
		{ // 15
			func() {
				ev := g.user("Wedding day!! Up at six for hair, the hall looks incredible, and Mum has already cried twice. The gele took forty minutes to tie.")
				g.talk("a:Have the best day! Send pictures when you can.", "u:Will do. Phone's going in my bra now, bye!")
				g.askWhen("When was Maya's sister's wedding?", []string{"Wedding day"}, ev)
			},
			func() {
				ev := g.user("Post-wedding report: the best man's speech went on for 22 minutes. TWENTY-TWO. People were checking the football scores.")
				g.talk("a:Oh no. Was it at least funny?", "u:The first three minutes were funny.")
				g.ask(catHowMany, "How long did the best man talk at the wedding?", []string{"22 minutes"}, ev)
			},
		},
		{ // 16
			func() {
				ev := g.assistant("I've gone full cliché: I keep a sourdough starter for my bread now and I've named it Brödrik. I feed it every morning before coffee.")
				g.talk("u:Brilliant name. Does it have a personality?", "a:Needy. Bubbly when it's happy. Like me.")
				g.ask(catWhat, "What did Jonas name the yeast he uses for bread?", []string{"Brödrik"}, ev)
			},
		},
		{ // 17
			func() {
				ev := g.user("Guess who's been invited to show pieces at the Dovecot group show next month? Me!! I have four weeks to make nine things that don't collapse.")
				g.talk("a:Maya!!! That's a real gallery! I'm so proud of you.", "u:I'm terrified. But excited terrified.")
				g.ask(catWhere, "Where is Maya's work being shown?", []string{"Dovecot"}, ev)
			},
		},
		{ // 18
			func() {
				ev := g.assistant("Her brother Anders is staying with us for a week. He brought a whole reindeer sausage as a gift and I don't know where to put it.")
				g.talk("u:That's the most Scandinavian sentence I've ever read.", "a:It's in the fridge. Looking at me.")
				g.ask(catWho, "Who came to visit Jonas for a week?", []string{"Anders"}, ev)
			},
		},
		{ // 19
			func() {
				ev := g.assistant("We signed the lease today: a two-room flat in Linnéstaden, together. I'm slightly terrified and very happy.")
				g.talk("u:Moving in together!! That's so lovely. Does the sourdough get its own room?", "a:It gets the best shelf.")
				g.askWhen("When did Jonas and his girlfriend get a flat?", []string{"lease"}, ev)
			},
		},
		{ // 20
			func() {
				ev := g.user("The group show closed yesterday and they sold 6 of my 9 pieces. I keep refreshing my bank app like it's going to change.")
				g.talk("a:That's incredible. You're an actual exhibited, sold-out(ish) artist!", "u:The three left over are coming home to be vases.")
				g.ask(catHowMany, "How many did Maya sell at the exhibition?", []string{"6 of my 9"}, ev)
			},
		},
		{ // 21
			func() {
				ev := g.assistant("Christmas plans: we're going to her parents' in Tromsø. Polar night, minus fifteen, and her dad wants to take me ice fishing.")
				g.talk("u:Pack every jumper you own.", "a:Already bought thermal underwear. Romance!")
				g.ask(catWhere, "Where is Jonas going for the holidays at the end of the year?", []string{"Tromsø"}, ev)
			},
		},
	})
	_ = maidID
}

// friendsTopics are the everyday exchanges between the planted facts:
// "u:" is Maya, "a:" is Jonas, "x:"/"y:" either way round.
var friendsTopics = [][]string{
	{"u:{The cat knocked a full glass of water off the table at three in the morning.|The cat has decided the laundry basket is her bed now.|The cat brought me a sock as a present this morning.}", "a:{Cats are tiny criminals.|Honestly, the laundry basket is a good bed.|A sock! She loves you.}", "u:{She looked me in the eye while she did it.|I can't do laundry any more. She lives there.|It was my favourite sock. I accept the gift.}"},
	{"a:{The car wouldn't start this morning. It was cold and so was I.|Drove the car out to the coast on Sunday, it was lovely.|The car needs new tyres and I'm pretending it doesn't.}", "u:{Oh no. Did you get to work in the end?|That sounds perfect. Windows down?|That's a problem for future Jonas.}", "a:{Bus. Late. Grumpy.|Windows down, terrible music up.|Future Jonas is going to be so annoyed.}"},
	{"u:{My sister called about the wedding seating plan for an hour.|My sister wants everyone at the wedding to learn a dance.|My sister sent me forty pictures of wedding cakes.}", "a:{Ha, how's the seating plan looking?|A dance! Will there be a video?|Forty! Which one did you vote for?}", "u:{Like a war map. Two uncles can't sit together.|There will be no video if I have anything to say about it.|The plain one. She will choose the other one.}"},
	{"x:{How's the new job going?|How are things at work?|Still enjoying work?}", "y:{Busy, but the people are really nice.|Long week, but the work is interesting.|Yes, mostly. Too many meetings.}", "x:{That's the main thing.|Good, you sound happy.|Meetings, the great time thief.}"},
	{"u:{My pottery class this week was all about glazes.|I finally made a cup with a handle that stays on.|Rosie from my class invited everyone to her studio.}", "a:{Ooh, what colours?|A handle that stays on! Progress!|That sounds like fun.}", "u:{Blues mostly. It all comes out of the kiln looking different anyway.|It's wonky but it's mine.|People are so friendly there, I love it.}"},
	{"a:{Do you have plans for the holiday weekend?|I need a holiday already.|Are you taking any holiday this year?}", "u:{Working, as usual. Hospital never sleeps.|Same. Maybe a long weekend somewhere.|A week in the autumn, if the rota lets me.}", "a:{Next year we both take a proper holiday.|Let's plan one.|You deserve it.}"},
	{"x:{So many people at the supermarket today.|Why do people walk so slowly on the pavement?|People in this city love a queue.}", "y:{Saturday shopping is a mistake every time.|Ha, some people are just enjoying the view.|It's the national sport.}", "x:{Never again. Until next Saturday.|I'm always in a hurry, that's my problem.|I'd win a medal.}"},
	{"a:{Made fresh bread this morning. The flat smells amazing.|Baked bread for the neighbours this weekend.|My bread is getting better, it rose properly this time!}", "u:{I can smell it from here.|You're becoming a real baker.|Progress! Send a picture.}", "a:{Come and get some.|Everyone gets bread now.|[photo] Look at that crust.}"},
	{"x:{What are you watching at the moment?|Watching anything good?|I need a new series, any tips?}", "y:{Just finished a Danish crime drama. Everyone is sad and it's always raining.|Rewatching an old sitcom, my brain can't handle anything new.|A baking show. Very low stakes, very soothing.}", "x:{Ooh, I'll add it to my list.|Ha, that sounds about right for this time of year.|Perfect, exactly my level of energy right now.}"},
	{"u:Work was {brutal|chaos|long} today. {Three admissions in an hour.|We were two nurses short again.|The ward was full and the lift broke.}", "a:{Oh no. Did you at least get a proper break?|That sounds exhausting. Are you home now?|Ugh, I'm sorry. Please tell me you've eaten.}", "u:{Ate a biscuit standing up, does that count?|Home now, feet up, tea in hand.|Sort of. Toast at midnight is a meal.}", "a:{It counts. Just about.|Good. You deserve a whole evening of nothing.|Toast is the food of champions.}"},
	{"a:{It's been raining for six days straight here.|We had actual sunshine today, everyone went outside at once.|The wind here today could lift a small dog.}", "u:{Same in Edinburgh, it's like living inside a cloud.|Lucky! Grey and drizzly here as usual.|Ha, the wind here is the same. My umbrella died a hero.}", "a:{Scandinavia and Scotland, united by bad weather.|One day we'll both move somewhere warm.|At least it's cosy weather for tea.}"},
	{"x:{What did you have for dinner?|Cooked anything nice lately?|I'm trying to decide what to cook, help.}", "y:{Made a huge pot of lentil soup, I'll be eating it until Thursday.|Just pasta with whatever was in the fridge, a classic.|Tried a new curry recipe, it was actually good!|Honestly, cereal. Don't judge me.}", "x:{Sounds good to me.|Ha, the fridge pasta is an art form.|Send me the recipe!|No judgement, I've had cereal for dinner twice this week.}"},
	{"a:{Any plans for the weekend?|What are you doing this weekend?|Is it a work weekend for you?}", "u:{Working Saturday, then sleeping all of Sunday.|Going for a long walk up the hill if it doesn't rain.|Nothing at all and I can't wait.|Meeting friends for brunch, then probably the sofa.}", "a:{That sounds like a good plan.|Love a weekend with nothing in it.|Enjoy! I'm probably going to clean the flat. Exciting.}"},
	{"u:{Have you heard the new album by that band we saw in 2019?|Listening to our old uni playlist and feeling nostalgic.|I found a great new podcast about unsolved mysteries.}", "a:{Not yet! Is it good?|Oh no, the one with all the terrible 2000s songs?|Send me the link, I need something for my commute.}", "u:{It's surprisingly good. A bit slower than the old stuff.|Yes. I regret nothing.|Sent! Start with episode three.}"},
	{"x:{I think I'm getting a cold.|My throat has been weird all day.|Everyone at work is sick and I can feel it coming.}", "y:{Oh no. Honey, lemon, ginger, and bed early.|Take it easy! Do you have anything in the house?|Drink lots of water and don't be a hero.}", "x:{Yes, mum. Thank you, mum.|I'll make a tea and go to bed early.|Noted. I'm going to wrap myself in a blanket.}"},
	{"a:{Remember the night we missed the last bus and walked home in the snow?|I found a photo of us at graduation today.|Someone at work said 'absolutely smashing' and I thought of you.}", "u:{How could I forget. My shoes never recovered.|Oh no, the terrible hair era?|Haha, that was my entire vocabulary in second year.}", "a:{Best night of uni though.|The hair was a choice. A brave choice.|It still is, I suspect.}"},
	{"u:{My mum called for an hour today.|Had a long call with my dad and my sister this morning.|My cousin is visiting next week and I haven't cleaned at all.}", "a:{How are they doing?|Aww. All well at home?|Ha, the pre-visit panic clean is a tradition.}", "u:{All good! Dad has a new hobby every month, it's birdwatching now.|Fine, they just wanted to talk about everyone else's business.|Hoovering tonight. Pray for me.}"},
	{"a:{How's your sister's wedding planning going?|Any news from your sister about the wedding?|Has your mum calmed down about your sister's wedding yet?}", "u:{Slowly. My sister and my mum have a lot of opinions about chairs.|My sister is all seating plans and spreadsheets right now.|Not even a little. She has a binder now, and my sister has hidden it twice.}", "a:{Ha, I can only imagine.|Chairs! Who knew chairs were so political.|A binder is serious business.}"},
	{"a:{Work is mostly meetings this week.|I spent all day choosing between two almost identical greys.|My client wants the logo bigger. Again.}", "u:{Meetings that could have been emails?|Ha, the designer life.|Make it bigger, but also smaller, but also more blue.}", "a:{Every single one.|Grey number two won, in case you were wondering.|You understand me perfectly.}"},
	{"u:{I've started running again. Well, jogging. Well, walking fast.|Went swimming this morning, first time in ages.|Did a yoga video and now I can't feel my legs.}", "a:{Every bit counts!|Good for you! How was it?|Ha, that's yoga for you.}", "u:{I'm counting it as a win.|Cold, but I felt amazing afterwards.|Never again. Until tomorrow.}"},
	{"x:{Any good books lately?|I finally finished that giant fantasy book.|I keep buying books and not reading them.}", "y:{Reading a short mystery novel, very easy going.|Oh well done! Was the ending worth it?|Same. My shelf is full of good intentions.}", "x:{I'll look it up.|Honestly? Mixed feelings. Too many dragons.|The pile grows.}"},
	{"a:{What are you up to tonight?|Doing anything fun this evening?|What's the plan for tonight?}", "u:{Laundry and an early night. Wild times.|Friends are coming round for games.|Nothing, I'm on nights tomorrow so I'm resting.}", "a:{Living the dream.|Oh nice, which games?|Good idea. Sleep well!}"},
	{"u:{I saw the funniest dog in the park today.|A seagull stole someone's chips right in front of me.|There was a bagpiper outside my window at 8am.}", "a:{Tell me more.|Classic Edinburgh seagulls.|Only in Scotland.}", "u:{It was wearing a tiny raincoat and looked furious about it.|He didn't even see it coming. Pure criminal energy.|He played the same three songs for an hour.}", "a:{I need a photo of this dog.|Those birds have no fear.|Dedication. Or cruelty.}"},
	{"x:{Do you ever think about visiting each other this year?|We should actually plan a visit.|When are we finally meeting up again?}", "y:{Yes! Flights are cheaper in autumn.|I'd love that, let's look at dates.|Soon, I promise. Maybe after the summer?}", "x:{Let's not just talk about it this time.|I'll check my shifts.|Holding you to that.}"},
	{"a:{I tried to fix the kitchen tap myself.|My bike got a flat tyre again.|My laptop died in the middle of a presentation.}", "u:{Oh no. How did that go?|Again?! The universe is trying to tell you something.|Nightmare! Did you save your work?}", "a:{There is now water in places there shouldn't be water.|I'm going to learn to fix it myself. Eventually.|Mostly. I did a lot of talking with my hands.}"},
	{"u:{I tried a new café near work, it was lovely.|Had the best cinnamon roll of my life today.|The coffee machine at work is broken and morale is low.}", "a:{Ooh, where?|Better than Swedish ones? Careful now.|That's a crisis. Call for help.}", "u:{A tiny place with three tables and a grumpy cat.|Don't tell your country, but maybe.|We're surviving on instant. It's grim.}"},
	{"x:{Is it bad that I've bought more plants?|I'm trying to keep a basil plant alive.|My houseplants are staging a revolt.}", "y:{Never bad. More plants, more joy.|Good luck, basil is dramatic.|Water them, talk to them, hope for the best.}", "x:{The windowsill is full. I need more windowsills.|It's already drooping.|I'm trying. They're ungrateful.}"},
	{"a:{Sunday was so lazy, I didn't leave the flat once.|I went on a long walk by the harbour today.|Spent all Saturday at a flea market.}", "u:{That sounds perfect honestly.|Lovely. Was it cold?|Did you find anything good?}", "a:{It was exactly what I needed.|Freezing, but the light was beautiful.|An old lamp and a box of records for almost nothing.}"},
	{"u:{Night shifts next week. Send snacks.|I'm on a run of early shifts and I'm so tired.|Finally have four days off in a row!}", "a:{Sending imaginary snacks.|Hang in there. Early nights for you.|Amazing! What are you going to do with them?}", "u:{Imaginary snacks have zero calories, perfect.|I'll try. The birds start singing at 4am here.|Sleep, mostly. Maybe a day trip.}"},
	{"x:{What are you listening to at the moment?|I made a new playlist for the gym.|Music recommendation please, I'm bored of everything.}", "y:{Old soul records, mostly. Good for cooking.|Lots of Swedish pop, don't laugh.|Try some jazz piano, it's great for working.}", "x:{Nice, I'll give it a go.|I would never laugh. Much.|Noted!}"},
	{"a:{How's the pottery class going?|Made anything new at the class?|Are you still loving the clay class?}", "u:{Made a plate! It's slightly wavy but it's a plate.|Trying to learn handles. Handles are hard.|Yes! I think about glazes in my sleep now.}", "a:{A wavy plate is still a plate.|I believe in your handles.|That's how you know it's serious.}"},
	{"u:{How's the new job treating you?|Still liking work?|Is work still good?}", "a:{Really well. Nice people, interesting projects.|Busy, but the good kind of busy.|Yes! Though the coffee is worse than at my old place.}", "u:{I'm so glad.|That's the best kind.|Priorities, Jonas.}"},
	{"x:{Did you see the news about the trains?|Public transport was a disaster today.|My commute took twice as long this morning.}", "y:{Ugh, yes. Everything was delayed here too.|Typical. There's always something.|Same here, roadworks everywhere.}", "x:{I'm going to start walking everywhere.|It's a miracle anyone gets to work on time.|At least I finished my podcast.}"},
	{"a:{Do you want to do a video call next week?|We should do a proper call soon, not just texts.|I miss hearing your voice, let's call soon.}", "u:{Yes please! Sunday evening?|Definitely. I'll check when I'm off.|Me too. Let's do it!}", "a:{Sunday works. It's a date.|Just tell me when.|Great, I'll bring snacks to my side of the screen.}"},
	{"u:{I've been trying to learn Swedish on an app.|Tack så mycket! See, I'm learning.|What does 'lagom' actually mean?}", "a:{Oh no. What have you learned so far?|Very impressive. Your accent is perfect in text form.|Not too much, not too little. Just right.}", "u:{Mostly how to say the bear eats an apple.|I know.|That's my whole goal in life now.}"},
	{"x:{Is it just me or has this year gone really fast?|I can't believe it's already the middle of the month.|Where did this week go?}", "y:{It's flying. Slow down please.|I know, it's scary.|Honestly, no idea.}", "x:{Let's make the rest count.|We need more long weekends.|Tea and a deep breath, that's the answer.}"},
	{"a:{I cleaned my whole flat today and found a sock I lost in February.|I finally put up the shelves I bought months ago.|I reorganised my entire wardrobe by colour.}", "u:{Reunited at last!|Only months? That's fast for you.|Who are you and what have you done with Jonas?}", "a:{It was under the sofa with three coins and a pen.|Progress, not perfection.|I had a burst of energy. It won't last.}"},
	{"u:{My neighbour is learning the trumpet.|The people upstairs are having a party every night.|The flat smells like paint from the building work next door.}", "a:{Oh no. How good is he?|On a weeknight?|Open all the windows!}", "u:{He knows one song. One.|Every night. I'm getting earplugs.|It's freezing but I'm doing it.}"},
}

// friendsStories are the longer messages of the chat: one friend tells a
// small story, the other reacts.
var friendsStories = [][]string{
	{"u:{Okay, I have to tell you about my shift.|You won't believe the day I had.} An elderly gentleman on the ward decided at three in the morning that he was going home, put his coat on over his gown, and marched to the lift. I found him chatting to the security guard about the war, completely charming, absolutely refusing to go back to bed until someone made him a proper cup of tea. {Milk, two sugars, in a real mug.|He wanted it in a china cup, not a plastic one.} He drank it, thanked us all, and slept like a baby.", "a:{That's the most wholesome escape attempt I've ever heard of.|Honestly, respect. A man who knows what he wants.} {Did he remember it in the morning?|I hope you got a cup of tea too.}", "u:{Not a thing. He asked me why I looked so tired.|I did, eventually. Cold, but I drank it.}"},
	{"a:{So a funny thing happened at work today.|Story time, because today was ridiculous.} We presented the new identity to a client, a very serious insurance company, and halfway through the presentation the projector switched to my colleague's desktop, which was a photo of his dog dressed as a lobster. {There was a long silence.|Nobody said anything for about five seconds.} Then the CEO asked if the lobster was available for the campaign. {We might actually use it.|I think we won the pitch because of that dog.}", "u:{I am crying. A lobster dog!|This is the best thing I've heard all week.} {Please tell me you have a copy of the photo.|Your colleague deserves a raise.}", "a:{It's my phone background now.|He's been unbearable all afternoon.}"},
	{"u:{I went up Calton Hill for the sunset yesterday.|Walked all the way along the Water of Leith on Sunday.} {It was one of those evenings where the whole city goes pink and gold and everyone stops talking for a minute.|The light through the trees was ridiculous, and there were herons just standing around like they owned the place.} {I sat on a bench and didn't look at my phone for an hour, which for me is a medical miracle.|I bought a coffee from a van and felt like a character in a film.}", "a:{That sounds so lovely. I miss Edinburgh light.|That's exactly what you needed after the last few weeks.} {We used to do that in second year, remember? Wine in paper cups.|You should do that every week.}", "u:{I remember. The wine was terrible.|I'm going to try. No promises.}"},
	{"a:{I've been thinking a lot about whether I want to stay in Gothenburg long term.|Had a long talk with my brother about the future last night.} {Everything here is good, but sometimes I wonder if I'm just comfortable rather than happy.|He thinks I'm too cautious, that I always pick the safe option.} {I don't even know what the alternative would be. Another city? Freelancing? A cabin in the woods?|Maybe he's right. Maybe I like safe. Is that so bad?}", "u:{I don't think comfortable and happy have to be different things.|Safe isn't bad! Safe is underrated.} {You've built a really good life there. It's okay to enjoy it.|But if something excites you, you should at least look at it.}", "a:{Thanks. I needed to hear that.|You always know what to say, you know that?}", "u:{I'm a nurse. It's basically my job.|I learned from the best. You.}"},
	{"u:{My landlord finally came to look at the boiler.|Long story, but I spent the morning at the vet's.} {He stood there, looked at it for ten minutes, hit it twice with his hand, and it started working. Then he left without a word.|It turned out to be nothing serious, but I sat in the waiting room for two hours next to a very anxious parrot who kept saying hello to everyone.} {I don't know whether to be impressed or worried.|I've never been greeted so many times in my life.}", "a:{That's the most landlord thing ever.|The parrot is the real hero of this story.} {Maybe that's all it needed. Tough love.|Did it say anything else?}", "u:{Time will tell. I'm keeping my jumper on just in case.|Only 'hello' and 'good boy'. Over and over.}"},
	{"a:{I went to my first ever opera last night.|Went to a friend's birthday party in the archipelago at the weekend.} {I expected to be bored, but it was three hours and I didn't check my phone once. The singing was unreal, and the sets were enormous.|We took the little ferry out, there were lanterns in the trees, someone brought an accordion, and we swam at midnight in water that was definitely too cold.} {I even cried a bit at the end, don't tell anyone.|I got home at four and I regret nothing.}", "u:{Who are you and what have you done with my friend?|That sounds like a film!} {I love this for you.|Was the water really that cold?}", "a:{I'm cultured now. I'll be wearing a cape soon.|Freezing. My heart stopped for a second.}"},
	{"u:{My neighbour's kid asked me today if I'm a doctor.|I got my hair cut today and the hairdresser told me her life story.} {I said no, I'm a nurse, and she looked at me very seriously and said 'that's better, nurses are nicer'. I nearly cried in the stairwell.|Divorce, a new boyfriend, a dog that eats socks, a sister in Australia. Forty-five minutes. My hair looks great though.} {Children are the best critics.|I felt like I should have paid her extra for the drama.}", "a:{That kid is going places.|That's the best kind of haircut.} {Frame that quote.|Did you tell her your life story back?}", "u:{I'm putting it on my CV.|I told her about you. She thinks you sound lovely.}"},
	{"a:{I tried to bake bread for the first time in years.|Tried to make my grandmother's cardamom buns today.} {The recipe said 'knead until smooth', which I now understand is a lie, because after twenty minutes it was still a sticky monster attached to my hands, the counter, and somehow the cupboard door.|I called my mum three times for help, got flour on literally every surface, and the first tray came out like little rocks.} {The second attempt was actually really good though.|The kitchen looks like it snowed inside.}", "u:{I'm so proud of you for not giving up.|You have to send me a photo of the good ones.} {Flour everywhere is the sign of a real baker.|Your grandmother would be proud.}", "a:{I'll bring you some when I visit. The good ones.|She'd be laughing at me, honestly.}"},
	{"u:{We had a fire drill at work at the worst possible moment.|The whole building lost power for two hours today.} {Half the ward in wheelchairs, the other half in gowns, everyone out in the car park in the rain, and the alarm wouldn't stop.|Emergency lights, phones as torches, and we still had to do the drug round. It was like working in a submarine.} {Nobody was hurt, but I need a holiday.|Somehow everyone was very calm. Except me, on the inside.}", "a:{That sounds terrifying.|Nurses are superheroes, honestly.} {Are you okay?|I hope they gave you all cake afterwards.}", "u:{I'm fine. Tired. Going to bed early.|There was no cake. There is never cake.}"},
	{"u:{I finally did the big clear-out of my wardrobe.|I spent the whole day sorting out the spare room.|I went through all the boxes under my bed today.} {Four bags for the charity shop, one bag of things I can't explain, and a jacket I'd forgotten I owned that still had a ten-pound note in the pocket.|I found my old diaries from when I was fifteen and read them all instead of cleaning. I was so dramatic. Every entry is about a boy called Craig.|I found our old uni photos, the letters you sent me from your exchange year, and a mixtape with your terrible handwriting on it.} {Best day ever, financially.|I'm burning them. Or publishing them.|I sat on the floor and laughed for an hour.}", "a:{Ten whole pounds! You're rich.|Craig! I need to know more about Craig.|Oh no, not the mixtape. Track four was a crime.} {Treat yourself.|Did Craig ever notice you?|I stand by track seven though.}", "u:{Already spent it on a fancy coffee.|He moved to Aberdeen and became a dentist. Dodged a bullet.|Track seven still slaps, to be fair.}"},
	{"a:{My dad came to visit and we spent the whole weekend fixing his car.|My brother and I went fishing with my dad last weekend.|My parents came for dinner and my mum reorganised my kitchen.} {He insisted we didn't need a mechanic. We needed a mechanic. We got one on Sunday afternoon after he'd tried everything, including talking to the engine.|We caught absolutely nothing for six hours, drank far too much coffee from a flask, and my dad told the same story about the pike from 1987 three times.|Every spice is now in alphabetical order and I can't find anything. She also left a note on the fridge telling me to eat more vegetables.} {It was actually lovely though.|Best day I've had in ages.|I secretly love it.}", "u:{That sounds so nice. Parents are the best and the worst.|I love your family so much.|Your mum is a legend.} {Did the car survive?|Was the pike story good at least?|Listen to her about the vegetables.}", "a:{Barely. Like my patience.|It gets bigger every time. The pike is now the size of a canoe.|I bought a cucumber. Baby steps.}"},
	{"u:{Today a little girl on the children's ward gave me a drawing.|One of my patients went home today after three months.|We had a patient's birthday on the ward today.} {It's me, apparently, with enormous hands, a tiny head, and a rainbow coming out of my pocket. She said it's because I always have stickers.|He's been with us since the winter and everyone came to wave him off. His wife brought us a cake the size of a car tyre.|We found a candle, someone sang, and the whole bay joined in, even the man who hasn't said a word all week.} {It's on my fridge now.|I had to hide in the sluice room for a minute because I was crying.|Some days this job is the best thing in the world.}", "a:{That's so lovely.|Oh, Maya. That's beautiful.|This is why you do it.} {The rainbow pocket is so accurate.|You deserve that cake more than anyone.|Hold on to days like that.}", "u:{I'm keeping it forever.|The cake was excellent, I had two slices.|I will. They make up for the bad ones.}"},
	{"a:{So I got stuck in a lift at work for forty minutes today.|I locked myself out of my flat last night.|My phone fell in the harbour this morning. Well, almost.} {Me, two people from accounts, and a man carrying a huge plant. We ended up talking about our childhood pets and now we're friends, I think.|I had to wait for a locksmith sitting on the stairs in my slippers, and my neighbour brought me a blanket and a cup of tea like I was a stray dog.|It slipped out of my hand on the pier, bounced off a rope, and landed on the very edge of a boat. A fisherman handed it back to me without saying a word.} {Strangely, the best meeting I've had all week.|I've never felt more like a lost child.|I think I used up all my luck for the year.}", "u:{That's such a Jonas thing to happen.|Oh no, poor you.|Hahaha, I can picture it perfectly.} {Did the plant survive?|At least you have nice neighbours.|The fisherman sounds like a wise man.}", "a:{The plant is fine. The plant is thriving.|She's the best. I owe her biscuits.|He nodded at me like he'd seen it a hundred times.}"},
	{"u:{I signed up for a night-time charity walk.|My friends have talked me into a ceilidh on Saturday.|I've been asked to give a talk to the new student nurses.} {Twenty-six miles through the city, starting at midnight. I don't know what I was thinking, but it's for the hospice and they were so good to my gran.|I haven't danced since the office party in 2019, and we don't talk about the office party in 2019.|Fifteen minutes about what the job is really like. I keep rewriting it because the honest version has too much swearing.} {Training starts tomorrow.|I'm going to be stepping on everyone's toes.|I'm more nervous than I was on my first shift.}", "a:{That's a wonderful reason. I'll sponsor you.|You'll be great. Nobody can dance at a ceilidh anyway, that's the point.|You'll be brilliant. Keep some of the swearing.} {Send me the link.|I remember the 2019 party. I was there in spirit.|They're lucky to have you.}", "u:{Sending it now. Thank you!|We do not speak of it.|Thanks. I'll tell you how it goes.}"},
	{"a:{We had our team day out on a tiny island.|Our studio went to a design conference in Copenhagen.|We had a workshop with the whole company about 'creativity'.} {Kayaking in the morning, which I was bad at, a barbecue, and then a very competitive quiz where I knew every capital city and nothing else.|Two days of talks, most of them about fonts, one very good one about maps, and a party on a boat where someone fell into the canal. Not me.|A man with a ponytail made us build towers out of spaghetti and marshmallows. Our tower was the tallest, and then it fell on the CEO's shoe.} {Our team came second.|I came home with a bag full of free tote bags.|I have never been prouder.}", "u:{Capital cities will never let you down.|Who fell into the canal?|The spaghetti tower champion!} {Was the kayaking that bad?|Please tell me it was someone important.|Put that on your CV.}", "a:{I went in circles for most of it.|A very important art director. He was fine.|It's my greatest achievement.}"},
	{"u:{My flatmate has a new boyfriend who is always here.|There's a new guy on the ward who is very good-looking and everyone is being weird about it.|I've been set up on a date by my colleague.} {He's nice, but he sings in the shower, loudly, and only musicals. This morning it was the whole of Les Mis.|Half the nurses have started wearing mascara to night shift and the other half are pretending not to notice.|He's a physio, likes hillwalking, and apparently owns a kayak. My colleague described him as 'fine', which is not a strong recommendation.} {I now know all the words.|I'm staying out of it. Mostly.|We're meeting for coffee on Thursday.}", "a:{Honestly that's quite impressive.|Ha, hospital drama!|Ooh, exciting!} {Does he take requests?|Are you wearing mascara?|Report back immediately.}", "u:{I asked for something short. He did Phantom.|No comment.|I will. It'll probably be a disaster.}"},
	{"a:{I tried to go to bed early every night this week as an experiment.|I gave up coffee for a week as an experiment.|I tried to go a whole weekend without my phone.} {I managed two nights, then I watched a documentary about octopuses until one in the morning. Did you know they have three hearts?|Day one, headache. Day two, headache and sadness. Day three, I was a new man. Day four, I had a coffee.|I lasted until Saturday lunchtime, when I needed to check the opening times of the bakery, and then suddenly it was Sunday night and I'd read the whole internet.} {Science is hard.|I think I'll stick to one a day now.|I have no self-control and I accept it.}", "u:{Three hearts! That's too many hearts.|That's actually not bad.|Nobody can do it. The bakery is always a trap.} {Octopuses are clever.|One a day sounds healthy.|Try again next month.}", "a:{Smarter than me, definitely.|Two on Mondays.|Maybe. Probably not.}"},
	{"a:{I've been going to a Swedish class for people who think they're bad at Swedish.|Started volunteering at the food bank on Thursday evenings.} {It's me, a retired sea captain, two students, and a woman who only wants to talk about her garden. Somehow it works.|It's two hours of sorting cans and bread, and then everyone sits together and has coffee. Some of the regulars have been doing it for years.} {I think I like it more than I expected.|It makes the rest of the week feel more real.}", "u:{That's lovely. Good for you.|That's so you. You've always been like that.} {Tell me more about the sea captain.|Is it busy?}", "a:{He has a story for every occasion. Most involve a storm.|Busier every month, which is a bit sad.}"},
}
