package main

import (
	"fmt"
	"strings"
	"time"
)

// writeSupport is a long customer-support thread between an AI support
// agent and one customer over two weeks: a damaged espresso machine, a
// refund that needs a supervisor, a delayed second order, an address
// change. The identifiers (account, orders, RMA, escalation, tracking
// number, amounts) and the policies are all stated early; the rest is the
// slow back-and-forth of support (tracking updates, waiting, small talk,
// policy look-ups), which is what compaction has to fold without losing a
// single order number.
func writeSupport(g *gen) {
	g.conv = "conv-support-cust-208841"
	g.prefix = "sup"
	g.now = time.Date(2026, 2, 28, 8, 47, 12, 904_000_000, time.UTC)
	s := &sup{g: g}

	g.system(`You are Nova, the customer support assistant of Kaffeehaus Direct, an online shop for coffee equipment (EU, prices in EUR). Tools: lookup_customer(email|customer_id), lookup_order(order_id), check_stock(sku), get_escalation(escalation_id), track_shipment(carrier, tracking_number), check_policy(topic), issue_refund(order_id, amount, reason), create_escalation(order_id, reason, to), add_note(customer_id, note), send_email(customer_id, subject, body).
Rules: verify the customer's identity (email + order number) before discussing an order; follow the policies exactly as check_policy returns them; never promise a refund you cannot issue yourself — escalate instead; be warm and brief; record every commitment with add_note.`)

	g.user("Hi, my espresso machine arrived broken. The water tank is cracked and there's water all over the box.")
	g.assistant("I'm so sorry to hear that — that's not the start you wanted. I'll sort this out with you. Could you give me the email address on your account and the order number, so I can verify it's you?")
	fCustomer := g.user("Sure. It's helena.berg@example.com, I'm Helena Berg. Order number ORD-5523109.")
	g.tool("", "lookup_customer", `{"customer_id":"CUST-208841","name":"Helena Berg","email":"helena.berg@example.com","since":"2021-06-03","tier":"Gold","loyalty_points":3410,"contact_preference":null}`,
		"email", "helena.berg@example.com")
	fOrder := g.tool("", "lookup_order", `{"order_id":"ORD-5523109","customer_id":"CUST-208841","placed":"2026-02-23","items":[{"sku":"BRV-PRO2-SS","name":"Brevia Pro 2 espresso machine, stainless","qty":1,"price_eur":349.00}],"total_eur":349.00,"payment":"Visa •••• 4417","status":"delivered","delivered":"2026-02-27T11:32:00Z","carrier":"DHL"}`,
		"order_id", "ORD-5523109")
	fVerified := g.assistant("Thank you, Helena — verified (account CUST-208841). I can see order ORD-5523109: one Brevia Pro 2 espresso machine, €349.00, paid with your Visa ending 4417, delivered by DHL on 2026-02-27. Could you send a photo or two of the cracked tank and the box?")
	g.user("Uploading now. [2 photos attached: tank_crack.jpg, box_wet.jpg]")
	g.tool("", "check_policy", "Damaged on arrival: report within 14 days of delivery, with photos of the item and packaging. Options: replacement (if in stock) or full refund to the original payment method. A prepaid return label (RMA) is issued in both cases.\nReturns (undamaged): 30-day return window from delivery, item unused, in original packaging.\nRefund approval: agents may issue refunds up to €300.00; refunds over €300.00 require supervisor approval via escalation.",
		"topic", "damaged on arrival")
	fPolicy := g.assistant("Thanks, the photos clearly show the crack. You're well within our policy: damage has to be reported within 14 days of delivery, with photos, and you can choose a replacement or a full refund. (For undamaged items there's a 30-day return window, but that doesn't apply here.) Would you prefer a replacement or a refund?")
	g.user("Replacement please, I was really looking forward to it.")
	g.tool("", "check_stock", `{"sku":"BRV-PRO2-SS","stock":0,"next_restock":"2026-04-20","alternatives":["BRV-PRO2-BK (black, in stock, €359.00)"]}`, "sku", "BRV-PRO2-SS")
	fStock := g.assistant("I checked: the stainless Brevia Pro 2 is out of stock until April (restock expected 2026-04-20). The black version is in stock at €359.00. Would you like the black one, wait until April, or take a refund?")
	g.user("Hmm. No, I don't want black and April is too long. Then I'd like a refund.")
	fRefundPolicy := g.assistant("Understood, a full refund of €349.00 it is. One thing to be transparent about: refunds over €300 need a supervisor's approval, so I can't issue it myself — I'm escalating it now. It doesn't change the outcome, it just adds a short review step.")
	fEsc := g.tool("", "create_escalation", `{"escalation_id":"ESC-9031","assigned_to":"Tom Reyes (Support Supervisor)","sla":"1 business day","status":"open"}`,
		"order_id", "ORD-5523109", "reason", "Damaged on arrival (cracked water tank), photos verified; customer chose refund of EUR 349.00; replacement out of stock until 2026-04-20", "to", "supervisor")
	g.assistant("Escalation ESC-9031 is open and assigned to Tom Reyes, our support supervisor, with a one-business-day SLA. I've attached your photos.")
	g.tool("", "send_email", `{"status":"sent","message_id":"<rma-77120@kaffeehaus-direct.example>"}`, "customer_id", "CUST-208841", "subject", "Your return label RMA-77120", "body", "Return label for ORD-5523109 attached. Drop the parcel at any DHL point; no need for the original box.")
	fRMA := g.assistant("Meanwhile, I've emailed you a prepaid DHL return label, RMA-77120. You can drop the parcel at any DHL point — no need for the original box since it's damaged.")
	fContact := g.user("Thanks. One request: please don't call me, I can't take calls at work. Email only.")
	g.tool("", "add_note", `{"status":"saved"}`, "customer_id", "CUST-208841", "note", "Contact preference: EMAIL ONLY, never phone. ORD-5523109 refund EUR 349.00 pending ESC-9031 (Tom Reyes). RMA-77120 sent.")
	g.assistant("Noted on your account: email only, no phone calls. Everyone on the team will see it.")
	s.chatter(6)
	fOrder2 := g.user("While I have you: I also ordered a grinder, ORD-5523388, and it still says 'in transit' after a week.")
	g.tool("", "lookup_order", `{"order_id":"ORD-5523388","customer_id":"CUST-208841","placed":"2026-02-20","items":[{"sku":"KLO-BURR-64","name":"Kalo 64mm flat burr grinder","qty":1,"price_eur":219.00}],"status":"in_transit","carrier":"DHL","tracking":"JD014600006512345678"}`, "order_id", "ORD-5523388")
	fTrack := g.tool("", "track_shipment", "2026-02-21 09:12 Shipment information received (Hamburg)\n2026-02-21 18:40 Processed at parcel center Hamburg\n2026-02-22 04:05 In transit\n2026-02-24 07:55 Delay: shipment held at parcel center Kassel (operational reasons)\n2026-02-27 16:21 In transit",
		"carrier", "DHL", "tracking_number", "JD014600006512345678")
	fDelay := g.assistant("Your Kalo 64mm grinder (ORD-5523388, €219.00) is with DHL under tracking number JD014600006512345678. It was held at the Kassel parcel center from 2026-02-24 for operational reasons and has been moving again since yesterday evening. I'd expect delivery within 2–3 business days.")
	g.user("Ugh, ok. Can you do anything for the hassle? Two problems with two orders...")
	g.tool("", "add_note", `{"status":"saved","loyalty_points_added":1200,"new_balance":4610}`, "customer_id", "CUST-208841", "note", "Goodwill: 1,200 loyalty points for damaged ORD-5523109 and delayed ORD-5523388.")
	fPoints := g.assistant("Absolutely. I've credited 1,200 loyalty points to your account as a goodwill gesture — your balance is now 4,610 points, worth €46.10 on your next order.")
	fAddress := g.user("That's kind, thank you. Also, I'm moving: from March 10 my address is Lindenstraße 12, 10969 Berlin. Please use that for anything you send after that date.")
	g.tool("", "add_note", `{"status":"saved"}`, "customer_id", "CUST-208841", "note", "New shipping address from 2026-03-10: Lindenstraße 12, 10969 Berlin.")
	g.assistant("Done: from 2026-03-10 we'll use Lindenstraße 12, 10969 Berlin. The grinder is already on its way to your current address, so that one isn't affected.")

	// ---- two weeks of follow-ups ------------------------------------------
	for day := 0; len(g.msgs) < 340; day++ {
		g.nextDay(7, 21)
		s.day(day)
	}
	g.user("I think everything's sorted now. Thanks for all the help!")
	g.assistant("You're very welcome, Helena. Enjoy the coffee, and the new flat!")

	g.fact("The customer is Helena Berg, account CUST-208841, email helena.berg@example.com.", "customer account email",
		[]string{"Helena Berg", "CUST-208841", "helena.berg@example.com"}, fCustomer, fVerified)
	g.fact("Order ORD-5523109 (Brevia Pro 2 espresso machine, €349.00, Visa ending 4417) was delivered damaged on 2026-02-27: cracked water tank.",
		"damaged espresso machine order", []string{"ORD-5523109", "Brevia Pro 2", "€349.00", "4417"}, fOrder, fVerified)
	g.fact("Damage must be reported within 14 days of delivery with photos; undamaged returns have a 30-day window.", "return policy damaged days",
		[]string{"14 days", "30-day"}, fPolicy)
	g.fact("Replacement not possible: the stainless Brevia Pro 2 is out of stock until 2026-04-20, so the customer chose a refund.", "replacement out of stock",
		[]string{"2026-04-20"}, fStock)
	g.fact("Refunds over €300 require supervisor approval.", "refund approval limit supervisor",
		[]string{"over €300", "supervisor"}, fRefundPolicy)
	g.fact("Escalation ESC-9031 for the refund is assigned to supervisor Tom Reyes.", "escalation supervisor",
		[]string{"ESC-9031", "Tom Reyes"}, fEsc)
	g.fact("Prepaid DHL return label RMA-77120 was emailed.", "return label RMA", []string{"RMA-77120"}, fRMA)
	g.fact("The customer wants to be contacted by email only, never by phone.", "contact preference phone email",
		[]string{"Email only"}, fContact)
	g.fact("Second order ORD-5523388 (Kalo 64mm grinder) is delayed with DHL, tracking JD014600006512345678, held at Kassel.",
		"delayed grinder tracking number", []string{"ORD-5523388", "JD014600006512345678", "Kassel"}, fOrder2, fTrack, fDelay)
	g.fact("1,200 loyalty points were credited as goodwill.", "goodwill loyalty points", []string{"1,200 loyalty points"}, fPoints)
	g.fact("New address from 2026-03-10: Lindenstraße 12, 10969 Berlin.", "new shipping address",
		[]string{"Lindenstraße 12, 10969 Berlin"}, fAddress)
}

