package main

import (
	"fmt"
	"time"
)

// writeHousehold is a family's personal assistant over most of a year:
// Tomás (the user) plans money, buys a house, renovates the kitchen and
// moves, with the assistant keeping budgets, quotes and appointments.
// Numbers dominate (rents, quotes, rates, counts), between the everyday
// requests of a household: meal plans, reminders, shopping lists.
func writeHousehold(g *gen) {
	g.conv = "conv-household-herrera"
	g.prefix = "hh"
	g.now = time.Date(2025, 1, 12, 18, 30, 2, 901_000_000, time.UTC)
	g.system("You are Juniper, the household assistant of the Herrera family (Tomás, his partner Lena, their children Mateo, 9, and Sofía, 6) in Munich. You help with budgets, paperwork, appointments, meal plans and projects. Tools: calendar_add(title, date), budget_report(month), search_web(query). Keep track of the figures and decisions they tell you; be practical.")

	hh := &household{g: g}
	d := newDeck(g, len(householdChat))
	s := &storyline{g: g, minGap: 8, maxGap: 18, fromHour: 6, toHour: 19, fillLo: 4, fillHi: 5, tailLo: 7, tailHi: 10,
		filler: func() {
			switch g.intn(5) {
			case 0:
				hh.meals()
			case 1:
				hh.budget()
			default:
				g.talk(householdChat[d.draw()]...)
			}
		},
		opening: func(k int) {
			g.chat("u:{Hi Juniper.|Evening Juniper!|Hey Juniper, kids are in bed.|Morning Juniper, quick one before work.} {Got a few things.|Can we go through some stuff?|Need your help with a couple of things.|Let's do the weekly admin.}",
				"a:{Hi Tomás! Of course.|Evening, Tomás. Ready when you are.|Hello! What's first?|Sure thing. Go ahead.}")
		},
		closing: func(k int) {
			g.chat("u:{That's it, thanks!|Great, that's everything for now.|Thanks Juniper, you're a lifesaver.|Ok, going to bed. Thanks!}",
				"a:{You're welcome. Good night!|Anytime, Tomás.|Happy to help. Say hi to Lena!}")
		},
	}

	s.run([][]func(){
		{ // 1: the plan
			func() {
				ev := g.user("New year, new plan: we want to buy a house this year. We pay €1,450 a month in rent right now, and we have saved €62,000 towards a deposit.")
				re := g.talk("a:Good starting point. With €62,000 saved you can cover roughly a 10% deposit plus the purchase costs on a house up to about €480,000. What's your monthly budget for a mortgage payment?", "u:We'd like to stay under €2,100 a month.")
				g.ask(catHowMany, "How much rent were the Herreras paying before they bought?", []string{"€1,450"}, ev)
				g.ask(catHowMany, "How much had the family put aside for the down payment?", []string{"€62,000"}, ev, re[0])
			},
		},
		{ // 2: bank
			func() {
				ev := g.user("We met the bank today. Our adviser is Ms Aylin Yilmaz at the Stadtsparkasse; she says pre-approval up to €430,000 is realistic.")
				g.talk("a:Great. I'll keep a folder for her checklist: payslips, tax assessments, proof of savings.", "u:Perfect.")
				g.ask(catWho, "Who advises the family at the bank?", []string{"Aylin Yilmaz"}, ev)
				g.ask(catHowMany, "Up to what amount could the family borrow according to the bank?", []string{"€430,000"}, ev)
			},
		},
		{ // 3: viewing
			func() {
				ev := g.user("We viewed a terraced house in Germering today. 118 m², a small garden, needs a new kitchen, asking €455,000. The kids already picked their rooms.")
				g.talk("a:Sounds promising. The new kitchen would need to come out of savings, so let's price that before you offer.", "u:Yes, let's.")
				g.askWhen("When did the family first go to see the house they ended up buying?", []string{"terraced"}, ev)
				g.ask(catWhere, "In which town is the house the family bought?", []string{"Germering"}, ev)
			},
		},
		{ // 4: offer
			func() {
				ev := g.user("Offer accepted at €441,000! Notary appointment is next month.")
				g.talk("a:Congratulations! I'll put the notary date in the calendar once you have it, and start a moving checklist.", "u:We're over the moon.")
				g.ask(catHowMany, "What price did the family agree to pay for the house?", []string{"€441,000"}, ev)
			},
			func() {
				ev := g.user("The mortgage is fixed for 15 years at 3.4% interest. Monthly payment €1,980.")
				g.talk("a:Under your €2,100 limit, good. I've added the payment to the budget from the month of the handover.", "u:Thanks.")
				g.ask(catWhat, "What rate did they lock in on the loan?", []string{"3.4%"}, ev)
			},
		},
		{ // 5: notary
			func() {
				ev := g.user("Signed at the notary this morning. Handover of the keys is in about two months.")
				g.calendar("Key handover, new house", g.now.AddDate(0, 0, 60).Format("2006-01-02"))
				g.talk("a:Big day! The handover is in the calendar.", "u:It feels real now.")
				g.askWhen("When did Tomás and Lena sign the purchase contract?", []string{"notary"}, ev)
			},
		},
		{ // 6: kitchen quotes
			func() {
				ev := g.user("We got three quotes for the kitchen. Cheapest €14,900 from a big store, Schreinerei Bauer €18,500 for solid wood, and a studio at €23,000. We like Bauer best.")
				re := g.talk("a:Bauer is in the middle on price and the only solid-wood option, which lasts. Can the budget carry €18,500?", "u:If we skip the new car, yes.")
				g.ask(catHowMany, "How much did the joiner the family preferred want for the kitchen?", []string{"€18,500"}, ev, re[0])
			},
		},
		{ // 7
			func() {
				ev := g.user("Decided: Schreinerei Bauer does the kitchen. The owner, Karl Bauer, will measure the room after the handover.")
				re := g.talk("a:Great. I'll note Karl Bauer's measuring appointment once you have a date.", "u:Thanks.")
				g.ask(catWho, "Who is building the new kitchen?", []string{"Karl Bauer"}, ev, re[0])
			},
			func() {
				ev := g.user("Worktop decision: oiled oak, and the fronts in a dark green. Lena won the colour debate.")
				re := g.talk("a:Oak and dark green sounds lovely. Oiled oak needs re-oiling about twice a year; I'll remind you.", "u:Please do.")
				g.ask(catWhat, "What material did they choose for the kitchen counter?", []string{"oiled oak"}, ev, re[0])
			},
		},
		{ // 8: school
			func() {
				ev := g.user("School question sorted: Mateo and Sofía will go to the Kreuzlinger Grundschule from September, it's a ten-minute walk from the new house.")
				g.talk("a:Perfect. I'll look up the registration deadline and the documents they need.", "u:Thanks.")
				g.ask(catWhere, "Which primary school will the children attend after the move?", []string{"Kreuzlinger Grundschule"}, ev)
			},
		},
		{ // 9: movers
			func() {
				ev := g.user("We booked the movers: Umzüge Schmid, moving day is the Saturday after the handover, 42 boxes according to their estimate, price €2,380.")
				g.talk("a:Booked in the calendar. I'll make a box labelling plan per room.", "u:Lena will love a labelling plan.")
				g.ask(catHowMany, "How many cartons did the removal firm expect?", []string{"42 boxes"}, ev)
				g.ask(catWho, "Which company is doing the move?", []string{"Umzüge Schmid"}, ev)
			},
		},
		{ // 10: handover
			func() {
				ev := g.user("We have the keys!! The previous owners left a bottle of wine and a note about the roses.")
				g.talk("a:Congratulations! What a lovely gesture. Shall I start the utilities checklist: electricity, gas, internet, address change?", "u:Yes please.")
				g.askWhen("When did the family get the keys to the house?", []string{"keys"}, ev)
			},
		},
		{ // 11: boiler
			func() {
				ev := g.user("Bad news: the boiler is older than we thought and failed the inspection. A new heat pump costs €16,200, minus a subsidy of €6,480.")
				g.talk("a:That's painful but the subsidy helps. Net about €9,720. We can take it from the kitchen reserve and delay the terrace.", "u:Ok, do the maths for me later.")
				g.ask(catWhat, "What replaced the old heating system?", []string{"heat pump"}, ev)
			},
		},
		{ // 12: moving day
			func() {
				ev := g.user("Moving day done. Everything is in, the kids are asleep on mattresses, and Lena found the coffee machine first thing.")
				g.talk("a:Well done! Priorities right there. Rest well.", "u:So tired. So happy.")
				g.askWhen("When did the Herreras move house?", []string{"Moving day"}, ev)
			},
		},
		{ // 13: kitchen installed
			func() {
				ev := g.user("The kitchen is in! Karl's team needed four days. The oak looks amazing.")
				g.talk("a:Congratulations! I'll set the first re-oiling reminder for six months from now.", "u:Great.")
				g.askWhen("When was the new kitchen finished?", []string{"kitchen is in"}, ev)
			},
		},
		{ // 14: car
			func() {
				ev := g.user("The old car finally died. We're leasing a used Škoda Enyaq, electric, €389 a month, since we'll have solar panels on the roof later.")
				g.talk("a:Noted, I'll add the lease to the monthly budget.", "u:Thanks.")
				g.ask(catWhat, "Which car did the family get after the old one died?", []string{"Škoda Enyaq"}, ev)
			},
		},
		{ // 15: babysitter
			func() {
				ev := g.user("We found a babysitter in the new neighbourhood: Greta Hoffmann, a student, Tuesdays and Thursdays after school.")
				g.talk("a:I'll add her to the contacts and the family calendar.", "u:Great.")
				g.ask(catWho, "Who looks after the kids twice a week?", []string{"Greta Hoffmann"}, ev)
			},
		},
		{ // 16
			func() {
				ev := g.user("Lena's parents are coming for Christmas, from Valencia. Five nights.")
				g.talk("a:The guest room will be ready by then. Should I look at flights for them?", "u:They book themselves, but thanks.")
				g.ask(catWhere, "Where do Lena's parents live?", []string{"Valencia"}, ev)
			},
		},
		{ // 17
			func() {
				ev := g.user("Summary of the house project please, but first: the final renovation total came to €31,870 with the kitchen, the heating and the painting.")
				g.talk("a:Thanks, that's the figure I'll use. Against the €36,000 you set aside, that's a bit over €4,000 left.", "u:Better than I feared.")
				g.ask(catHowMany, "What did all the work on the house cost in the end?", []string{"€31,870"}, ev)
			},
		},
		{ // 18
			func() {
				ev := g.user("Sofía's birthday party is at the trampoline park in Pasing this year, she invited eleven friends.")
				g.talk("a:Fun! I'll book the party room and send the invitations from the template.", "u:Thank you!")
				g.ask(catWhere, "Where is the younger child celebrating this year?", []string{"trampoline park"}, ev)
			},
		},
	})
}

