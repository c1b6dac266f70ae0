package main

import (
	"fmt"
	"time"
)

// writeHosting is technical support over half a year: Priya, the CTO of a
// small analytics company, and Skye, the AI support agent of a managed
// PostgreSQL host, ticket after ticket — a migration, two incidents, a
// major upgrade, billing, access changes. Each ticket is a session; the
// facts (plan, limits, root causes, names, dates) come up once, among
// routine questions and tool look-ups.
func writeHosting(g *gen) {
	g.conv = "conv-support-fernleaf"
	g.prefix = "hs"
	g.now = time.Date(2024, 1, 9, 9, 41, 17, 77_000_000, time.UTC)
	g.system("You are Skye, the support agent of Skyforge Cloud, a managed PostgreSQL and app hosting provider. You help customers in the support chat. Tools: get_account(org), get_cluster(cluster_id), query_metrics(cluster_id, metric, window), list_invoices(org), create_ticket(org, summary, severity). Be precise, quote numbers from the tools, and escalate to a human engineer when a change needs one.")

	h := &hosting{g: g}
	d := newDeck(g, len(hostingFAQ))
	s := &storyline{g: g, minGap: 5, maxGap: 12, fromHour: 7, toHour: 17, fillLo: 2, fillHi: 4, tailLo: 4, tailHi: 7,
		filler: func() {
			switch g.intn(4) {
			case 0:
				h.metrics()
			case 1:
				h.logs()
			default:
				g.talk(hostingFAQ[d.draw()]...)
			}
		},
		opening: func(k int) {
			g.chat("u:{Hi, Priya from Fernleaf again.|Hello! Priya Raman, Fernleaf Analytics.|Hi Skye, it's Priya (Fernleaf).|Morning. Priya from Fernleaf here.} {Got a few things today.|Quick question, hopefully.|Need some help with our cluster.|Another one for you.}",
				"a:{Hi Priya, good to see you again!|Hello Priya, welcome back.|Hi Priya! I have your account open.} {What can I do for you?|How can I help today?|What's going on?}")
			if g.chance(0.4) {
				g.tool("", "get_account", fmt.Sprintf(`{"org":"fernleaf-analytics","contact":"Priya Raman","clusters":["pg-fernleaf-prod","pg-fernleaf-staging"],"open_tickets":%d,"status":"active"}`, g.intn(3)), "org", "fernleaf-analytics")
			}
		},
		closing: func(k int) {
			g.chat("a:{Is there anything else I can help with?|Anything else on your list today?|Can I help with anything else?}",
				"u:{No, that's all. Thanks!|That's it for now, thank you.|All good, thanks Skye.|Nope. Great help as always.}",
				"a:{Great. Have a good day, Priya!|You're welcome. Take care!|Happy to help. Talk soon!}")
		},
	}

	var planID, slotID, creditID string
	s.run([][]func(){
		{ // 1: the migration
			func() {
				planID = g.user("We're moving our main Postgres database from Heroku to you this month. We signed up for the Growth plan last week. What do I need to know before the move?")
				where := g.tool("", "get_cluster", `{"cluster_id":"pg-fernleaf-prod","plan":"growth","engine":"postgres 14.10","storage_gb":500,"vcpu":8,"ram_gb":32,"region":"eu-central (Frankfurt)","ha":"primary + 1 standby","max_connections":400}`, "cluster_id", "pg-fernleaf-prod")
				welcome := g.assistant("Welcome aboard! Your database cluster pg-fernleaf-prod is ready: Postgres 14.10, 8 vCPU, 32 GB RAM, 500 GB storage, a primary with one hot standby, in our eu-central region in Frankfurt. For the move I'd suggest logical replication from Heroku so the cutover takes minutes, not hours.")
				g.talk("u:Logical replication it is. Is there a limit on connections?",
					"a:max_connections is set to 400 connections on your plan. With a pooler in front you'll rarely need more than a fraction of that.")
				g.ask(catWhere, "In which city is the company's main database hosted?", []string{"Frankfurt"}, welcome, where)
				g.ask(catHowMany, "What's the maximum number of database connections on their plan?", []string{"400 connections"}, g.msgs[len(g.msgs)-1].ID)
			},
		},
		{ // 2: cutover
			func() {
				ev := g.user("Cutover done! We moved the database off Heroku at 22:00 last night and the app has been on your cluster since 22:14. Replication lag was zero at the switch.")
				g.talk("a:Congratulations, that's a very clean cutover. I can see steady traffic on pg-fernleaf-prod since 22:14 UTC.", "u:The team is celebrating with terrible office pizza.")
				g.askWhen("When did the company's database go live at Skyforge?", []string{"Heroku"}, ev)
			},
			func() {
				ev := g.assistant("One more thing: you now have a dedicated account manager, Tomasz Wójcik. He'll reach out this week to set up a quarterly review.")
				g.talk("u:Great, thanks.")
				g.ask(catWho, "Who is the account contact for Priya's company at Skyforge?", []string{"Tomasz Wójcik"}, ev)
			},
		},
		{ // 3: incident 1
			func() {
				g.user("URGENT: our app is down, every write fails with 'could not extend file: No space left on device'!")
				g.tool("", "query_metrics", `{"cluster_id":"pg-fernleaf-prod","metric":"disk_used_pct","window":"6h","points":[71,74,79,86,93,100],"pg_wal_dir_gb":180,"largest":"pg_wal"}`, "cluster_id", "pg-fernleaf-prod", "metric", "disk_used_pct", "window", "6h")
				slotID = g.assistant("I see it: the production disk hit 100% about forty minutes ago, and the culprit is pg_wal holding 180 GB. An inactive logical replication slot, airbyte_slot, is keeping the WAL from being recycled. I've escalated to an engineer to drop the slot and grow the volume right now.")
				g.talk("u:Airbyte! We stopped using it two weeks ago and never removed the slot. Ugh. Go ahead.",
					"a:Done: the slot is dropped, WAL is recycling, storage grew to 750 GB as a buffer, and writes are succeeding again.",
					"u:Thank you. That was a scary hour.")
				g.askWhen("When did the production database run out of storage?", []string{"disk hit 100%"}, slotID)
				g.ask(catWhat, "What turned out to be the cause of the storage outage?", []string{"airbyte_slot"}, slotID)
				g.ask(catHowMany, "How much write-ahead log had piled up when the storage filled?", []string{"180 GB"}, slotID)
			},
		},
		{ // 4: credit
			func() {
				g.user("Following up on the outage: our contract has an SLA. Are we due anything?")
				creditID = g.assistant("Yes. The outage lasted 46 minutes, which breaks the 99.95% monthly SLA, so I've applied a service credit of $350 to your next invoice. You'll see it as a separate line.")
				g.talk("u:That's fair, thank you. Even though it was our slot.", "a:The alerting should have warned you long before the disk filled, so we share that one. I've also added a disk alert at 80% for you.")
				g.ask(catHowMany, "How much did Skyforge give back for the downtime?", []string{"$350"}, creditID)
			},
		},
		{ // 5: SSO
			func() {
				ev := g.user("We want single sign-on for the Skyforge console. Our identity provider is Okta; everyone logs in with it already.")
				g.talk("a:SAML SSO is included on Growth. I'll send you the metadata URL; once you add the app on your side, logins are enforced per organisation.", "u:Perfect, our IT person will set it up today.")
				g.ask(catWhat, "Which service does Priya's company use to log its people in?", []string{"Okta"}, ev)
			},
		},
		{ // 6: new DBA
			func() {
				ev := g.user("Please give admin rights on both clusters to our new database administrator, Mateo Ruiz (mateo@fernleaf.example). He started on Monday.")
				g.talk("a:Done. Mateo has the admin role on pg-fernleaf-prod and pg-fernleaf-staging; he'll get an invitation email.", "u:Thanks!")
				g.ask(catWho, "Who joined Priya's team to look after the databases?", []string{"Mateo Ruiz"}, ev)
			},
		},
		{ // 7: maintenance window
			func() {
				ev := g.assistant("I've set your maintenance window to Sundays 02:00–04:00 UTC as you asked. Minor version patches will only be applied then, with 7 days' notice.")
				g.talk("u:Great, that's our quietest time.")
				g.ask(catWhat, "What weekly time slot did they agree on for planned work?", []string{"Sundays 02:00–04:00 UTC", "02:00–04:00"}, ev)
			},
			func() {
				ev := g.user("How many standbys do we have? Our auditor asks.")
				g.talk("a:One hot standby in a second availability zone, synchronous replication, automatic failover in under 30 seconds.", "u:Thanks, that's what I told him.")
				_ = ev
			},
		},
		{ // 8: upgrade planning
			func() {
				ev := g.user("We'd like to do the major version upgrade from 14 to PostgreSQL 16 this quarter. Mateo wants the new logical replication features.")
				g.talk("a:Good choice. I'd rehearse it on staging first: we take a snapshot, run pg_upgrade on a copy, and you run your test suite against it.", "u:Let's do staging next week.")
				g.ask(catWhat, "Which release of the database did they decide to go to?", []string{"PostgreSQL 16"}, ev)
			},
		},
		{ // 9: staging rehearsal
			func() {
				ev := g.assistant("The rehearsal on staging went through: pg_upgrade took 11 minutes for your 420 GB, and all 1,834 of your tests passed against the upgraded copy.")
				g.talk("u:Amazing. Then let's book production.", "a:I'll propose the next maintenance window.")
				g.ask(catHowMany, "How many automated checks were green in the trial run?", []string{"1,834"}, ev)
			},
			func() {
				ev := g.user("By the way, where is the staging cluster physically? Legal asked.")
				res := g.tool("", "get_cluster", `{"cluster_id":"pg-fernleaf-staging","plan":"growth","engine":"postgres 14.10","region":"eu-west (Amsterdam)","ha":"single node"}`, "cluster_id", "pg-fernleaf-staging")
				ans := g.assistant("Staging runs in our eu-west region, in Amsterdam, as a single node without a standby.")
				g.ask(catWhere, "Where does the test environment run?", []string{"Amsterdam"}, ans, res)
				_ = ev
			},
		},
		{ // 10: production upgrade
			func() {
				ev := g.assistant("Production upgrade complete: pg-fernleaf-prod is on 16.2 since 02:37 UTC this morning, in the extra window you approved. Total write downtime was 9 minutes. I've run ANALYZE on all tables so the planner has fresh statistics.")
				g.talk("u:Smooth as butter. Thanks to the whole team!")
				g.askWhen("When was production moved to the new major version?", []string{"16.2"}, ev)
			},
		},
		{ // 11: slow dashboard
			func() {
				g.user("Since the upgrade one dashboard is slow: the 'accounts overview' page takes 8 seconds.")
				g.tool("", "query_metrics", `{"cluster_id":"pg-fernleaf-prod","metric":"top_queries","window":"24h","top":[{"query":"SELECT ... FROM events WHERE account_id = $1 AND created_at > $2","calls":48210,"mean_ms":7412,"plan":"Seq Scan on events"}]}`, "cluster_id", "pg-fernleaf-prod", "metric", "top_queries", "window", "24h")
				ev := g.assistant("Found it: the query filters events by account_id and does a sequential scan over 310 million rows. An index on events.account_id (with created_at as the second column) should bring it down to milliseconds. Create it CONCURRENTLY so writes aren't blocked.")
				g.talk("u:Mateo is creating it now.", "u:Done, the page loads in 120 ms. Wow.")
				g.ask(catWhat, "On which field was something added to speed up the slow page?", []string{"events.account_id"}, ev)
			},
		},
		{ // 12: backups
			func() {
				ev := g.assistant("Point-in-time recovery was 14 days on your plan; as of today it's extended to 30 days of retention, and the add-on is on your next invoice.")
				g.talk("u:Thanks, the auditor will be happy.")
				g.ask(catHowMany, "For how long can they now restore the database to any point in time?", []string{"30 days"}, ev)
			},
		},
		{ // 13: incident 2 (network)
			func() {
				g.user("Last night our app had connection errors for about 20 minutes. What happened?")
				ev := g.assistant("A network switch in one of the eu-central zones failed at 01:48 UTC. Our on-call engineer, Rafael Costa, moved the traffic to the other path; connections recovered at 02:09 UTC. The post-incident report will be on the status page.")
				g.talk("u:Thanks for the honesty. Please send me the report when it's out.")
				g.ask(catWho, "Who fixed the connection problem during the night?", []string{"Rafael Costa"}, ev)
			},
		},
		{ // 14: billing dispute
			func() {
				g.user("Our March invoice charges egress twice. Can you check?")
				g.tool("", "list_invoices", `{"org":"fernleaf-analytics","invoices":[{"id":"INV-2024-03-1187","total_usd":3112.40,"lines":["growth plan","storage 750GB","egress 1.9TB","egress 1.9TB (duplicate?)","pitr 30d"]}]}`, "org", "fernleaf-analytics")
				tk := g.tool("", "create_ticket", `{"ticket":"SKY-48213","queue":"billing","status":"open"}`, "org", "fernleaf-analytics", "summary", "Duplicate egress line on INV-2024-03-1187", "severity", "low")
				ev := g.assistant("You're right, egress appears twice. I've opened billing ticket SKY-48213; billing will issue a corrected invoice within 3 business days.")
				g.ask(catWhat, "What is the ticket number of the invoice complaint?", []string{"SKY-48213"}, ev, tk)
			},
		},
		{ // 15
			func() {
				ev := g.user("News: we're opening an office in Lisbon in September. Would a read copy closer to Portugal help the team there?")
				g.talk("a:The nearest region to Portugal is eu-south in Madrid. A read replica there would cut their latency from about 45 ms to about 12 ms.", "u:Let me think about the cost.")
				g.ask(catWhere, "Where is Priya's company opening a new office?", []string{"Lisbon"}, ev)
			},
		},
		{ // 16: new pricing
			func() {
				ev := g.assistant("With the Madrid replica and the larger storage, your monthly bill would be $2,840 from next month, before the annual discount.")
				g.talk("u:That works. Go ahead with the replica.")
				g.ask(catHowMany, "How much will Priya's company pay each month from then on?", []string{"$2,840"}, ev)
			},
		},
		{ // 17: pgvector
			func() {
				ev := g.user("Can you enable the pgvector extension on production? We're adding similarity search to the product.")
				g.talk("a:It's available on 16.2; run CREATE EXTENSION vector; as the admin user. HNSW indexes work too.", "u:Perfect.")
				g.ask(catWhat, "What did Priya ask to switch on in production for the new feature?", []string{"pgvector"}, ev)
			},
		},
		{ // 18: contract
			func() {
				ev := g.user("We signed the annual contract today, so please apply the yearly discount from this invoice on.")
				g.talk("a:Congratulations, and thank you for the trust! The 15% annual discount is active from today's invoice.", "u:Thanks!")
				g.askWhen("When did Priya's company sign up for a whole year?", []string{"annual"}, ev)
			},
		},
		{ // 19: new CFO
			func() {
				ev := g.user("From now on, invoices should go to our new CFO, Grace Lin (grace.lin@fernleaf.example), not to me.")
				ids := g.talk("a:Updated: Grace Lin is the billing contact; you stay the technical contact.", "u:Great.")
				g.ask(catWho, "Who gets the invoices from now on?", []string{"Grace Lin"}, ev, ids[0])
			},
		},
		{ // 20: size
			func() {
				ev := g.assistant("Your production database is now 1.2 TB, growing about 60 GB a month, so you have roughly eight months before the 1.7 TB mark where I'd resize.")
				g.talk("u:Good to know, I'll put it in our planning.")
				g.ask(catHowMany, "How large is the main database at the end of the period?", []string{"1.2 TB"}, ev)
			},
		},
	})
	_, _, _ = planID, slotID, creditID
}