type sup struct {
	g     *gen
	asked map[string]bool
}

var (
	// supSmallTalk pairs a customer aside with a fitting reply ("" = no
	// reply, as when the customer just steps away).
	supSmallTalk = [][2]string{
		{"Thanks!", "You're welcome!"}, {"ok thank you", "Happy to help."}, {"Great, thanks a lot.", "Glad that helps!"},
		{"You're very helpful, thank you 😊", "That's kind of you — thank you, Helena!"}, {"ok", ""},
		{"Sorry, I was away for a moment.", "No problem at all."}, {"Still there?", "Yes, I'm here!"},
		{"One sec, someone's at the door.", "Of course — take your time."}, {"Alright.", ""},
		{"Haha, yes, coffee is serious business.", "The most serious! ☕"}, {"Perfect.", ""},
		{"Sorry for all the questions.", "Not at all, that's what I'm here for."},
	}
	// supQA are the product and policy questions of the thread and the
	// agent's answers.
	supQA = []struct{ q, a string }{
		{"How long does a refund take to show up on my card?", "Once it's issued, card refunds usually appear within {5–10|3–5} business days, depending on your bank."},
		{"Does the warranty cover the grinder burrs?", "Burrs are wear parts, so normal wear isn't covered, but manufacturing defects are, for 24 months."},
		{"Can I use the loyalty points on sale items?", "Yes, points work on sale items too; 100 points are worth €1."},
		{"Do you sell descaling tablets for the Brevia?", "We do: the Brevia descaling kit (6 tablets) is €{12.90|13.90}."},
		{"What's the difference between the Kalo 64 and the Kalo 54?", "The 64 has larger 64mm flat burrs — faster grinding and a bit more consistency for filter; the 54 is smaller and quieter, {€70|€80} cheaper."},
		{"Can I change the delivery to a DHL Packstation?", "For parcels already in transit I can't redirect it, but DHL's app lets you choose a Packstation once it's out for delivery."},
		{"Is there a newsletter discount?", "There's a one-time 10% code for new newsletter subscribers; it can't be combined with points, I'm afraid."},
		{"Which beans would you recommend for a flat burr grinder?", "Light to medium roasts shine with flat burrs; our {Ethiopia Guji|Kenya Nyeri|Colombia Huila} is a customer favourite."},
		{"Do I need to return the accessories too (the tamper, the milk jug)?", "Yes, please include everything that came in the box, so the refund isn't delayed."},
		{"How do I register the warranty?", "No registration needed: your order is your warranty proof."},
		{"Is the return label still valid next week?", "Yes, return labels are valid for 30 days from issue."},
		{"What water hardness setting should I use in Berlin?", "Berlin water is hard — around {14–18|15–20} °dH — so I'd use the highest hardness setting and a filter cartridge."},
		{"How often should I clean the grinder burrs?", "Every {4–6|4} weeks for daily use; grinder-cleaning tablets in between help with oils."},
		{"Do you ship to Austria?", "Yes, Austria ships in {2–4|3–5} business days; shipping is free from €{49|59}."},
		{"Can I pay with PayPal next time?", "Yes, PayPal, cards, SEPA direct debit and Klarna are all available at checkout."},
		{"Is there a student discount?", "Not at the moment, I'm afraid — the newsletter code is the closest thing we have."},
		{"How do I reset my password? The link in the email expired.", "Reset links are valid for {30|60} minutes. I've triggered a fresh one to your email — it should arrive within a minute."},
		{"Do you have a repair service for older machines?", "We repair the brands we sell, also out of warranty; you get a quote before any work starts."},
		{"Can I pick up orders in person somewhere in Berlin?", "Not yet — we're online-only, shipping from our warehouse near Hamburg."},
		{"What's the best way to store coffee beans?", "Airtight, dark and cool — not the fridge. Ideally use them within {4|3–5} weeks of roasting."},
		{"Why is my espresso so sour?", "Sour usually means under-extraction: try a finer grind or a slightly longer shot, around {25–30|27–32} seconds."},
		{"Does the Kalo grinder work for Turkish coffee?", "The Kalo 64 goes fine enough for espresso but not quite for Turkish; for that you'd need a dedicated grinder."},
		{"Can I gift loyalty points to a friend?", "Unfortunately points can't be transferred, but you can use them on a gift card for your friend."},
	}
)