// household writes the everyday requests.
type household struct{ g *gen }

func (g *gen) calendar(title, date string) {
	g.tool("", "calendar_add", fmt.Sprintf(`{"status":"added","title":%q,"date":%q}`, title, date), "title", title, "date", date)
}

// meals is a weekly meal plan on request.
func (h *household) meals() {
	g := h.g
	g.user(g.fill("{Can you make a meal plan for this week?|Dinner ideas for the week please.|Plan five dinners, something the kids will eat.}{| Budget is tight this week.| Lena is vegetarian this month.|}"))
	days := []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}
	dishes := g.pickDistinct(5, []string{"pasta with tomato and lentil sauce", "chicken and vegetable traybake", "lentil soup with bread", "homemade pizza night", "fish fingers with potato salad", "vegetable curry with rice", "pancakes with fruit", "chili sin carne", "Spätzle with cheese and onions", "tortilla with salad", "risotto with peas", "baked potatoes with quark"})
	out := "Here's a plan:\n"
	for i, d := range days {
		out += fmt.Sprintf("- %s: %s\n", d, dishes[i])
	}
	out += g.fill("{The shopping list comes to about €|Estimated groceries: around €|That should cost roughly €}") + fmt.Sprint(70+g.intn(50)) + g.fill("{.|, using what's in the pantry.|, if you buy the basics at the discounter.}")
	g.assistant(out)
	g.user(g.sprinkle([]string{"Perfect, thanks.", "The kids will love pizza night.", "Swap Thursday for something quicker?", "Great, send me the shopping list.", "Lena says thank you!"}))
	if g.chance(0.4) {
		g.assistant(g.pick("Done, the list is in your notes.", "Swapped: Thursday is now pasta with pesto, fifteen minutes.", "You're welcome!"))
	}
}

