package main

import (
	"fmt"
	"strings"
	"time"
)

// writePlanning is a tech lead planning a new notification platform with
// an assistant over several working sessions: the project, its deadline,
// budget, storage and messaging decisions, the compliance constraint, the
// SLOs, the team and the scope cuts are all settled in the first ~15%;
// the rest is the long, repetitive middle of real planning (API shapes,
// rollout, risks, estimates, tickets) that compaction has to fold.
func writePlanning(g *gen) {
	g.conv = "conv-lighthouse-planning"
	g.prefix = "pln"
	g.now = time.Date(2026, 2, 16, 9, 2, 44, 518_000_000, time.UTC)
	p := &pln{g: g}

	g.system(`You are Atlas, a planning assistant for the platform engineering team at Northwind Apps. Help the user plan projects: ask clarifying questions, make trade-offs explicit, record decisions with their rationale, and keep a running list of open questions. Tools: search_docs(query) over the internal wiki, create_ticket(project, title, description), estimate_cost(service, params), calendar(query). Do not invent numbers: when you estimate, say so and show the assumptions.`)

	g.user("Morning! I'm Dana Whitfield, tech lead for the new notifications work. I'd like to use this thread to plan it end to end over the next few days.")
	g.assistant("Good morning, Dana. Happy to. To start: what is the project, what does it replace, and what are the hard dates?")
	fProject := g.user("Codename is Lighthouse. It's a new notification platform (push, email, in-app) that replaces our legacy service Beacon, which is a Rails monolith nobody wants to touch anymore.")
	g.assistant("Got it: Lighthouse replaces Beacon for push, email and in-app notifications. I'll pull what the wiki has on Beacon so we know what we're replacing.")
	g.tool("", "search_docs", "Beacon (notifications) — owner: platform team (legacy)\n- Rails 5.2 app, Sidekiq workers, MySQL 5.7 on a single primary\n- ~1.9M notifications/day, peaks at ~2,600/s during campaign sends\n- Known issues: duplicate pushes on retries, no per-user rate limiting, templates stored in the DB without versioning\n- On-call pages (last 90 days): 23, mostly queue backlogs", "query", "Beacon architecture")
	g.assistant("Beacon today: Rails 5.2 + Sidekiq + MySQL 5.7, about 1.9M notifications a day with peaks around 2,600/s, and three known pain points — duplicate pushes on retry, no per-user rate limits, unversioned templates. Those are good acceptance criteria for Lighthouse. Now the dates?")
	fDeadline := g.user("Hard deadline: Lighthouse GA by 2026-06-30. Before that, a beta to 5% of users by 2026-05-15. Leadership committed to both publicly, so they don't move.")
	g.assistant("Noted as fixed constraints: beta to 5% of users by 2026-05-15, GA by 2026-06-30. That gives us about 13 weeks to beta from today.")
	g.tool("", "calendar", "2026-02-16 → 2026-05-15: 63 working days (public holidays: 2026-04-03, 2026-04-06, 2026-05-01)\n2026-05-15 → 2026-06-30: 31 working days", "query", "working days until 2026-05-15 and 2026-06-30")
	g.assistant("63 working days to beta (three public holidays in between) and 31 more to GA.")
	fBudget := g.user("Budget: infrastructure is capped at $18,000/month once we're at full traffic, and we have a one-time $60,000 for contractors. Finance was very clear that the monthly cap is a hard limit.")
	g.assistant("Recorded: infra cap $18,000/month (hard), one-time contractor budget $60,000. I'll check every architecture option against the monthly cap.")
	fTeam := g.user("Team: Marco Rossi owns the backend service, Aiko Tanaka the mobile SDK changes, Sam Okafor is our SRE and will own on-call. I'm coordinating and doing reviews.")
	g.assistant("Team: Marco Rossi (backend), Aiko Tanaka (mobile SDK), Sam Okafor (SRE, on-call), Dana Whitfield (lead, reviews). Is anyone shared with other projects?")
	g.user("Aiko is 50% on the checkout redesign until April.")
	g.assistant("Then the mobile SDK work should start after April or be kept small before; I'll flag it as a risk.")
	p.rounds(3)
	g.user("Let's talk storage. Marco wants DynamoDB, Sam prefers Postgres. What do you think?")
	g.assistant("Both can work at this scale. The deciding questions: do we need a transactional outbox (write the notification and the event atomically)? Do we need ad-hoc queries for support and analytics? And what does the team know how to operate at 3 a.m.?")
	g.user("Yes to the outbox — Beacon's duplicate pushes come exactly from not having one. Ad-hoc queries: support asks for them every week. And Sam's team runs Postgres already for four services.")
	g.tool("", "estimate_cost", "Assumptions: 2.5M notifications/day, 90-day retention, 3x peak factor\nRDS PostgreSQL 16, db.r6g.xlarge Multi-AZ + 1 read replica, 1 TB gp3: ~$1,950/month\nDynamoDB on-demand, 2 GSIs, 90-day TTL: ~$2,400/month (write-heavy; GSIs double writes)\nEstimates, not quotes.",
		"service", "database", "params", "2.5M notifications/day, 90-day retention, multi-AZ")
	fDB := g.user("Then it's decided: we use PostgreSQL 16 on Amazon RDS, not DynamoDB. Reasons: the transactional outbox, ad-hoc queries for support, and the team already operates Postgres.")
	g.assistant("Decision recorded: PostgreSQL 16 on Amazon RDS (Multi-AZ, one read replica), chosen over DynamoDB for the transactional outbox, ad-hoc support queries and operational familiarity. Estimated ~$1,950/month, well inside the cap.")
	p.rounds(2)
	g.user("Next: the queue. Beacon uses Sidekiq. Options on the table are RabbitMQ and Kafka.")
	g.assistant("For Lighthouse the outbox relay publishes events and several consumers (push, email, in-app, analytics) read them independently, with replay after incidents. That favours a log (Kafka) over a broker (RabbitMQ). Managed Kafka (MSK) avoids running ZooKeeper/KRaft ourselves. RabbitMQ is simpler but replay and fan-out to analytics are awkward.")
	fQueue := g.user("Agreed — we'll go with Kafka on Amazon MSK, one topic notifications.v1 partitioned by user id, instead of RabbitMQ.")
	g.assistant("Decision recorded: Kafka on Amazon MSK, topic notifications.v1 keyed by user id (per-user ordering), chosen over RabbitMQ for replay and fan-out.")
	fGDPR := g.user("Hard constraint from legal: GDPR. EU users' data must stay in eu-central-1 — that includes device tokens, email addresses and notification content. No replication to us-east-1.")
	g.assistant("Constraint recorded: EU user data (device tokens, emails, content) stays in eu-central-1, never replicated to us-east-1. That means two regional deployments with user routing by residency, not one global cluster. I'll add it to the risks: residency lookup must happen before anything is written.")
	fSLO := g.user("Performance targets: p99 push delivery under 2 s from API call to APNs/FCM hand-off, and we must handle 4,000 messages/s at peak.")
	g.assistant("SLOs recorded: p99 < 2 s API-to-provider for push, 4,000 msgs/s peak (about 1.5x Beacon's current peak). MSK and the outbox relay need load tests at that rate before beta.")
	fRate := g.user("Product rule: at most 3 marketing notifications per user per day. Transactional ones (password reset, order updates) are never capped.")
	g.assistant("Rule recorded: marketing notifications capped at 3 per user per day; transactional notifications uncapped. The cap is per user across channels, I assume?")
	g.user("Yes, across channels.")
	p.rounds(2)
	fSMS := g.user("Scope: SMS is out. We postpone the SMS channel to Q4 2026 — Twilio pricing needs a separate approval.")
	g.assistant("Scope recorded: SMS postponed to Q4 2026 (pending Twilio pricing approval). Lighthouse v1 = push, email, in-app.")
	fBeacon := g.user("And for Beacon: feature freeze after 2026-04-01 — no new features, only fixes — and we decommission it by 2026-09-01.")
	g.assistant("Recorded: Beacon feature freeze from 2026-04-01 (fixes only), decommission by 2026-09-01. That leaves two months after GA to migrate the remaining senders.")
	fVendor := g.user("Last decision for today: we integrate APNs and FCM directly rather than paying for OneSignal — it would cost about $4,500/month at our volume and we'd still need our own rate limiting.")
	g.assistant("Decision recorded: direct APNs and FCM integrations, not OneSignal (~$4,500/month, and it would not remove our rate-limiting work).")

	// ---- the long middle ----------------------------------------------------
	agenda := 0
	for day := 0; len(g.msgs) < 330 || agenda < len(plnAgenda); day++ {
		if day > 0 {
			g.nextDay(8, 11)
			for g.now.Weekday() == time.Saturday || g.now.Weekday() == time.Sunday {
				g.nextDay(8, 11)
			}
			g.user(g.sprinkle(plnGreetings))
			g.assistant(g.sprinkle(plnResume))
		}
		for k := 0; k < 3 && agenda < len(plnAgenda); k++ {
			p.agendaItem(plnAgenda[agenda])
			agenda++
			p.rounds(g.intn(3))
		}
		if agenda >= len(plnAgenda) {
			p.rounds(4)
		}
	}
	g.user("I think that's the plan. Can you give me the list of open questions to take into Monday's review?")
	g.assistant("Open questions for Monday: 1) who approves template changes in production; 2) whether in-app messages need read receipts in v1; 3) the load-test environment budget; 4) the on-call rotation size once Beacon is gone.")

	g.fact("Lighthouse is the new notification platform (push, email, in-app) replacing the legacy service Beacon.",
		"project Lighthouse replaces Beacon", []string{"Lighthouse", "Beacon"}, fProject)
	g.fact("Hard dates: beta to 5% of users by 2026-05-15, GA by 2026-06-30.", "deadline GA beta",
		[]string{"2026-06-30", "2026-05-15", "5%"}, fDeadline)
	g.fact("Infrastructure is capped at $18,000/month (hard limit); one-time $60,000 for contractors.", "budget monthly cap contractors",
		[]string{"$18,000/month", "$60,000"}, fBudget)
	g.fact("Team: Marco Rossi backend, Aiko Tanaka mobile SDK, Sam Okafor SRE/on-call, Dana Whitfield lead.", "team owners",
		[]string{"Marco Rossi", "Aiko Tanaka", "Sam Okafor"}, fTeam)
	g.fact("Decision: PostgreSQL 16 on Amazon RDS, not DynamoDB, for the transactional outbox, ad-hoc support queries and team experience.",
		"database decision PostgreSQL DynamoDB", []string{"PostgreSQL 16", "RDS", "DynamoDB", "outbox"}, fDB)
	g.fact("Decision: Kafka on Amazon MSK, topic notifications.v1 keyed by user id, instead of RabbitMQ.", "queue decision Kafka MSK",
		[]string{"MSK", "notifications.v1", "RabbitMQ"}, fQueue)
	g.fact("GDPR constraint: EU user data stays in eu-central-1, no replication to us-east-1.", "GDPR data residency region",
		[]string{"GDPR", "eu-central-1"}, fGDPR)
	g.fact("SLOs: p99 push delivery under 2 s; 4,000 messages/s at peak.", "latency throughput targets",
		[]string{"2 s", "4,000 messages/s"}, fSLO)
	g.fact("At most 3 marketing notifications per user per day; transactional notifications are never capped.", "rate limit marketing notifications",
		[]string{"3 marketing notifications per user per day"}, fRate)
	g.fact("SMS channel postponed to Q4 2026.", "SMS scope", []string{"SMS", "Q4 2026"}, fSMS)
	g.fact("Beacon feature freeze after 2026-04-01; decommission by 2026-09-01.", "Beacon freeze decommission",
		[]string{"2026-04-01", "2026-09-01"}, fBeacon)
	g.fact("Decision: integrate APNs and FCM directly instead of OneSignal (~$4,500/month).", "push provider OneSignal",
		[]string{"APNs", "FCM", "OneSignal"}, fVendor)
}

