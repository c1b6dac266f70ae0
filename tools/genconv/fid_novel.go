package main

import (
	"strings"
	"time"
)

// writeNovel is a creative collaboration over most of a year: an author,
// Ingrid, plans and drafts a historical novel (a lighthouse keeper's
// widow on the Yorkshire coast in the 1890s) with a writing assistant.
// Much of the text is the assistant's draft prose and line edits; the
// facts — side characters' names, backstory, plans, numbers, the
// author's own milestones — are settled once in conversation and asked
// about much later.
func writeNovel(g *gen) {
	g.conv = "conv-novel-ingrid"
	g.prefix = "nov"
	g.now = time.Date(2024, 1, 15, 19, 3, 22, 150_000_000, time.UTC)
	g.system("You are Quill, a writing assistant. You help Ingrid Halvorsen plan, draft and revise her historical novel: brainstorm, draft scenes in her voice when she asks, give honest line edits, and keep track of the decisions she makes about characters, plot and schedule.")

	n := &novel{g: g}
	d := newDeck(g, len(novelCraft))
	s := &storyline{g: g, minGap: 6, maxGap: 16, fromHour: 8, toHour: 19, fillLo: 2, fillHi: 4, tailLo: 4, tailHi: 6,
		filler: func() {
			switch g.intn(5) {
			case 0, 1:
				n.draft()
			case 2:
				n.edit()
			default:
				g.talk(novelCraft[d.draw()]...)
			}
		},
		opening: func(k int) {
			g.chat("u:{Evening, Quill.|Hi Quill, back at the desk.|Morning! Coffee's made, let's write.|Hello again. Short session today.} {Where did we leave Edith?|Let's keep going with the draft.|I have some notes from my walk.|I want to work on the middle chapters.}",
				"a:{Welcome back, Ingrid.|Good to see you.|Hello Ingrid!} {Last time Edith was alone in the lamp room with the storm coming in.|We stopped in the middle of the harbour scene.|Shall I recap the open threads first?|Ready when you are.}")
		},
		closing: func(k int) {
			g.chat("u:{That's enough for today, my eyes are done.|Good session. I'll sleep on it.|Stopping here, I need to cook.|Thank you, that helped a lot.}",
				"a:{Rest well. I'll keep the notes for next time.|Good work today, Ingrid.|Enjoy your evening. The draft is in good shape.}")
		},
	}

	var agentID string
	s.run([][]func(){
		{ // 1: the premise
			func() {
				g.user("Here's the premise: 1898, a fishing village on the Yorkshire coast. Edith Marrow, a lighthouse keeper's widow, keeps the light burning after her husband drowns, and discovers the harbour's books hide a smuggling ring.")
				g.assistant("That's a strong engine: a woman doing a man's job in plain view, and a secret kept in plain ink. What does she want at the start, before the smuggling?")
				ev := g.user("She wants to keep the light, and the cottage with it. Oh, and she grew up in Whitby, the daughter of a jet carver, so she's an outsider in the village.")
				g.talk("a:The outsider angle helps: the village can doubt her without it being only about her being a woman.", "u:Exactly.")
				g.ask(catWhere, "Where did the main character grow up?", []string{"Whitby"}, ev)
			},
			func() {
				ev := g.user("Plan: 24 chapters, about 95,000 words. I write mornings before work.")
				g.talk("a:That's about 4,000 words a chapter. At your pace of roughly a thousand words a morning, a first draft in five or six months is realistic.", "u:Let's hope.")
				g.ask(catHowMany, "How many words is the finished book meant to have?", []string{"95,000 words"}, ev)
				g.ask(catHowMany, "Into how many chapters is the novel planned to be split?", []string{"24 chapters"}, ev)
			},
		},
		{ // 2
			func() {
				ev := g.user("Decision: we write it in first person, past tense, Edith telling it years later. I tried third and it felt cold.")
				re := g.talk("a:First person past gives you her older voice for free: she can know things the younger Edith doesn't. I'll draft in that voice from now on.")
				g.ask(catWhat, "Which narrative perspective did Ingrid choose for the book?", []string{"first person"}, ev, re[0])
			},
			func() {
				ev := g.user("Edith needs a companion in the tower. A dog: a scruffy grey lurcher called Tansy, who hates the foghorn.")
				g.talk("a:Lovely: a dog gives her someone to talk to, which saves us a lot of interior monologue.", "u:That was the plan.")
				g.ask(catWhat, "What is the name of the heroine's dog?", []string{"Tansy"}, ev)
			},
		},
		{ // 3
			func() {
				ev := g.user("I finished chapter one today! 4,212 words, and Edith is already on the gallery with the lamp lit.")
				g.talk("a:Congratulations! That's the hardest chapter done. Do you want me to read it for pacing?", "u:Next time. Today I celebrate.")
				g.askWhen("When was the opening chapter of Ingrid's book done?", []string{"chapter one"}, ev)
			},
		},
		{ // 4: the villain
			func() {
				ev := g.user("The villain: the harbour master, Silas Crane. Respected, a churchwarden, keeps the books himself. Nobody looks at the books.")
				g.talk("a:The respectable villain works well with the ledger: his power is paperwork. He should be kind to her at first.", "u:Yes, kind and patronising.")
				g.ask(catWho, "Who is the bad guy of the story?", []string{"Silas Crane"}, ev)
			},
		},
		{ // 5: what is smuggled
			func() {
				ev := g.user("What's being smuggled: French brandy, landed at night in the coves and hidden in the lifeboat house, of all places.")
				g.talk("a:Hiding contraband in the lifeboat house is wonderfully cynical: the one building nobody would suspect.", "u:I thought so too.")
				g.ask(catWhat, "What goods are the smugglers bringing ashore?", []string{"brandy"}, ev)
			},
			func() {
				ev := g.user("Backstory detail: her husband drowned when the Margaret Ellen went down in the gale of 1896, trying to reach the crew in the coble.")
				g.talk("a:So the village's lifeboat failed him? That gives the lifeboat house a second meaning.", "u:Ooh. Yes.")
				g.ask(catWhat, "What was the name of the ship whose wreck killed Edith's husband?", []string{"Margaret Ellen"}, ev)
			},
		},
		{ // 6: agent
			func() {
				agentID = g.user("My literary agent, Priscilla Vance, read the outline and loves it. She wants the first three chapters by the end of April.")
				g.talk("a:That's wonderful news. Three polished chapters by the end of April is very doable.", "u:I'm nervous and thrilled.")
				g.ask(catWho, "Who represents Ingrid with publishers?", []string{"Priscilla Vance"}, agentID)
			},
		},
		{ // 7
			func() {
				ev := g.user("Edith is forty-one at the start of the book. Old enough that the village calls her 'the widow', young enough that they expect her to remarry.")
				g.talk("a:That age tension is useful; someone should propose to her for the cottage, not for love.", "u:Ha, yes. Put it on the list.")
				g.ask(catHowMany, "How old is the main character when the story begins?", []string{"forty-one"}, ev)
			},
		},
		{ // 8
			func() {
				ev := g.user("Sent the three chapters to my agent this morning. Now I'm going to refresh my inbox for a week.")
				g.talk("a:Well done! Try to write chapter four while you wait; it helps.", "u:That's the plan.")
				g.askWhen("When did Ingrid send the opening chapters off?", []string{"three chapters"}, ev)
			},
		},
		{ // 9
			func() {
				ev := g.user("My sister-in-law Runa reads every chapter before you do, she's brutal in the best way.")
				g.talk("a:A brutal first reader is a gift. Does she read for plot or for sentences?", "u:Plot. She circles every boring paragraph.")
				g.ask(catWho, "Who reads each chapter first?", []string{"Runa"}, ev)
			},
		},
		{ // 10
			func() {
				ev := g.user("I'm writing from a rented cottage on Fair Isle this week. No internet except the café, wind like a freight train. Perfect for chapter twelve.")
				g.talk("a:That's the perfect place to write a storm. Want me to help you outline the chapter?", "u:Yes please.")
				g.ask(catWhere, "Where did Ingrid go to write on her own for a week?", []string{"Fair Isle"}, ev)
			},
		},
		{ // 11
			func() {
				ev := g.user("Progress report: 52,300 words. More than halfway!")
				g.talk("a:That's a big milestone. The middle is where most drafts die; you're past it.", "u:Feels like it.")
				g.ask(catHowMany, "How many words had Ingrid written when she passed the middle of the draft?", []string{"52,300"}, ev)
			},
		},
		{ // 11b
			func() {
				ev := g.user("I've decided her drowned husband's name: Tobias. Short, solid, a bit stubborn, like him.")
				g.talk("a:It suits a man who went out in a coble in a gale. I'll use it from now on in notes.", "u:Good.")
				g.ask(catWhat, "What was Edith's late husband called?", []string{"Tobias"}, ev)
			},
		},
		{ // 11c
			func() {
				ev := g.user("Research answer from the museum: a lamp like hers burned about four gallons of paraffin on a long winter night. She'd be hauling it up every day.")
				g.talk("a:That's a brutal detail for the reader to feel in her arms. Use it in the winter chapter.", "u:Definitely.")
				g.ask(catHowMany, "How much fuel did the lamp use on a winter night?", []string{"four gallons"}, ev)
			},
		},
		{ // 11d
			func() {
				ev := g.user("The boy who sees the lantern on the cliff path needs a name. Let's call him Jack Storr, the blacksmith's son.")
				re := g.talk("a:Jack Storr works: local surname, short, easy to shout across a beach.", "u:Ha, that's the test.")
				g.ask(catWho, "Who is the child who spots the light on the cliff at night?", []string{"Jack Storr"}, ev, re[0])
			},
		},
		{ // 11e
			func() {
				ev := g.user("I bought a real 1890s keeper's hand lamp at an antiques fair today! It's on my desk now, smelling faintly of old oil.")
				g.talk("a:What a talisman for the rest of the draft.", "u:I keep touching it.")
				g.askWhen("When did Ingrid buy the old lamp for her desk?", []string{"antiques fair"}, ev)
			},
		},
		{ // 12: climax location
			func() {
				ev := g.user("I know where the climax happens: in the flooded smugglers' cave under the cliff at Kettle Ness, at the spring tide, with Edith's lamp the only light.")
				g.talk("a:A lamp keeper fighting in the dark with one lamp: the image does a lot of thematic work.", "u:I got chills writing the note.")
				g.ask(catWhere, "Where does the final confrontation take place?", []string{"Kettle Ness"}, ev)
			},
		},
		{ // 13
			func() {
				ev := g.user("I FINISHED THE FIRST DRAFT. 97,480 words. I'm crying into my tea.")
				g.talk("a:Ingrid! Congratulations! That's a whole novel. Let it rest for two weeks before you reread it.", "u:I'll try. No promises.")
				g.askWhen("When was the whole first draft completed?", []string{"FIRST DRAFT"}, ev)
			},
		},
		{ // 14: title
			func() {
				ev := g.user("Priscilla suggests a new title: 'A Light Left Burning'. I think I love it?")
				g.talk("a:It's warmer than the old one and says more about Edith. I like it a lot.", "u:Then that's the title.")
				g.ask(catWhat, "What new name was proposed for the book?", []string{"A Light Left Burning"}, ev)
			},
		},
		{ // 15
			func() {
				ev := g.user("We have an offer! Harrow & Finch want the book, two-book deal, and an advance of £18,000.")
				g.talk("a:That's wonderful! Congratulations, Ingrid. Two books!", "u:I keep reading the email again.")
				g.askWhen("When did a publisher want to buy the book?", []string{"offer"}, ev)
				g.ask(catHowMany, "How much money will Ingrid get up front?", []string{"£18,000"}, ev)
				g.ask(catWho, "Which publisher wants the novel?", []string{"Harrow & Finch"}, ev)
			},
		},
		{ // 16
			func() {
				ev := g.user("The cover will be done by Tomek Zielinski, the illustrator who did those woodcut covers I showed you.")
				g.talk("a:Woodcut will suit the period perfectly.")
				g.ask(catWho, "Who is designing the front of the book?", []string{"Tomek Zielinski"}, ev)
			},
		},
		{ // 17
			func() {
				ev := g.user("Publication date is set: the book comes out in spring, and the launch party will be at the Grove bookshop in Ilkley.")
				g.talk("a:A launch in a bookshop near home is lovely. I hope you'll read the lamp-room scene.", "u:That's the one I'll read.")
				g.ask(catWhere, "Where will the book be celebrated when it comes out?", []string{"Ilkley"}, ev)
			},
		},
		{ // 18
			func() {
				g.user("Edits from the publisher arrived. Mostly small, but they want chapter nine shorter.")
				g.assistant("Chapter nine is the long village council scene; we can cut the second speech and fold the vote into Edith's narration.")
			},
		},
	})
	_ = agentID
}