// hosting writes the routine parts of the support chat.
type hosting struct{ g *gen }

// metrics is a routine look at the cluster's graphs.
func (h *hosting) metrics() {
	g := h.g
	metric := g.pick("cpu_pct", "p95_query_ms", "active_connections", "replication_lag_ms", "cache_hit_ratio")
	g.user(g.fill("{Can you check|Could you look at|What does it say about} the " + map[string]string{
		"cpu_pct": "CPU", "p95_query_ms": "query latency", "active_connections": "connection count",
		"replication_lag_ms": "standby lag", "cache_hit_ratio": "cache hit ratio"}[metric] + " {on production|over the last day|this week}?"))
	var pts []int
	base := map[string]int{"cpu_pct": 35, "p95_query_ms": 22, "active_connections": 120, "replication_lag_ms": 3, "cache_hit_ratio": 97}[metric]
	for i := 0; i < 24; i++ {
		pts = append(pts, base+g.intn(base/3+2))
	}
	g.tool("", "query_metrics", fmt.Sprintf(`{"cluster_id":"pg-fernleaf-prod","metric":"%s","window":"24h","points":%s}`, metric, intsJSON(pts)),
		"cluster_id", "pg-fernleaf-prod", "metric", metric, "window", "24h")
	maxv := 0
	for _, p := range pts {
		if p > maxv {
			maxv = p
		}
	}
	switch metric {
	case "cpu_pct":
		g.assistant(fmt.Sprintf("CPU peaked at %d%% over the last day and averages well below that. There's plenty of headroom.", maxv))
	case "p95_query_ms":
		g.assistant(fmt.Sprintf("p95 query latency stayed between %d and %d ms. Nothing unusual.", pts[0], maxv))
	case "active_connections":
		g.assistant(fmt.Sprintf("Active connections peaked at %d, comfortably under your limit. The pooler is doing its job.", maxv))
	case "replication_lag_ms":
		g.assistant(fmt.Sprintf("Standby lag never went above %d ms, so failover would lose nothing.", maxv))
	default:
		g.assistant(fmt.Sprintf("The cache hit ratio is around %d%%; your working set fits in memory.", pts[0]%100))
	}
	if g.chance(0.5) {
		g.user(g.pick("Good, thanks.", "Ok, that's reassuring.", "Great, that's what I hoped.", "Thanks, just wanted to be sure."))
	}
}

