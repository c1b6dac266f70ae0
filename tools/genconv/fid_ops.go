package main

import (
	"fmt"
	"strings"
	"time"
)

// writeOpsAgent is an operations agent with tools (OpenAI-style
// tool_calls and tool results) looking after a small online tea shop's
// servers for its owner over seven months: disks, backups, certificates,
// a server move, a PHP upgrade, incidents, access for new people. Many
// facts live only in tool output (df, crontab, SQL results), and the
// routine checks between them are tool calls too.
func writeOpsAgent(g *gen) {
	g.conv = "conv-ops-bramble"
	g.prefix = "ops"
	g.now = time.Date(2025, 3, 3, 8, 5, 40, 640_000_000, time.UTC)
	g.system("You are Rook, the operations agent of Bramble & Co, an online tea shop (PHP on nginx, MariaDB, a nightly backup job). You work for Dev Malhotra, the owner. Tools: run_shell(host, command) on web-01, web-02, db-01; read_file(host, path); sql_query(query) on the shop database (read-only); http_get(url). Explain what you find in plain words, never run destructive commands without asking, and say what you changed.")

	o := &ops{g: g, web: "web-01"}
	s := &storyline{g: g, minGap: 7, maxGap: 15, fromHour: 7, toHour: 16, fillLo: 2, fillHi: 3, tailLo: 4, tailHi: 6,
		filler: func() { o.routine() },
		opening: func(k int) {
			g.chat("u:{Morning Rook.|Hi Rook!|Hey Rook, got some time?|Rook, a few things for today.} {Quick health check first?|Can you start with a health check?|How are the servers doing?|Everything ok overnight?}")
			o.health()
		},
		closing: func(k int) {
			g.chat("u:{That's all for today, thanks.|Great, thanks Rook.|Perfect. Talk next week.|Thanks, that's everything.}",
				"a:{You're welcome. I'll keep an eye on the alerts.|Anytime. Everything is green right now.|Glad to help. Have a good day, Dev.}")
		},
	}

	s.run([][]func(){
		{ // 1: getting to know the servers
			func() {
				g.user("First day working together, so let's start with an inventory of the database server: OS, database version, disk.")
				calls := [][]any{{"run_shell", "host", "db-01", "command", "hostnamectl; mariadb --version"}, {"run_shell", "host", "db-01", "command", "df -h /"}}
				g.parallel("", calls, []string{
					"Static hostname: db-01\n      Icon name: computer-server\n Operating System: Debian GNU/Linux 12 (bookworm)\n          Kernel: Linux 6.1.0-18-amd64\n    Architecture: x86-64\n Hardware Vendor: Hetzner\n  Hardware Model: AX52 (datacenter FSN1-DC14, Falkenstein)\nmariadb  Ver 15.1 Distrib 10.11.6-MariaDB, for debian-linux-gnu (x86_64)",
					"Filesystem      Size  Used Avail Use% Mounted on\n/dev/nvme0n1p3  938G  612G  279G  69% /",
				})
				ev := g.assistant("db-01 is a Hetzner AX52 in their Falkenstein data centre (FSN1-DC14), running Debian 12 with MariaDB 10.11. The root disk is 938G, 69% used (612G), so about 279G free.")
				g.talk("u:69% already? What's using it?", "a:Mostly the database files and binary logs; I'll dig into it another day if you like.")
				res := g.msgs[len(g.msgs)-5].ID
				df := g.msgs[len(g.msgs)-4].ID
				g.ask(catWhere, "Where is the shop's database server physically located?", []string{"Falkenstein"}, ev, res)
				g.ask(catWhat, "Which database software and version does the shop use?", []string{"MariaDB 10.11"}, ev)
				g.ask(catHowMany, "What is the total size of the disk on the database server?", []string{"938G"}, ev, df)
			},
		},
		{ // 2: backups and certificates
			func() {
				g.user("Where and when do backups run?")
				cron := g.tool("", "run_shell", "# m h  dom mon dow   command\n30 2 * * * /usr/local/bin/backup.sh >> /var/log/backup.log 2>&1\n15 4 * * 0 /usr/local/bin/rotate-binlogs.sh", "host", "db-01", "command", "crontab -l")
				ev := g.assistant("The backup job runs every night at 02:30 (cron line 30 2 * * *) via /usr/local/bin/backup.sh, logging to /var/log/backup.log. Binary logs are rotated on Sundays at 04:15.")
				g.ask(catWhat, "At what time of night does the backup job start?", []string{"30 2 * * *", "at 02:30"}, ev, cron)
			},
			func() {
				g.user("The browser says our certificate expires in 5 days. Can you renew it?")
				ev := g.tool("", "run_shell", "Saving debug log to /var/log/letsencrypt/letsencrypt.log\nRenewing an existing certificate for brambleandco.example and www.brambleandco.example\n\nSuccessfully received certificate.\nCertificate is saved at: /etc/letsencrypt/live/brambleandco.example/fullchain.pem\nThis certificate expires on "+g.now.AddDate(0, 0, 90).Format("2006-01-02")+".\nDeploying certificate... nginx reloaded.", "host", "web-01", "command", "certbot renew --cert-name brambleandco.example --force-renewal")
				g.talk("a:Renewed with certbot: the new certificate is valid for 90 days and nginx has reloaded. The auto-renew timer was disabled, so I've re-enabled it.", "u:Thanks!")
				g.askWhen("When was the website's HTTPS last brought up to date?", []string{"Renewing an existing certificate"}, ev)
			},
		},
		{ // 3
			func() {
				ev := g.user("By the way, DNS is managed by my cousin Farah Haddad, she has the Cloudflare login. If anything DNS-related comes up, write to her.")
				g.talk("a:Noted: DNS changes go through Farah. I'll draft the exact records for her when we need them.")
				g.ask(catWho, "Who controls the domain's DNS settings?", []string{"Farah Haddad"}, ev)
			},
			func() {
				g.user("How many orders did we get in February?")
				ev := g.tool("", "sql_query", "+--------+---------------+\n| orders | revenue_eur   |\n+--------+---------------+\n|   1284 |      38912.40 |\n+--------+---------------+\n1 row in set (0.041 sec)", "query", "SELECT COUNT(*) AS orders, SUM(total) AS revenue_eur FROM orders WHERE created_at >= '2025-02-01' AND created_at < '2025-03-01' AND status <> 'cancelled'")
				ans := g.assistant("February: 1,284 orders (not counting cancellations) for €38,912.40 in revenue.")
				g.ask(catHowMany, "How many orders did the shop receive in the month Dev first asked about?", []string{"1,284", "1284"}, ans, ev)
			},
		},
		{ // 4: webhook bug
			func() {
				g.user("Customers paid but orders stay 'pending payment' since yesterday's nginx change. Help!")
				day := g.now.Format("2006-01-02")
				grep := g.tool("", "run_shell", day+"T06:12:44+00:00 POST /webhooks/stripe 404 0.001 \"Stripe/1.0 (+https://stripe.com/docs/webhooks)\"\n"+day+"T06:13:02+00:00 POST /webhooks/stripe 404 0.001 \"Stripe/1.0 (+https://stripe.com/docs/webhooks)\"\n"+day+"T06:14:31+00:00 POST /webhooks/stripe 404 0.001 \"Stripe/1.0 (+https://stripe.com/docs/webhooks)\"", "host", "web-01", "command", "grep stripe /var/log/nginx/access.log | tail -3")
				ev := g.assistant("Found it: every payment notification from Stripe to /webhooks/stripe gets a 404. Yesterday's nginx change replaced the location blocks, and the one forwarding /webhooks/stripe to PHP is gone. I'll restore it and reload nginx.")
				g.tool("", "run_shell", "nginx: the configuration file /etc/nginx/nginx.conf syntax is ok\nnginx: configuration file /etc/nginx/nginx.conf test is successful", "host", "web-01", "command", "nginx -t && systemctl reload nginx")
				g.talk("a:Restored and reloaded; Stripe's retries are coming in with 200 now, and the pending orders are flipping to paid.", "u:Phew. Thank you!")
				g.ask(catWhat, "Which URL stopped working and broke the payments?", []string{"/webhooks/stripe"}, ev, grep)
			},
		},
		{ // 5
			func() {
				g.user("Where do the product photos live? A designer needs access.")
				ev := g.tool("", "read_file", "<?php\nreturn [\n  'media_disk' => 's3',\n  'bucket' => 'bramble-media-eu',\n  'prefix' => 'products/',\n  'region' => 'eu-central-1',\n  'public_url' => 'https://media.brambleandco.example',\n];", "host", "web-01", "path", "/var/www/shop/config/media.php")
				ans := g.assistant("Product photos are in an S3 bucket, bramble-media-eu, under products/ (region eu-central-1), served via media.brambleandco.example. I can create a read-write key limited to that prefix for the designer.")
				g.ask(catWhere, "Where are the product pictures kept?", []string{"bramble-media-eu"}, ans, ev)
			},
		},
		{ // 6: new server
			func() {
				g.user("The new web server is ready. Can you check it before we move?")
				ev := g.tool("", "run_shell", "Static hostname: web-02\n Operating System: Debian GNU/Linux 12 (bookworm)\n  Hardware Model: AX42\nCPU(s): 16\nMemory: 64 GB DDR5 ECC\nDisk: 2 x 512 GB NVMe (RAID 1)", "host", "web-02", "command", "hostnamectl; nproc; lshw -short -C memory | head -3")
				ans := g.assistant("web-02 looks good: Debian 12, 16 CPU threads, 64 GB DDR5 ECC memory and two mirrored 512 GB NVMe disks. Four times the memory of web-01.")
				g.ask(catHowMany, "How much memory does the new web server have?", []string{"64 GB"}, ans, ev)
			},
		},
		{ // 7: switch
			func() {
				g.user("Farah has changed DNS. Are we live on the new machine?")
				ev := g.tool("", "http_get", "HTTP/2 200\nserver: nginx\nx-served-by: web-02\ncache-control: no-cache\ncontent-type: text/html; charset=UTF-8", "url", "https://brambleandco.example/")
				g.talk("a:Yes: the shop is answering from web-02 now (x-served-by: web-02), with the new certificate. web-01 still gets a trickle from cached DNS; I'll leave it running for 48 hours.", "u:Great, cutover done then!")
				o.web = "web-02"
				g.askWhen("When did the shop go live on the new machine?", []string{"x-served-by"}, ev)
			},
			func() {
				ev := g.user("Fun fact: the shop was built by a freelancer, Jonte Svensson, back in 2019. Some of his comments are in Swedish, sorry.")
				g.talk("a:Ha, that explains 'TODO: fixa detta' in the cart code. Good to know who to ask.")
				g.ask(catWho, "Who originally wrote the shop's code?", []string{"Jonte Svensson"}, ev)
			},
		},
		{ // 8: supplier API
			func() {
				g.user("The stock sync with the supplier keeps failing at night. Can you look?")
				ev := g.tool("", "read_file", "Supplier API v2\n- Authentication: bearer token\n- Rate limit: 120 requests per minute per token; excess requests get HTTP 429 with Retry-After\n- Bulk endpoint: POST /v2/stock/batch (max 200 SKUs)", "host", "web-02", "path", "/var/www/shop/docs/supplier-api.txt")
				g.talk("a:The sync fires one request per product with no pause, so it hits the supplier's limit of 120 requests per minute and gets 429s. Switching to the batch endpoint (200 SKUs per call) would need 3 calls instead of 540.", "u:Do the batch version please.")
				g.ask(catWhat, "How often per minute may the shop call the outside API?", []string{"120 requests per minute"}, ev, g.msgs[len(g.msgs)-2].ID)
			},
		},
		{ // 9
			func() {
				g.user("How many products are out of stock right now?")
				ev := g.tool("", "sql_query", "+--------------+\n| out_of_stock |\n+--------------+\n|           37 |\n+--------------+", "query", "SELECT COUNT(*) AS out_of_stock FROM products WHERE active = 1 AND stock = 0")
				ans := g.assistant("37 products are out of stock (active ones only). Most are spring teas waiting for the new harvest.")
				g.ask(catHowMany, "How many items were sold out when Dev asked?", []string{"37 products"}, ans)
				_ = ev
			},
		},
		{ // 10: PHP
			func() {
				g.user("Let's do the PHP upgrade on web-02 today, the shop is quiet.")
				ev := g.tool("", "run_shell", "Setting up php8.3-fpm (8.3.7-1+deb12u1) ...\nCreated symlink /etc/systemd/system/multi-user.target.wants/php8.3-fpm.service\nphp -v\nPHP 8.3.7 (cli) (built: May 10 2025 08:14:52) (NTS)", "host", "web-02", "command", "apt-get install -y php8.3-fpm php8.3-mysql php8.3-gd && php -v")
				g.talk("a:PHP 8.3 is installed and nginx now passes requests to php8.3-fpm. I ran the smoke tests: home, product, cart and checkout all return 200.", "u:Excellent.")
				g.askWhen("When was the web server moved to the newer PHP release?", []string{"php8.3"}, ev)
				g.ask(catWhat, "Which PHP release does the shop run after the upgrade?", []string{"PHP 8.3"}, g.msgs[len(g.msgs)-2].ID, ev)
			},
		},
		{ // 11: backup location
			func() {
				g.user("Remind me, where do the backups actually go?")
				ev := g.tool("", "read_file", "#!/bin/sh\nset -e\nmariadb-dump --single-transaction --all-databases | zstd -q > /backup/shop-$(date +%F).sql.zst\nrsync -a /backup/ u381245@u381245.your-storagebox.de:shop/  # Storage Box BX21, Helsinki (HEL1)\nfind /backup -mtime +7 -delete", "host", "db-01", "path", "/usr/local/bin/backup.sh")
				ans := g.assistant("The script dumps all databases, compresses them with zstd, and copies them with rsync to a Hetzner Storage Box in Helsinki (HEL1). Local copies older than 7 days are deleted.")
				g.ask(catWhere, "Where are the nightly database dumps copied to?", []string{"Helsinki"}, ans, ev)
			},
		},
		{ // 12: new developer
			func() {
				ev := g.user("I've hired Noor Aziz as a part-time developer, two days a week. Please give her SSH access to web-02; her key is in my last email.")
				g.tool("", "run_shell", "user noor added to group deploy\nkey appended to /home/noor/.ssh/authorized_keys", "host", "web-02", "command", "adduser --disabled-password --gecos '' noor && usermod -aG deploy noor && install-key noor")
				g.talk("a:Done: she has a user on web-02 in the deploy group, with your key. No access to db-01 unless you say so.", "u:Right, web only for now.")
				g.ask(catWho, "Who joined the team two days a week?", []string{"Noor Aziz"}, ev)
			},
		},
		{ // 13: fail2ban
			func() {
				g.user("The SSH log is full of login attempts. Is fail2ban doing anything?")
				ev := g.tool("", "run_shell", "Status for the jail: sshd\n|- Filter\n|  |- Currently failed: 14\n|  `- Total failed: 48210\n`- Actions\n   |- Currently banned: 96\n   `- Total banned: 2317", "host", "web-02", "command", "fail2ban-client status sshd")
				ans := g.assistant("Yes, it's working hard: 2,317 addresses banned in total this week, 96 right now. I'd also turn off password logins completely, since everyone uses keys.")
				g.ask(catHowMany, "How many had been blocked from logging in over SSH that week?", []string{"2,317"}, ans, ev)
			},
		},
		{ // 14: memory leak
			func() {
				g.user("web-02 was swapping this morning, the shop was slow for an hour.")
				g.tool("", "run_shell", "  PID USER     RSS(MB) COMMAND\n 8812 www-data   1843 php-fpm: pool images\n 8813 www-data   1790 php-fpm: pool images\n 8820 www-data   1712 php-fpm: pool images\n 7741 www-data    212 php-fpm: pool www", "host", "web-02", "command", "ps -eo pid,user,rss,cmd --sort=-rss | head -5")
				ev := g.assistant("The image resize workers grow to almost 2 GB each and never give the memory back: a leak in the image library. As a fix I set pm.max_requests = 500 for the images pool, so each worker is recycled after 500 requests. Memory is flat since.")
				g.talk("u:Nice, that's a good stopgap.")
				g.ask(catWhat, "Which setting fixed the memory problem with the pictures?", []string{"pm.max_requests"}, ev)
			},
		},
		{ // 15: password rotation
			func() {
				g.user("Noor's old laptop was stolen. Just in case, rotate the database password the shop uses.")
				ev := g.tool("", "run_shell", "Query OK, 0 rows affected (0.012 sec)\n.env updated: DB_PASSWORD\nphp8.3-fpm reloaded", "host", "db-01", "command", "mariadb -e \"ALTER USER 'shop'@'10.0.0.%' IDENTIFIED BY '<redacted>'\" && update-env DB_PASSWORD && systemctl reload php8.3-fpm")
				g.talk("a:Rotated: new password for the shop's database user, .env updated on web-02, PHP reloaded; the shop kept working throughout. I also removed Noor's old SSH key.", "u:Thanks, good call on the key.")
				g.askWhen("When were the shop's database credentials changed after the theft?", []string{"DB_PASSWORD"}, ev)
			},
		},
		{ // 16: alerts
			func() {
				ev := g.user("From now on, please send alert emails to ops@brambleandco.example instead of my personal address.")
				g.talk("a:Changed in the monitoring config; I sent a test alert to ops@brambleandco.example.", "u:Got it, thanks.")
				g.ask(catWho, "Who gets the monitoring warnings now?", []string{"ops@brambleandco.example"}, ev, g.msgs[len(g.msgs)-2].ID)
			},
		},
		{ // 17: warehouse
			func() {
				ev := g.user("Big change: from next month our stock ships from a fulfilment partner in Leipzig, not from my garage. Their system will pull orders every 15 minutes.")
				g.talk("a:Congratulations! I'll create an API user for them with access to new orders only.", "u:Perfect.")
				g.ask(catWhere, "From where will orders be shipped after the change?", []string{"Leipzig"}, ev)
			},
		},
		{ // 18: sale
			func() {
				g.user("How did the summer sale weekend go?")
				ev := g.tool("", "sql_query", "+--------+-------------+\n| orders | revenue_eur |\n+--------+-------------+\n|    612 |    17388.20 |\n+--------+-------------+", "query", "SELECT COUNT(*) AS orders, SUM(total) AS revenue_eur FROM orders WHERE campaign = 'summer-sale'")
				ans := g.assistant("612 orders over the sale weekend, €17,388.20 in revenue; the servers never went above 40% CPU.")
				g.ask(catHowMany, "How many orders came in during the sale?", []string{"612 orders"}, ans)
				_ = ev
			},
		},
		{ // 19: CDN
			func() {
				ev := g.user("I've signed up with BunnyCDN for the images, it's cheaper than our current setup. Can you point the media domain at it?")
				g.talk("a:Sure: I'll give Farah the CNAME for media.brambleandco.example and set the pull zone's origin to the bucket.", "u:Great.")
				g.ask(catWhat, "Which content delivery service did Dev choose for the pictures?", []string{"BunnyCDN"}, ev)
			},
		},
		{ // 20
			func() {
				g.user("Let's do a quick year review of what we changed, for my accountant.")
				g.assistant("Here's the short version: new web server, PHP upgrade, payment webhook fix, batch stock sync, SSH hardening, password rotation, CDN for images, and a fulfilment partner integration. I can write it up as a document if you like.")
				g.user("Yes please, next time.")
			},
		},
	})
}