type pln struct {
	g      *gen
	ticket int
	asked  map[string]int // question → times asked
}

var (
	plnGreetings = []string{
		"Morning, picking this up again.", "Hi again — {continuing|back to} the plan.", "Back. Had the staff meeting, a few things changed.",
		"Hey, quick session today, I have {40|30|20} minutes.", "Good morning! Where did we leave off?", "Hi, let's continue.",
	}
	plnResume = []string{
		"Welcome back. Last time we {covered the API shape|went through the rollout plan|looked at the risks}; open items are still on the list.",
		"Hi Dana. We left off with {templates|rate limiting|the migration plan}. Want to continue there?",
		"Good morning. The decision log is unchanged since yesterday; what's first today?",
		"Sure — let's make the most of it. Any news from the staff meeting I should record?",
	}
	plnAcks = []string{
		"ok", "makes sense", "good", "agreed", "sounds good", "ok, next", "fine", "yes", "👍", "perfect, thanks",
		"hmm, let me think about that", "I like it", "good point", "let's park that",
	}
)

// plnQA is a quick question of the middle of the planning and the
// answers the assistant gives it (one is chosen; {a|b} varies wording).
type plnQA struct {
	q string
	a []string
}

var plnQuick = []plnQA{
	{"Should the send API be sync or async?", []string{"Async: the API only writes the outbox row and returns 202 with a notification id, so its latency is one database transaction."}},
	{"Do we need batch sends in the API?", []string{"Yes, up to {500|1,000} recipients per call, so campaign senders don't hammer the API with single requests."}},
	{"How do callers avoid duplicate sends?", []string{"They pass an Idempotency-Key header; we keep it with the outbox row for {24|48} hours and return the original response on a repeat."}},
	{"How do we version the API?", []string{"In the path (/v1/), additive changes only; a breaking change means /v2/ and a deprecation window."}},
	{"What error format do we return?", []string{"RFC 9457 problem details, so every client parses errors the same way."}},
	{"Where do templates live?", []string{"In Git, published to the service on merge: review and history for free, and product can propose changes by pull request."}},
	{"Which template language?", []string{"A logic-less one (Mustache-like). Logic belongs in the sender, not in templates."}},
	{"Which languages do we support at launch?", []string{"English, German and French at launch, falling back to English when a translation is missing."}},
	{"How do we trace one notification end to end?", []string{"A trace id from the API through the outbox, the Kafka headers and the provider call; the notification id is logged at every hop."}},
	{"Do we log notification content?", []string{"No: logs carry ids only. Content is personal data and stays in the database, where retention applies."}},
	{"How long do we keep notifications?", []string{"90 days for content, then only the delivery metadata for a year for support questions."}},
	{"Who gets paged at night?", []string{"Sam's rotation, once the runbooks exist; until GA, pages go to the project channel during working hours only."}},
	{"How do we test push without real devices?", []string{"Provider fakes that speak the APNs and FCM HTTP/2 protocols in CI, plus a nightly canary to a handful of real test phones."}},
	{"How big is the load test?", []string{"1.5x the peak target, sustained for an hour, from a separate AWS account so it can't touch production quotas."}},
	{"Do we need contract tests with senders?", []string{"For the top ten senders, yes, generated from their real payloads captured in shadow mode."}},
	{"What happens when APNs is down?", []string{"Messages stay in the consumer's retry queue with exponential backoff up to {6|12} hours, then expire with a delivery-failed event."}},
	{"How do users opt out?", []string{"Per channel and per category in the app settings; the preference service is checked before rendering, and transactional messages ignore category opt-outs."}},
	{"Do in-app messages need read receipts?", []string{"Nice to have; I'd leave them out of v1 unless a sender needs them for a launch."}},
}