func intsJSON(xs []int) string {
	s := "["
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(x)
	}
	return s + "]"
}

// hostingFAQ are the routine questions of the support chat.
var hostingFAQ = [][]string{
	{"u:{How do I rotate the database password without downtime?|What's the safest way to rotate credentials?}", "a:{Create a second role with the same grants, switch your app to it, then drop or reset the old one. No restart needed on our side.|Use two roles: add the new one, deploy the app with it, then retire the old. We can't rotate in place without a short disconnect.}", "u:{Makes sense, thanks.|Perfect, we'll do that.}"},
	{"u:{Is there a status page we can subscribe to?|Where do you announce incidents?}", "a:{status.skyforge.example has every incident and maintenance; you can subscribe by email, RSS or a webhook.|Everything is on the status page, status.skyforge.example. The webhook option is handy for your chat.}", "u:{Subscribed.|We'll hook it up to our Slack.}"},
	{"u:{Do you support PgBouncer?|Should we run a connection pooler?}", "a:{Yes, every cluster has a built-in PgBouncer on port 6432 in transaction mode. Point your app there instead of 5432.|I'd recommend it: use the built-in pooler on port 6432. Transaction mode suits most web apps.}", "u:{Great, switching over.|Ok, we'll try transaction mode.}"},
	{"u:{Can we get read-only credentials for our BI tool?|How do I give our analysts read-only access?}", "a:{Create a role with pg_read_all_data, or grant SELECT on the schemas they need. Point the BI tool at the standby to keep load off the primary.|The simplest is GRANT pg_read_all_data TO analyst_role; I'd connect them to the standby endpoint.}", "u:{Good idea about the standby.|Thanks, Mateo will set it up.}"},
	{"u:{How do I see slow queries?|Is pg_stat_statements enabled?}", "a:{pg_stat_statements is on by default; the console's Query Insights page shows the top queries by total time.|Yes, it's enabled. Query Insights in the console sorts queries by total and mean time.}", "u:{Found it, very useful.|Oh nice, hadn't seen that page.}"},
	{"u:{Can I download a backup to run locally?|How do we get a copy of the data for local testing?}", "a:{You can trigger a logical dump from the console; it lands in a signed URL valid for 24 hours. For big databases, restore a snapshot to a temporary cluster instead.|Restore a snapshot to a temporary cluster and dump what you need from there; it avoids load on production.}", "u:{We'll use a temporary cluster.|Ok, that's cleaner.}"},
	{"u:{What's the difference between the standby and a read replica?|Can the standby serve reads?}", "a:{The standby is for failover and is synchronous; it can serve reads, but long queries there can be cancelled. A read replica is asynchronous and better for heavy analytics.|It can, with hot_standby on, but queries may be cancelled during replay. For reporting, a separate read replica is better.}", "u:{Understood.|Good to know, thanks.}"},
	{"u:{Do you have a Terraform provider?|Can we manage clusters as code?}", "a:{Yes: the skyforge Terraform provider covers clusters, roles, networks and alerts.|Our Terraform provider manages clusters, firewall rules and alerts; there's an example repository in the docs.}", "u:{We'll look into it.|Nice, we use Terraform for everything else.}"},
	{"u:{Can you whitelist our office IP?|How do I restrict access to our IP ranges?}", "a:{Add the ranges under Networking → Allowed IPs in the console; changes apply within a minute.|In the console under Networking you can add CIDR ranges; everything else is rejected at the edge.}", "u:{Done, thanks.|Great.}"},
	{"u:{Is the data encrypted at rest?|What encryption do you use?}", "a:{Yes, AES-256 at rest on every volume and snapshot, and TLS 1.2+ in transit, enforced.|Volumes and backups are encrypted with AES-256, and connections require TLS.}", "u:{Perfect for our security questionnaire.|Thanks, that answers the auditor.}"},
	{"u:{Why did our autovacuum run for hours last night?|Autovacuum seems busy on the events table.}", "a:{The events table is large and write-heavy; autovacuum has to work through dead tuples. Lowering autovacuum_vacuum_scale_factor for that table makes it run more often and shorter.|It's working through a lot of dead rows. A table-specific scale factor of 0.02 would make runs smaller and more frequent.}", "u:{We'll tune it for that table.|Mateo will change it.}"},
	{"u:{Can we get an alert when the standby lags?|How do we set up alerts?}", "a:{Under Alerts you can set thresholds on lag, disk, CPU and connections, delivered by email or webhook.|Alerts live in the console; I'd add one on replication lag above 5 seconds.}", "u:{Set up, thanks.|Good idea.}"},
	{"u:{Does a failover change the hostname?|What happens to connections during a failover?}", "a:{The hostname stays the same; DNS points to the new primary within about 30 seconds. Open connections drop, so your app should retry.|Connections drop once and reconnect to the same hostname. Make sure your driver retries.}", "u:{Our driver retries, good.|We'll double-check the retry settings.}"},
	{"u:{Sorry for the delay, crazy day at the office.|Sorry, I had to step out of the office for a bit.|Back at the office after a week of customer visits.}", "a:{No problem at all, I'm here whenever you are.|No worries. Where were we?|Welcome back!}", "u:{Thanks. Where was I...|Right, back to it.|Good to be back, I think.}"},
	{"u:{Half the office is out with the flu this week.|We're moving to a bigger office next month.|The office wifi died, I'm on my phone hotspot.}", "a:{Oh no, I hope everyone gets well soon.|Congratulations, that sounds like growth!|Ouch. Let's keep it short then.}", "u:{Thanks, it's been rough.|It is, we've doubled in a year.|Much appreciated.}"},
	{"u:{Hope you're having a good week!|Thanks for always being quick.}", "a:{I am, thank you! How's life at Fernleaf?|That's kind of you, thank you!}", "u:{Busy, but good. Big customer launch coming up.|We appreciate it, honestly.}"},
	{"u:{What's your support SLA on our plan?|How fast do you answer urgent tickets?}", "a:{Urgent tickets on your plan get a human engineer within 30 minutes, any time of day.|For severity 1 a human engineer responds within 30 minutes, around the clock.}", "u:{Good to know for the audit.|Great.}"},
	{"u:{Can we test a failover ourselves?|Is there a way to trigger a failover manually?}", "a:{Yes, the console has a 'Test failover' button; it promotes the standby and rebuilds a new one. Expect about 30 seconds of disconnects.|You can trigger one from the console or the API. Do it in your maintenance window to be safe.}", "u:{We'll schedule one.|Nice, our SRE will love that.}"},
	{"u:{Do you support logical decoding for change data capture?|Can we stream changes to our warehouse?}", "a:{Yes, wal_level is logical on your cluster. Just remember to drop replication slots you stop using, or they keep WAL forever.|You can, with a logical slot. Monitor slots: an inactive one holds WAL and fills the disk.}", "u:{Lesson learned already, believe me.|Yes, we know that one the hard way.}"},
	{"u:{How much does extra storage cost?|What's the price per GB?}", "a:{Storage is $0.20 per GB-month on your plan, billed hourly, and it can be grown without downtime.|$0.20 per GB-month, grown online, no restart.}", "u:{Reasonable.|Ok, thanks.}"},
}