// ops writes the routine tool work of the operations agent.
type ops struct {
	g   *gen
	web string // the current web server
}

// health is the start-of-session check: load, memory and disk of the
// servers in one parallel call.
func (o *ops) health() {
	g := o.g
	uptime := func(host string) string {
		return fmt.Sprintf(" %02d:%02d:%02d up %d days, %2d:%02d,  1 user,  load average: %.2f, %.2f, %.2f\n               total        used        free      shared  buff/cache   available\nMem:           %6dMi     %6dMi     %6dMi       %3dMi      %6dMi      %6dMi\nFilesystem      Size  Used Avail Use%% Mounted on\n/dev/nvme0n1p2  %3dG  %3dG  %3dG  %2d%% /",
			g.now.Hour(), g.now.Minute(), g.now.Second(), 3+g.intn(90), g.intn(24), g.intn(60),
			float64(g.intn(180))/100, float64(g.intn(150))/100, float64(g.intn(120))/100,
			15800, 3000+g.intn(6000), 1000+g.intn(3000), 100+g.intn(300), 4000+g.intn(4000), 7000+g.intn(5000),
			450, 100+g.intn(150), 200+g.intn(100), 25+g.intn(30))
	}
	g.parallel("", [][]any{
		{"run_shell", "host", o.web, "command", "uptime; free -m; df -h /"},
		{"run_shell", "host", "db-01", "command", "uptime; free -m; df -h /var/lib/mysql"},
	}, []string{uptime(o.web), uptime("db-01")})
	g.assistant(g.fill("{All green|Everything looks healthy|Both servers are fine}: load is low, memory {has plenty of headroom|is comfortable}, and disks are {well under|below} 60%{.| on the web server.} {No alerts overnight.|The overnight backup finished normally.|Nothing unusual in the last 24 hours.}"))
}