// novel writes the routine of the workshop: drafts, edits, craft talk.
type novel struct{ g *gen }

var (
	novelSetting = []string{
		"The wind came off the sea in long grey ropes and wound itself around the tower.",
		"Below the cliff the tide was turning, slow and heavy, dragging the shingle with it.",
		"Rain ran down the lantern glass in sheets, and the beam swung out through it like a slow arm.",
		"The village lay folded into the ravine, its roofs wet and dark, its chimneys smoking.",
		"A gull hung above the gallery rail without moving, as if the gale held it on a string.",
		"The harbour smelled of tar and fish guts and the cold iron of the chains.",
		"Fog had come in at dusk, thick enough to swallow the end of the pier.",
		"The lamp room was warm with paraffin and brass, a small bright world above the dark.",
		"Frost had whitened the path to the tower, and every step rang on it.",
		"The cobles were drawn up on the slipway, their painted hulls dull in the grey light.",
		"Out past the scaur the breakers were white even in the dark.",
		"The church bell rang for evensong, thin and far away against the surf.",
	}
	novelAction = []string{
		"Edith trimmed the wick and wiped the soot from the chimney glass, the way he had shown her.",
		"She wound the clockwork that turned the lens, counting the turns under her breath.",
		"Edith wrote the hour and the weather in the log in her small careful hand.",
		"She climbed the hundred and twelve steps with the oil can knocking against her knee.",
		"Edith stood at the gallery rail and watched the lights of the boats come home one by one.",
		"She pulled her shawl tighter and did not look at the sea where he had gone.",
		"Edith set the kettle on the stove and listened to the tower creak around her.",
		"She opened the harbour ledger again and ran her finger down the columns of tonnage.",
		"Edith walked down to the staithes with her basket, feeling the village watching.",
		"She found the door of the lifeboat house unlatched, which it never was.",
		"Edith counted the barrels on the slipway and then counted them again.",
		"She knelt by the stove and fed it driftwood until her hands stopped shaking.",
	}
	novelDialogue = []string{
		"\"You'll not manage the light through the winter,\" the vicar said, not unkindly.",
		"\"The Board sends its regards and its doubts,\" the inspector said, folding his gloves.",
		"\"My husband kept this light for eleven years,\" Edith said. \"I kept it with him.\"",
		"\"Nobody reads the harbour books, Mrs Marrow,\" said the clerk. \"Nobody needs to.\"",
		"\"There's weather coming,\" old Mr Pybus said, and spat into the tide.",
		"\"I saw a lantern on the cliff path,\" the boy whispered. \"At two in the morning.\"",
		"\"It's not your business what comes in on the tide,\" the fisherman said.",
		"\"Keep the light, then,\" her mother-in-law said. \"See what it costs you.\"",
	}
	novelThoughts = []string{
		"I did not know then how much a column of figures could hide.",
		"I have told this story many times since, and it never gets easier to tell.",
		"It was the first night I understood that the light was mine now, and so was the dark around it.",
		"Looking back, I should have been afraid sooner.",
		"I was forty years in that village and never stopped being the woman from away.",
		"Grief is a kind of weather. You learn to read it, or it drowns you.",
	}
)