// logs is a look at the server log around something the customer saw.
func (h *hosting) logs() {
	g := h.g
	what := g.intn(4)
	g.user([]string{
		"We saw a few failed requests around lunchtime. Anything in the database logs?",
		"Our job runner logged some 'canceling statement' errors last night. Can you check the Postgres log?",
		"A developer says his migration hung for a while this morning. Can you see why?",
		"Can you check the logs for connection errors in the last hours? Our monitoring had a blip.",
	}[what])
	var b []string
	day := g.now.Format("2006-01-02")
	for i := g.between(8, 14); i > 0; i-- {
		ts := fmt.Sprintf("%s %02d:%02d:%02d.%03d UTC", day, g.intn(24), g.intn(60), g.intn(60), g.intn(1000))
		pid := 10000 + g.intn(50000)
		var line string
		switch what {
		case 0:
			line = fmt.Sprintf("%s [%d] app@fernleaf LOG:  duration: %d.%03d ms  statement: SELECT id, name, plan FROM accounts WHERE id = $1", ts, pid, 200+g.intn(900), g.intn(1000))
		case 1:
			line = fmt.Sprintf("%s [%d] jobs@fernleaf ERROR:  canceling statement due to statement timeout\n%s [%d] jobs@fernleaf STATEMENT:  UPDATE reports SET status = 'done' WHERE batch_id = %d", ts, pid, ts, pid, 1000+g.intn(9000))
		case 2:
			line = fmt.Sprintf("%s [%d] migrate@fernleaf LOG:  process %d still waiting for AccessExclusiveLock on relation %d of database 16384 after %d.%03d ms", ts, pid, pid, 16400+g.intn(300), 1000+g.intn(4000), g.intn(1000))
		default:
			line = fmt.Sprintf("%s [%d] [unknown]@[unknown] LOG:  could not receive data from client: Connection reset by peer", ts, pid)
		}
		b = append(b, line)
	}
	g.tool("", "query_logs", joinLines(b), "cluster_id", "pg-fernleaf-prod", "window", "12h", "filter", []string{"duration", "ERROR", "lock", "connection"}[what])
	g.assistant([]string{
		"The log shows a handful of slow account look-ups, each a few hundred milliseconds, all while a large report was running. Nothing failed on the database side; the failures were probably your app's 500 ms timeout.",
		"Those are statement timeouts: the report updates ran longer than your 30 s statement_timeout. Either batch them smaller or raise the timeout for that role only.",
		"The migration waited for an exclusive lock on a table that a long transaction was reading. Set lock_timeout in your migrations so they fail fast instead of queueing everything behind them.",
		"Those are clients dropping connections, not the server: 'connection reset by peer' means the other side went away. It matches your app's deploy at that time.",
	}[what])
	if g.chance(0.5) {
		g.user(g.pick("That explains it, thanks.", "Ok, we'll fix that on our side.", "Good, so not your problem then.", "Thanks, I'll pass it on."))
	}
}

func joinLines(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += "\n"
		}
		out += x
	}
	return out
}