// plnAgenda are the middle of the planning, in order: short scripted
// exchanges (user, assistant, user, …) on the topics a real plan goes
// through after the big decisions.
var plnAgenda = [][]string{
	{"Let's define milestones between now and the beta.",
		"Proposal: M1 outbox + API skeleton (end of week 3), M2 push consumer with provider fakes (week 6), M3 shadow mode against Beacon traffic (week 8), M4 load test passed (week 10), then beta.",
		"M3 feels late. Shadow mode is where we find the surprises.",
		"Fair. We can start shadowing with email only in week 6, since email rendering is the least risky part, and add push in week 8."},
	{"How do we structure the repo?",
		"One Go module with cmd/api, cmd/relay and cmd/consumer, internal packages per domain (outbox, templates, delivery, preferences), and a separate repo for the mobile SDK changes.",
		"Marco wanted separate repos per service.",
		"Separate repos cost us shared-types drift and three CI setups. With one module, each binary still deploys independently. I'd keep one repo until there's a team boundary."},
	{"Let's talk about the outbox relay.",
		"The relay polls the outbox table with SELECT … FOR UPDATE SKIP LOCKED in batches of 500, publishes to Kafka, and marks rows sent in the same transaction. Kafka's idempotent producer handles retries; consumers dedupe by notification id.",
		"Why not logical replication / CDC instead of polling?",
		"CDC (Debezium) removes polling latency but adds a component to operate. At our rate, polling every 100 ms keeps the relay lag well under our latency target. We can switch later without changing producers or consumers."},
	{"What's the plan for the per-user marketing cap?",
		"A counter per user per day in Postgres, incremented in the same transaction as the outbox insert; a marketing send over the cap is rejected with 429 and a reason code.",
		"Not Redis?",
		"Redis would be faster but the counter must be consistent with the outbox write — a crash between the two would either lose the cap or send without counting. Postgres keeps it atomic."},
	{"Residency routing — how exactly?",
		"Every user has a residency attribute from the account service. The API looks it up (cached for 5 minutes) before writing anything, and forwards EU users' requests to the EU deployment. Unknown residency is treated as EU.",
		"Treating unknown as EU is smart. What if the account service is down?",
		"Then the API fails closed for users not in the cache: 503 with Retry-After. Sending to the wrong region would be worse than a delayed notification."},
	{"Security review — what will they ask?",
		"Device token storage (encrypted at rest with KMS), who can publish templates, the API authentication (mTLS between services plus per-sender API keys), and the data retention policy.",
		"Book it for the week after M1.",
		"I'll check the calendar for the security team's slots."},
	{"Mobile SDK changes: what's needed?",
		"Token registration against the new endpoint, a notification-opened callback with the notification id, and in-app message rendering. About three weeks of work for one engineer.",
		"Aiko is half-time until April.",
		"Then token registration first — it's needed for the beta — and in-app rendering after April. I'll put that on the risk list with a mitigation: a contractor from the one-time budget if it slips."},
	{"What's the migration order for senders?",
		"By risk: internal notifications first (ops alerts), then transactional low-volume (password reset), then order updates, and marketing campaigns last because they have the biggest volume and the cap logic.",
		"Password reset is critical though.",
		"True — it's low volume but high impact. We can shadow it longer and cut over only after a week of identical renders."},
	{"How do we compare Beacon and Lighthouse output in shadow mode?",
		"Render both, normalise whitespace, and diff; record per-template mismatch rates on a dashboard. A template can only cut over when its mismatch rate is zero for seven days.",
		"Zero might be too strict for templates with timestamps.",
		"Good point: the diff masks timestamps and tracking parameters. Everything else must match."},
	{"Do we need a UI for templates?",
		"Not for v1: Git plus the preview endpoint covers the authors we have (four people). A UI is a Q3 question once marketing writes their own.",
		"Marketing will ask for it on day one.",
		"Then let's give them a read-only gallery with previews — cheap to build from the preview endpoint — and keep editing in Git."},
	{"How do we handle time zones and quiet hours?",
		"Marketing notifications respect quiet hours in the user's local time (21:00–08:00) and are delayed, not dropped. Transactional messages ignore quiet hours.",
		"What if we don't know the user's time zone?",
		"Fall back to the time zone of their country, and to UTC if we know nothing. It's a small share of users."},
	{"What does on-call need before beta?",
		"Runbooks for the five alerts, a dashboard per channel, a way to pause a sender without a deploy (a feature flag), and a replay tool for the Kafka topic.",
		"The replay tool sounds like scope creep.",
		"It's small: consume from an offset range and re-publish to the delivery consumers. Without it, recovering from a provider outage is manual SQL."},
	{"Let's look at the staffing plan for the contractor budget.",
		"Two options: one senior contractor for 10 weeks on the relay and load tests, or two mid-level for 6 weeks on the SDK and shadow-mode tooling.",
		"The SDK is the risk. Let's do the second option.",
		"Recorded: two mid-level contractors for about 6 weeks, focused on the mobile SDK and shadow-mode tooling."},
	{"Data model review: what are the main tables?",
		"notifications (id, user_id, sender, template_key, template_version, channel, status, created_at), outbox (notification_id, payload, published_at), deliveries (notification_id, provider, provider_message_id, status, error_code), preferences (user_id, channel, category, enabled).",
		"Index on notifications by user for support lookups?",
		"Yes, (user_id, created_at DESC), and a partial index on status for the stuck-notification alert."},
	{"What's our plan for email deliverability?",
		"Dedicated sending domain with SPF, DKIM and DMARC, a warm-up schedule for the new IPs over two weeks, and bounce/complaint handling that disables an address after a hard bounce.",
		"Who owns the DNS changes?",
		"Sam's team; I'll file a ticket with the exact records."},
	{"Risks review — top five.",
		"1) Mobile SDK capacity. 2) Residency routing bugs (a compliance issue, not just an outage). 3) Template parity with Beacon's ~180 templates, many unused. 4) APNs certificate expiry. 5) Load-test environment cost.",
		"For 3: let's delete unused templates first.",
		"Good idea: Beacon's logs show which templates sent anything in the last 90 days. Anything silent gets archived, not migrated."},
	{"Communication plan for the beta.",
		"A changelog entry for sender teams, an internal demo at M3, and a weekly status note. Users shouldn't notice anything, so no external communication.",
		"Weekly status every Friday.",
		"Recorded: status note every Friday, starting next week."},
	{"What's the definition of done for GA?",
		"All senders migrated, Beacon in read-only mode, SLOs met for 14 days, runbooks reviewed by on-call, security review closed, and the cost dashboard within the monthly cap.",
		"Add: support can look up any notification by user in under a minute.",
		"Added. That needs the support lookup page, which I'll add to M4."},
	{"Decommissioning Beacon: what does it involve?",
		"Freeze, migrate the last senders, export 90 days of history for support, shut down the Sidekiq workers, snapshot and delete the MySQL database after a retention hold.",
		"Legal wants 12 months of delivery logs.",
		"Then we export delivery metadata (no content) to the data warehouse before deleting the database."},
	{"Let's review the budget line by line.",
		"Database ~$1,950, MSK ~$1,600, compute ~$2,600, SES ~$300, data transfer ~$500, observability ~$900: roughly $7,850/month at full traffic, with headroom for the EU deployment.",
		"The EU deployment duplicates most of that.",
		"Right — with two regions we're closer to $14,000/month, still under the cap but with less headroom than I suggested. I'll update the estimate with both regions."},
}