// consult is a small product consultation: the customer describes what
// she wants, the agent asks one question and recommends.
func (s *sup) consult() {
	g := s.g
	type rec struct{ item, pick string }
	r := []rec{
		{"beans for filter coffee", "our {Ethiopia Guji|Kenya Nyeri} light roast, 250 g for €{12.50|14.90}"},
		{"a scale", "the {Timemore Black Mirror|Acaia Pearl} — 0.1 g precision and a built-in timer"},
		{"a milk jug for latte art", "the Motta 350 ml jug with the sharp spout"},
		{"a gift for my dad, he drinks espresso", "a tasting set of three espresso blends with a nice tamper"},
		{"a travel grinder", "the {Comandante C40|1Zpresso Q2} — compact and very consistent"},
	}[g.intn(5)]
	g.user("Can you recommend " + r.item + "?")
	g.assistant(g.fill("Happy to! What's your budget{, roughly|}?"))
	budget := 20 + 10*g.intn(8)
	g.user(fmt.Sprintf("Around €%d.", budget))
	g.assistant(g.fill(fmt.Sprintf("Within €%d I'd suggest %s. {Customers love it.|It's one of our best sellers.|Great value for the price.}", budget, r.pick)))
	if g.chance(0.5) {
		g.user(g.sprinkle([]string{"Sounds good, I'll think about it.", "Nice, thanks!", "Hmm, a bit pricey. Anything cheaper?"}))
		if g.chance(0.5) {
			g.assistant("Sure — the entry-level option is about a third cheaper and still a big step up from a blade grinder or supermarket beans.")
		}
	}
}