// routine is one of the agent's everyday tasks.
func (o *ops) routine() {
	g := o.g
	switch g.intn(8) {
	case 0: // package updates
		g.user(g.fill("{Any security updates pending?|Are there package updates?|Should we patch anything this week?}"))
		pk := g.pickDistinct(g.between(3, 6), []string{"libssl3", "openssl", "curl", "libcurl4", "nginx", "tzdata", "libxml2", "sudo", "openssh-server", "libc6", "systemd", "linux-image-amd64"})
		var b strings.Builder
		b.WriteString("Listing...\n")
		for _, p := range pk {
			fmt.Fprintf(&b, "%s/stable-security %d.%d.%d-%d+deb12u%d amd64 [upgradable from: %d.%d.%d-%d+deb12u%d]\n", p, 1+g.intn(3), g.intn(10), g.intn(20), 1+g.intn(3), 2+g.intn(4), 1+g.intn(3), g.intn(10), g.intn(20), 1+g.intn(3), 1)
		}
		g.tool("", "run_shell", strings.TrimSpace(b.String()), "host", o.web, "command", "apt list --upgradable 2>/dev/null")
		g.assistant(fmt.Sprintf("%d security updates are pending (%s). None needs a reboot except a kernel update; I can apply them now, the shop won't notice.", len(pk), strings.Join(pk, ", ")))
		if g.chance(0.7) {
			g.user(g.pick("Go ahead.", "Yes, apply them.", "Do it, thanks."))
			g.tool("", "run_shell", fmt.Sprintf("Reading package lists... Done\n%d upgraded, 0 newly installed, 0 to remove and 0 not upgraded.", len(pk)), "host", o.web, "command", "apt-get -y upgrade")
			g.assistant("Applied; services restarted where needed and the shop answers normally.")
		}
	case 1: // error log
		g.user(g.fill("{Anything in the PHP error log?|Can you look at the error log?|Did the shop log errors today?}"))
		var b strings.Builder
		n := g.between(3, 7)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "[%s %02d:%02d:%02d UTC] PHP %s\n", g.now.Format("02-Jan-2006"), g.intn(24), g.intn(60), g.intn(60), g.pick(
				"Warning:  Undefined array key \"variant\" in /var/www/shop/src/Cart/CartItem.php on line 88",
				"Notice:  Only variables should be passed by reference in /var/www/shop/src/Legacy/Helpers.php on line 214",
				"Warning:  getimagesize(/var/www/shop/public/img/placeholder.webp): Failed to open stream: No such file or directory in /var/www/shop/src/Media/Thumb.php on line 41",
				"Deprecated:  strftime() is deprecated in /var/www/shop/src/Legacy/Dates.php on line 19",
				"Warning:  Trying to access array offset on value of type null in /var/www/shop/src/Checkout/Shipping.php on line 132"))
		}
		g.tool("", "run_shell", strings.TrimSpace(b.String()), "host", o.web, "command", "tail -n 50 /var/log/php/error.log | grep -v 'PHP Stack'")
		g.assistant(g.fill("{Only warnings and notices, no fatal errors.|Nothing fatal: a few warnings from old code.|Warnings only; customers aren't affected.} The missing-array-key warning in the cart is the most frequent; it's harmless but I can {patch it|add a default value} when you want."))
	case 2: // slow queries
		g.user(g.fill("{Is the database slow today?|Any slow queries?|Can you check the slow query log?}"))
		var b strings.Builder
		for i := g.between(2, 4); i > 0; i-- {
			fmt.Fprintf(&b, "# Query_time: %d.%06d  Lock_time: 0.%06d Rows_sent: %d  Rows_examined: %d\nSELECT p.id, p.name, p.price FROM products p JOIN categories c ON c.id = p.category_id WHERE c.slug = '%s' ORDER BY p.sort LIMIT 48;\n",
				1+g.intn(3), g.intn(1000000), g.intn(1000), 20+g.intn(28), 3000+g.intn(9000), g.pick("green-tea", "black-tea", "oolong", "herbal", "gift-sets", "teaware"))
		}
		g.tool("", "run_shell", strings.TrimSpace(b.String()), "host", "db-01", "command", "tail -n 40 /var/log/mysql/slow.log")
		g.assistant("A few category pages take one to three seconds because the join scans the whole products table. An index on products(category_id, sort) would fix it; want me to prepare it for a quiet hour?")
		g.user(g.pick("Yes, prepare it.", "Later, not today.", "Ok, let's do it next week."))
	case 3: // backup check
		g.user(g.fill("{Did last night's backup work?|Check the backup log please.|Are the backups still fine?}"))
		g.tool("", "run_shell", fmt.Sprintf("%s 02:30:01 start\n%s 02:%02d:%02d dump ok (%d.%d GiB compressed)\n%s 02:%02d:%02d rsync ok\n%s 02:%02d:%02d cleanup ok", g.now.Format("2006-01-02"), g.now.Format("2006-01-02"), 31+g.intn(10), g.intn(60), 3+g.intn(3), g.intn(10), g.now.Format("2006-01-02"), 42+g.intn(8), g.intn(60), g.now.Format("2006-01-02"), 51+g.intn(8), g.intn(60)),
			"host", "db-01", "command", "tail -n 4 /var/log/backup.log")
		g.assistant(g.fill("{Yes, last night's backup ran cleanly|All fine}: dump, copy to the storage box and cleanup all succeeded{.| in about twenty minutes.}"))
	case 4: // uptime monitor
		g.user(g.fill("{What did the uptime monitor say this week?|Any downtime this week?|How's our uptime?}"))
		g.tool("", "http_get", fmt.Sprintf(`{"monitor":"shop-homepage","period":"7d","uptime_pct":%d.%02d,"incidents":%d,"avg_response_ms":%d}`, 99, 90+g.intn(10), g.intn(2), 180+g.intn(200)), "url", "https://status.monitor.example/api/monitors/shop-homepage?period=7d")
		g.assistant(g.fill("{Uptime was above 99.9% this week|Practically no downtime}, with an average response time {well under half a second|around a quarter of a second}."))
	case 5: // order export
		g.user(g.fill("{Can you export last week's orders for the accountant?|I need a CSV of last week's orders.|Export the orders since Monday, please.}"))
		n := 180 + g.intn(220)
		g.tool("", "sql_query", fmt.Sprintf("Query OK, %d rows written to /tmp/orders-export.csv\n-- columns: order_no, created_at, customer_country, items, net_eur, vat_eur, total_eur, payment_method", n), "query", "SELECT order_no, created_at, customer_country, items, net_eur, vat_eur, total_eur, payment_method FROM orders_export WHERE created_at >= CURRENT_DATE - INTERVAL 7 DAY INTO OUTFILE '/tmp/orders-export.csv'")
		g.assistant(fmt.Sprintf("Exported %d orders to orders-export.csv with net, VAT and totals per order; I've put it in the shared folder.", n))
	case 6: // cache purge / deploy
		g.user(g.fill("{Noor pushed a CSS fix, can you deploy it?|Deploy the latest main branch please.|There's a small template fix on main, deploy it?}"))
		g.tool("", "run_shell", fmt.Sprintf("From github.com:bramble/shop\n   %s..%s  main -> origin/main\nUpdating %s..%s\nFast-forward\n templates/%s | %d +-\n 1 file changed, %d insertions(+), %d deletion(-)\ncache cleared", g.hex(7), g.hex(7), g.hex(7), g.hex(7), g.pick("product.twig", "cart.twig", "footer.twig", "checkout.twig"), 2+g.intn(6), 1+g.intn(4), 1+g.intn(3)),
			"host", o.web, "command", "cd /var/www/shop && git pull --ff-only && bin/console cache:clear")
		g.assistant("Deployed and the template cache is cleared; the page renders with the fix.")
	default: // small talk
		g.talk("u:{Sorry, was on a call with a supplier.|Back, had to pack some orders.|Sorry for the pause, customer on the phone.|Sorry, the courier came.}",
			"a:{No problem, I'm here.|No worries. From the database it looks like a busy day, in a good way.|Take your time.|No problem. The order numbers look healthy today.}")
	}
}