// rounds appends n quick exchanges.
func (p *pln) rounds(n int) {
	g := p.g
	for ; n > 0; n-- {
		qa := &plnQuick[g.intn(len(plnQuick))]
		g.user(p.question(qa.q))
		g.assistant(g.fill(g.pick(qa.a...)))
		p.ack()
	}
}

// question returns q, or a revisit of it when it was asked before.
func (p *pln) question(q string) string {
	g := p.g
	if p.asked == nil {
		p.asked = map[string]int{}
	}
	p.asked[q]++
	if p.asked[q] > 1 {
		return g.fill("{Coming back to|Revisiting|Once more on} {this|an earlier point}: ") + strings.ToLower(q[:1]) + q[1:] +
			g.fill("{| Things changed a bit since we last discussed it.| Marco had concerns.| I want to double-check.}")
	}
	return q
}

// ack sometimes adds an acknowledgement, and sometimes the assistant's
// reply to it.
func (p *pln) ack() {
	g := p.g
	if g.chance(0.4) {
		g.user(g.sprinkle(plnAcks))
		if g.chance(0.4) {
			g.assistant(g.sprinkle([]string{
				"Noted.", "I'll add it to the open questions.", "Recorded in the decision log.",
				"{Anything else on this?|Moving on?}", "Parked; I'll bring it back at the review.",
			}))
		}
	}
}