// chatter is small talk and waiting, the filler of every support chat.
func (s *sup) chatter(n int) {
	g := s.g
	for ; n > 0; n-- {
		st := supSmallTalk[g.intn(len(supSmallTalk))]
		if g.recent(st[0], 8) {
			continue
		}
		g.user(st[0])
		if st[1] != "" {
			g.assistant(st[1])
		}
	}
}

// question is one product or policy question and its answer.
func (s *sup) question() {
	g := s.g
	if s.asked == nil {
		s.asked = map[string]bool{}
	}
	k := g.intn(len(supQA))
	for try := 0; try < len(supQA) && s.asked[supQA[k].q]; try++ {
		k = (k + 1) % len(supQA)
	}
	q, ans := supQA[k].q, supQA[k].a
	if s.asked[q] {
		g.user(g.fill("{Sorry, I forgot|Remind me}: ") + strings.ToLower(q[:1]) + q[1:])
	} else {
		g.user(q)
	}
	s.asked[q] = true
	if g.chance(0.3) && !strings.Contains(q, "recommend") {
		g.tool("", "check_policy", "Policy: "+g.fill(ans), "topic", strings.ToLower(strings.TrimSuffix(q, "?")))
	}
	g.assistant(g.fill(ans))
	if g.chance(0.4) {
		s.chatter(1)
	}
}