// draft is the assistant drafting a passage on request.
func (n *novel) draft() {
	g := n.g
	g.user(g.fill("{Can you draft|Could you try|Please write} {the next scene|a short passage|the opening of the next chapter|a version of the storm scene|the scene where Edith checks the ledger} {in Edith's voice|in her voice|}{, around 300 words|, short|}?"))
	var b strings.Builder
	paras := g.between(2, 3)
	for p := 0; p < paras; p++ {
		if p > 0 {
			b.WriteString("\n\n")
		}
		sents := []string{g.pick(novelSetting...), g.pick(novelAction...)}
		if g.chance(0.6) {
			sents = append(sents, g.pick(novelDialogue...))
		}
		sents = append(sents, g.pick(novelAction...))
		if g.chance(0.5) {
			sents = append(sents, g.pick(novelSetting...))
		}
		if g.chance(0.5) {
			sents = append(sents, g.pick(novelThoughts...))
		}
		b.WriteString(strings.Join(sents, " "))
	}
	g.assistant(g.fill("{Here's a draft:|Here's a first pass:|Try this:|A version for you to cut up:}\n\n") + b.String())
	g.user(g.sprinkle([]string{
		"I like the second paragraph a lot. The first is a bit slow.",
		"Good. I'll rewrite it in my words, but the rhythm is right.",
		"Too many weather sentences. Cut one and keep the rest.",
		"The dialogue line is perfect, I'm stealing it.",
		"Hmm, she sounds too calm here. She should be angrier.",
		"Yes! That's the tone.",
		"Nice. Can you make the ending sharper next time?",
	}))
	if g.chance(0.5) {
		g.assistant(g.sprinkle([]string{
			"Agreed. Start with the action and let the weather come in through it.",
			"Good instinct: anger makes her more active here.",
			"Rewriting in your words is exactly right; treat mine as scaffolding.",
			"Noted. I'll end on an image rather than a thought next time.",
		}))
	}
}