// agendaItem plays one scripted exchange, with the odd tool call.
func (p *pln) agendaItem(lines []string) {
	g := p.g
	for i, l := range lines {
		if i%2 == 0 {
			g.user(l)
		} else {
			g.assistant(l)
		}
	}
	switch g.intn(4) {
	case 0:
		p.ticket++
		id := fmt.Sprintf("LH-%d", 100+p.ticket)
		title := strings.TrimSuffix(lines[0], "?")
		title = strings.TrimSuffix(title, ".")
		g.user(g.fill("{Can you file a ticket for that?|Ticket please.|Put that in the backlog.}"))
		g.tool("", "create_ticket", fmt.Sprintf("Created %s: %q in project LH (epic LH-1)", id, title),
			"project", "LH", "title", title, "description", "See the planning thread for context and the decision log.")
		g.assistant(fmt.Sprintf("Filed %s and linked it to the epic.", id))
	case 1:
		g.tool("Let me check the wiki for anything relevant.", "search_docs", g.pick(
			"Engineering handbook: Kafka topics — naming <domain>.<entity>.v<N>; retention 7 days by default; partitions sized for 2x expected peak.",
			"Runbook template: symptoms, dashboards, first checks, mitigation, escalation contacts, links to past incidents.",
			"Security review checklist: data classification, authn/authz, secrets, logging of personal data, retention, third parties.",
			"Postmortem: Payments gateway migration (2025-09) — shadow traffic caught 11 parity bugs; cut-over slipped 2 weeks because a certificate was not renewed in time.",
		), "query", strings.ToLower(strings.TrimSuffix(lines[0], "?")))
		g.assistant(g.pick("The wiki agrees with the plan; I linked the page in the notes.", "One useful point from the wiki added to the notes.", "Nothing that changes the plan, but I linked it for reference."))
	}
	p.ack()
}