// day is one day of the thread: the customer comes back, one or two
// episodes happen, some questions and small talk around them.
func (s *sup) day(day int) {
	g := s.g
	g.user(g.sprinkle([]string{
		"Hi, it's Helena again{| (CUST-208841)}.", "Hello! Quick follow-up on my orders.", "Hi Nova, me again.",
		"Good morning, any news?", "Hello, I have another question.", "Hi! Hope you're well.",
	}))
	g.assistant(g.sprinkle([]string{
		"Hi Helena, welcome back! How can I help?", "Hello again! What can I do for you today?",
		"Good to see you, Helena. Let me pull up your account.", "Hi Helena! I have your account open — what's up?",
	}))
	if day < len(supEpisodes) {
		supEpisodes[day](s)
	}
	for k := g.between(2, 5); k > 0; k-- {
		switch g.intn(5) {
		case 0, 1:
			s.question()
		case 2:
			s.consult()
		default:
			s.chatter(g.between(1, 2))
		}
	}
	if g.chance(0.6) {
		g.assistant(g.fill("Is there anything else I can help with{| today}?"))
		g.user(g.sprinkle([]string{"No, that's all, thanks!", "That's it for now.", "Nope, all good. Bye!", "No, thank you, have a good evening."}))
	}
}

// supEpisodes are the thread's follow-up stories, one per day, in order.
var supEpisodes = []func(s *sup){
	func(s *sup) {
		g := s.g
		g.user("Did the supervisor approve the refund yet?")
		g.tool("", "get_escalation", `{"escalation_id":"ESC-9031","status":"approved","approved_by":"Tom Reyes","note":"approved, issue full refund"}`, "escalation_id", "ESC-9031")
		g.tool("", "issue_refund", `{"refund_id":"RF-339120","amount_eur":349.00,"method":"Visa •••• 4417","status":"processing","expected":"5-10 business days"}`, "order_id", "ORD-5523109", "amount", 349.00, "reason", "Damaged on arrival, approved in escalation")
		g.assistant("Yes! It was approved this morning, and I've just issued the refund (reference RF-339120) to your card. It should appear within 5–10 business days.")
		g.user("Great news, thank you!")
	},
	func(s *sup) {
		g := s.g
		g.user("The grinder arrived! But the hopper lid is missing.")
		g.assistant("Oh no, I'm sorry! Could you check under the foam insert? The lid is sometimes packed in a separate small box.")
		g.user("Found it. It was under the foam. Sorry!")
		g.assistant("No need to apologise — that packaging confuses everyone. Enjoy the grinder!")
	},
	func(s *sup) {
		g := s.g
		g.user("I dropped off the return parcel at DHL today.")
		g.tool("", "track_shipment", "2026-03-04 15:02 Parcel dropped off at DHL Paketshop (Berlin-Kreuzberg)\n2026-03-04 19:40 Processed at parcel center Berlin", "carrier", "DHL", "tracking_number", "JJD000390017734521")
		g.assistant("I can see it: dropped off at the DHL Paketshop in Berlin-Kreuzberg and already processed at the Berlin parcel center. Our warehouse usually checks returns within 3 business days of arrival.")
	},
	func(s *sup) {
		g := s.g
		g.user("I tried the code SPRING10 on a bag of beans and it says 'invalid'.")
		g.tool("", "check_policy", "Promotions: SPRING10 — 10% off coffee beans, valid 2026-03-15 to 2026-03-31, minimum order €25, one use per customer.", "topic", "promotion SPRING10")
		g.assistant("I checked: SPRING10 only starts on 2026-03-15 and needs a €25 minimum. It'll work from the 15th — sorry it isn't advertised more clearly!")
		g.user("Ah, I was too early. Fine, I'll wait.")
	},
	func(s *sup) {
		g := s.g
		g.user("Can I get an invoice for the grinder with my company name? It's for my home office.")
		g.assistant("Sure — what company name and VAT ID should the invoice show?")
		g.user("Berg Übersetzungen, VAT ID DE298765431.")
		g.tool("", "send_email", `{"status":"sent"}`, "customer_id", "CUST-208841", "subject", "Corrected invoice for ORD-5523388", "body", "Invoice reissued to Berg Übersetzungen, VAT ID DE298765431.")
		g.assistant("Done — the corrected invoice for the grinder, made out to Berg Übersetzungen (DE298765431), is in your inbox.")
	},
	func(s *sup) {
		g := s.g
		g.user("The warehouse got my return?")
		g.tool("", "lookup_order", `{"order_id":"ORD-5523109","return":{"received":"2026-03-06","condition":"damaged as reported","status":"closed"}}`, "order_id", "ORD-5523109")
		g.assistant("Yes: the warehouse received it on 2026-03-06, confirmed the damage, and closed the return. Nothing else needed from you.")
	},
	func(s *sup) {
		g := s.g
		g.user("My refund showed up on my card today!")
		g.assistant("Wonderful, thanks for letting me know! I'll mark the case as resolved.")
		g.tool("", "add_note", `{"status":"saved"}`, "customer_id", "CUST-208841", "note", "Customer confirmed refund received. Case resolved.")
	},
	func(s *sup) {
		g := s.g
		g.user("I want to order the descaling kit and a milk jug. Will it go to my new address?")
		g.tool("", "lookup_customer", `{"customer_id":"CUST-208841","addresses":[{"type":"shipping","valid_from":"2026-03-10","line1":"Lindenstraße 12","city":"Berlin","postcode":"10969"},{"type":"shipping","valid_until":"2026-03-09","line1":"Hasenheide 48","city":"Berlin","postcode":"10967"}]}`, "customer_id", "CUST-208841")
		g.assistant("Yes — anything ordered now ships after the 10th, so it'll go to your new address automatically. You can also pick it at checkout.")
		g.user("Perfect. Ordered: ORD-5524017.")
		g.assistant("Got it, ORD-5524017 is confirmed for the new address.")
	},
	func(s *sup) {
		g := s.g
		g.user("The grinder makes a squeaking noise when it starts. Is that normal?")
		g.assistant("A short squeak on start-up can come from new burrs bedding in during the first few kilos. If it persists after about 2 kg of beans, or if it gets louder, it's a warranty case and we'll swap it.")
		g.user("Ok, I'll keep an eye on it.")
	},
	func(s *sup) {
		g := s.g
		g.user("Do my points expire?")
		g.tool("", "check_policy", "Loyalty points expire 24 months after they were earned. Goodwill points follow the same rule.", "topic", "loyalty points expiry")
		g.assistant("Points expire 24 months after they're earned, so nothing will expire for a long while.")
	},
	func(s *sup) {
		g := s.g
		g.user("I'd like to unsubscribe from the marketing newsletter but keep order emails.")
		g.tool("", "add_note", `{"status":"saved","marketing_opt_in":false}`, "customer_id", "CUST-208841", "note", "Unsubscribed from marketing emails; transactional emails stay on.")
		g.assistant("Done: you're unsubscribed from marketing emails, and you'll still get order and shipping emails.")
	},
}