// budget is a monthly budget check.
func (h *household) budget() {
	g := h.g
	g.user(g.fill("{How are we doing on the budget this month?|Budget check please.|Are we over budget?}"))
	food, fun, misc := 600+g.intn(250), 90+g.intn(160), 150+g.intn(200)
	g.tool("", "budget_report", fmt.Sprintf(`{"groceries_eur":%d,"groceries_budget_eur":800,"leisure_eur":%d,"leisure_budget_eur":250,"other_eur":%d,"savings_transfer_eur":%d}`, food, fun, misc, 300+100*g.intn(5)), "month", g.now.Format("2006-01"))
	state := "within"
	if food > 800 {
		state = "a little over"
	}
	g.assistant(fmt.Sprintf("Groceries are at €%d, %s the €800 budget; leisure €%d of €250; other spending €%d. %s", food, state, fun, misc,
		g.pick("Nothing alarming.", "The savings transfer went out as planned.", "The school trip payment is the biggest single item.", "You could move a little from leisure to groceries.")))
	if g.chance(0.5) {
		g.user(g.pick("Ok, good.", "We'll cook more at home next week.", "Fine, thanks.", "Good to know."))
	}
}

// householdChat are the small tasks and chats of the household.
var householdChat = [][]string{
	{"u:{Lena found a house listing she loves, but it's far from her work.|We keep looking at house listings at midnight.|Another house viewing fell through, the owner changed his mind.}", "a:{A long commute adds up; let's price the travel into the comparison.|House hunting does that to people. Want me to set up alerts instead?|That's frustrating. The right house will come.}", "u:{Good idea, compare it properly.|Yes, alerts please.|I hope so.}"},
	{"u:{What should we check at a house viewing?|What questions do we ask the seller about the house?|How old can a roof be before it's a problem?}", "a:{Damp in the cellar, the age of the heating and roof, the windows, and the energy certificate.|Ask about the heating, any water damage, the roof, and why they're selling.|Depends on the material; tiles last 50 years or more, but flashing and gutters fail earlier.}", "u:{Making a checklist.|Thanks, noted.|Good to know.}"},
	{"u:{Kitchen question: induction or gas?|How big should a kitchen island be?|Do we need a kitchen extractor that vents outside?}", "a:{Induction: faster, safer with kids, and easier to clean.|Leave at least a metre of walkway around it; an island under 90 cm deep gets crowded.|Venting outside is better for moisture and smells, if the wall allows a duct.}", "u:{Induction then.|A metre, ok.|We'll ask the kitchen people.}"},
	{"u:{The house needs curtains everywhere, where do we even start?|What colour for the hallway in the house?|The house is so echoey without furniture.}", "a:{Start with the bedrooms for sleep, then the living room; the rest can wait.|A warm off-white makes a narrow hallway feel wider.|Rugs and curtains will fix most of it; bookshelves too.}", "u:{Bedrooms first.|Off-white, Lena agrees.|Rugs it is.}"},
	{"u:{Remind me to call the dentist tomorrow.|Set a reminder for the parent-teacher meeting.|Remind Lena about the car inspection.}", "a:{Reminder set for tomorrow at 9.|Done, it's in the calendar with an alert the day before.|Added, with a reminder a week ahead.}", "u:{Thanks.|Perfect.|Great.}"},
	{"u:{Mateo has a fever. What should we watch for?|Sofía has a cough that won't go away.|Both kids are sniffly again.}", "a:{Plenty of fluids and rest; see a doctor if the fever is above 39.5 °C for more than two days or if he seems very unwell.|A cough can linger for weeks after a cold; if she's short of breath or it gets worse, call the paediatrician.|It's the season. Rest, fluids, and keep an eye on temperatures.}", "u:{Thanks, we'll keep an eye on it.|Ok, calling the doctor if it's not better by Friday.|Sigh. Thanks.}"},
	{"u:{What's a good birthday present for a 9-year-old who likes science?|Gift idea for Lena's sister?|Ideas for the teachers' end-of-year gift?}", "a:{A crystal-growing kit or a kids' microscope are hits at that age.|A voucher for a cooking class is personal without being risky.|A group card and a voucher for the bookshop work well; collect a few euros from each family.}", "u:{Microscope it is.|Good idea.|I'll suggest that in the parents' group.}"},
	{"u:{Can you find a plumber for a dripping tap?|Who do we call about a blocked drain?|The washing machine is making a noise.}", "a:{I found three local plumbers with good reviews; the closest can come Thursday morning.|A drain service can come tomorrow; try hot water and baking soda first.|If it's rattling, check the drum for a coin; if it's grinding, it may be the bearings.}", "u:{Book Thursday.|I'll try the baking soda first.|Found a coin! Fixed.}"},
	{"u:{What do we need for the kids' passports?|How do we renew Lena's ID card?|Where do we register the new address?}", "a:{Birth certificates, current biometric photos and both parents' consent; book an appointment at the citizens' office.|She needs an appointment at the citizens' office, a biometric photo and the old card.|At the citizens' office within two weeks of moving, with the landlord's or seller's confirmation.}", "u:{I'll book the appointment.|Ok, thanks.|Good to know, adding it to the list.}"},
	{"u:{Weekend plans: something fun for the kids when it rains?|Any ideas for a Sunday outing?|Where can we go swimming with the kids?}", "a:{The science museum has a children's floor, and the aquarium is nearby.|A walk around the lake with a playground at the end, and hot chocolate after.|The indoor pool in the next town has a slide and a shallow area for Sofía.}", "u:{Museum it is.|Lake and hot chocolate, sold.|The slide will be a hit.}"},
	{"u:{Lena says hi, by the way.|Long day. Work was chaos.|Sorry, late tonight, the kids didn't want to sleep.}", "a:{Hi Lena! Hope you're both well.|Sorry to hear that. Let's keep it short.|No problem, I'm here whenever.}", "u:{We are, just tired.|Thanks.|Finally asleep. Where were we?}"},
	{"u:{How much should we put aside for the car each month?|Should we switch electricity provider?|Is our phone contract too expensive?}", "a:{For maintenance and tyres on a car your age, about €80 a month is a safe amount.|Your current tariff is above the local average; switching could save roughly €150 a year.|You pay for far more data than you use; a smaller plan would save about €12 a month.}", "u:{Ok, €80 it is.|Let's switch, remind me next week.|Good catch.}"},
	{"u:{Can you make a packing list for the weekend trip?|Packing list for the kids' school trip?|What do we need for camping with the kids?}", "a:{Clothes for three days, rain jackets, chargers, snacks for the car, and the kids' comfort toys.|Check the school's list, but: sleeping bag, torch, rain gear, a small towel and labelled clothes.|Tent, sleeping mats and bags, a stove, head torches, and more snacks than you think.}", "u:{Thanks!|Labels, of course.|More snacks, noted.}"},
	{"u:{The kids want a dog. Thoughts?|Should we get the kids bikes for the new neighbourhood?|Is Mateo old enough to walk to school alone?}", "a:{A dog is a 12–15 year commitment; maybe start by fostering or walking a neighbour's dog.|Yes, the new area has cycle paths; a cycle training course first would help.|Many nine-year-olds do, on a short safe route; walk it together a few times first.}", "u:{Fostering is a good idea.|We'll look at bikes in spring.|We'll practise the route.}"},
}