// edit is a line edit of a sentence of Ingrid's.
func (n *novel) edit() {
	g := n.g
	line := g.pick(novelAction...)
	g.user("Line edit please: " + line + " " + g.pick(novelThoughts...))
	g.assistant(g.fill("{Two small things|A couple of notes|Mostly good}: {cut 'the way he had shown her' if you've used it already this chapter|consider breaking it into two sentences for pace|the second sentence tells what the first shows, so you could cut it|'careful' is doing a lot of work; a concrete detail would be stronger}. {Otherwise it reads well.|The voice is right.|Keep the rhythm.}"))
	if g.chance(0.4) {
		g.user(g.pick("Fair.", "Good catch.", "I'll keep it as it is, I like the redundancy there.", "Done."))
	}
}

// novelCraft are the conversations about writing, research and life
// around the drafting.
var novelCraft = [][]string{
	{"u:{How did lighthouse keepers actually keep time?|What did keepers write in the log?|How often did they wind the clockwork?}", "a:{They kept a clock in the lamp room and logged the lighting and extinguishing times, the weather, and passing ships.|Logs recorded the hours of lighting, the weather each watch, ships sighted and any fault in the apparatus.|The clockwork that turned the lens needed winding every few hours through the night, which is why keepers rarely slept a full night.}", "u:{That's a great detail for the night scenes.|Perfect, that goes in the next chapter.|Poor woman. No sleep for a year.}"},
	{"u:{I'm stuck on the middle. Everything feels like walking from one room to another.|My chapter has no tension today.|Why is this scene so flat?}", "a:{Give every scene a question the reader wants answered by its end, and answer it late or with a twist.|Ask what Edith wants in this scene and who stops her. If nobody stops her, cut or merge the scene.|Try starting the scene later and ending it earlier; the flatness is usually in the edges.}", "u:{That's useful. I'll try it.|Nobody stops her. You're right.|Ugh, yes. Cutting the first page.}"},
	{"u:{What did fishermen's wives do in the 1890s?|How did the herring season work then?|What's a coble, exactly? I keep using the word.}", "a:{They baited lines, gutted and packed fish, mended nets, and sold the catch; the work was constant.|The herring came down the coast in summer and autumn, and whole families followed the fleet, gutting on the quays.|A coble is the flat-bottomed, high-bowed open boat of the north-east coast, launched from the beach, built to land through surf.}", "u:{I need more of that in the village scenes.|I'll have the herring girls arrive in chapter ten.|Good, I've been using it right, then.}"},
	{"u:{My day job is eating my writing time.|Work was awful and I have no words left.|I only wrote 200 words this week.}", "a:{Two hundred words is still forward. Can you protect one morning this weekend?|Tired days are for notes, not prose. Jot three things that happen next and stop.|Some weeks are like that. The draft is patient.}", "u:{Saturday morning, phone off. Deal.|Notes I can do.|Thanks, I needed to hear that.}"},
	{"u:{Should the chapters have titles?|Do I need a prologue?|Is it ok to open with a funeral?}", "a:{Titles suit this book's period feel; short ones, like entries in a log.|Only if it does something the first chapter can't. Yours might not need one.|It's a classic for a reason, but start it at the graveside moment that shows who Edith is, not with the weather.}", "u:{Log-entry titles, I love that.|I'll cut it and see if anything's lost.|Good point, I'll trim the opening.}"},
	{"u:{How do I write a storm without it being a cliché?|Every storm in fiction sounds the same.|I keep writing 'the wind howled'.}", "a:{Write what the storm does to objects and people: the shutters, the cold in the teeth, the lamp flickering.|Use the keeper's eye: she'd notice the barometer, the lens, the sound of the fog bell.|Swap the howl for specifics: a window that rattles in a rhythm, or the silence between gusts.}", "u:{The barometer! That's good.|Concrete things. Got it.|I'll ban 'howled' from the manuscript.}"},
	{"u:{I went to the coast at the weekend for research.|I visited a lighthouse museum on Saturday.|Spent Sunday in the county archive.}", "a:{How was it? Anything you can use?|Did you get to see a working lens?|Find anything useful in the records?}", "u:{The sound of the shingle at night, I recorded it on my phone.|Yes, and the keeper's log from 1894 was on display. Beautiful handwriting.|A list of wrecks on the coast for the 1890s. So many.}"},
	{"u:{Is my villain too obvious?|Can the reader guess the twist too early?|How much should Edith suspect by chapter ten?}", "a:{Give him one genuinely good act early, so the reader doubts their suspicion.|Plant the clue in a list of other details so it hides in plain sight.|She should suspect the books but not the man; let her trust him longer than the reader does.}", "u:{A good act. He could help at the funeral.|A list, like in the ledger. Nice.|Yes, that's painful in the right way.}"},
	{"u:{I've been reading other lighthouse novels and now I feel like a fraud.|Everyone else writes better than me.|I read a great novel and now I hate my sentences.}", "a:{Comparison is normal in the middle of a draft. Yours is the only one with Edith in it.|Read for what they do, not to measure yourself. Which scene stayed with you?|That feeling means your taste is ahead of your draft, which is how it should be.}", "u:{Thanks. Back to work.|The one with the fog. I'll study it.|Ok. I'll keep going.}"},
	{"u:{What's a realistic word count for a historical novel?|How long should my chapters be?|Should I worry about length now?}", "a:{Most land between 80,000 and 110,000 words; the story decides the rest.|As long as the scene needs; variety helps pacing, so a few short ones are good.|Not in the first draft. Length is an editing problem.}", "u:{Good, I'm in the range.|Variety, ok.|Phew.}"},
	{"u:{My cat sat on the keyboard and deleted a paragraph.|I spilled tea on my notebook.|The power went out in the middle of my writing session.}", "a:{Was it a good paragraph?|Oh no. Is it readable?|Atmospheric, at least. Candlelight for a lighthouse book.}", "u:{It was, and I rewrote it better, so thank you cat.|Mostly. The tea stains look period-appropriate.|I wrote by candle for an hour. It was wonderful.}"},
	{"u:{How did the lifeboat service work back then?|Who paid for lifeboats in the 1890s?|How many men crewed a rowing lifeboat?}", "a:{Local crews, mostly fishermen, volunteered; the institution provided the boat and paid per launch.|The national institution funded boats and stations through donations; crews were local volunteers.|Usually ten to fourteen oarsmen plus a coxswain; launching through surf took the whole village.}", "u:{Volunteers, so the village is responsible. Good.|Donations, I can use that for the fête scene.|The whole village on the beach, that's my climax image.}"},
}
