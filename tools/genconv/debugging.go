package main

import (
	"fmt"
	"strings"
	"time"
)

// writeDebugging is a coding agent debugging a production incident in an
// e-commerce checkout service: intermittent HTTP 504s after a deploy,
// traced to a transaction left open on an early return (a leaked
// connection per failed inventory check). The incident, the constraints,
// the evidence and the root cause all come in the first ~15% of the
// session; the rest is the long tail of real work (the fix, flaky tests,
// lint, an audit of other call sites, the deploy, a second unrelated
// panic, the postmortem), which is what compaction has to squeeze.
func writeDebugging(g *gen) {
	g.conv = "conv-checkout-inc-4471"
	g.prefix = "dbg"
	g.now = time.Date(2026, 3, 3, 14, 22, 7, 311_000_000, time.UTC)
	d := &dbg{g: g}

	g.system(`You are Forge, a coding agent working in the repository acme/checkout (Go 1.22, PostgreSQL, deployed on Kubernetes as checkout-api). Tools: read_file(path), grep(pattern, path), bash(cmd), run_tests(pkg, run?), edit_file(path, old, new).
Rules: read before you edit; run the affected tests after every change; never push to main or deploy yourself — propose commands and let the human run them; production access is read-only (kubectl logs/get, psql with the read-only role). Explain your reasoning briefly and say when you are unsure.`)

	// ---- the incident (facts) ----------------------------------------------
	fIncident := g.user("We have a production incident: INC-4471. Since the deploy of checkout-api v2.14.0 at 14:05 UTC today, checkouts intermittently fail with HTTP 504 from the gateway. The dashboard says roughly 3,200 failed checkouts so far. Can you help me find the cause? The repo is checked out at the v2.14.0 tag.")
	g.assistant("On it. I'll start with what changed between v2.13.2 and v2.14.0, then look at the checkout-api logs around 14:05 UTC.")
	gitLog := "9f3c2ab orders: check inventory inside tx\n" +
		"4be71d0 payments: bump stripe-go to v76.8.0\n" +
		"a1c09e7 migrations: 0087_add_fulfillment_state\n" +
		"77d2f13 shipping: cache carrier rates for 5 minutes\n" +
		"c0ffe42 api: return 409 on duplicate idempotency key\n" +
		"e93b5aa ci: run integration tests against postgres 16\n" +
		"18aa6f0 chore: update CODEOWNERS"
	fCommit := g.tool("", "bash", gitLog, "cmd", "git log --oneline v2.13.2..v2.14.0")
	g.assistant("Seven commits. The ones that touch the request path are 9f3c2ab (inventory check moved inside the order transaction), 77d2f13 (rate cache) and c0ffe42 (409 on duplicate idempotency key). 9f3c2ab is the most suspicious for timeouts because it changes how long a transaction stays open.")
	logs := d.logLines(14, 6, []string{
		`"msg":"create order failed","err":"pq: sorry, too many clients already"`,
		`"msg":"acquire conn","err":"context deadline exceeded","wait_ms":30000`,
	})
	fErr := g.tool("", "bash", logs, "cmd", "kubectl logs -n checkout deploy/checkout-api --since=30m | grep -E '\"level\":\"(error|warn)\"' | tail -n 20")
	fErrSummary := g.assistant(`Two error shapes dominate: "pq: sorry, too many clients already" from PostgreSQL when a pod opens a new connection, and "context deadline exceeded" after 30000 ms while waiting to acquire a connection from the pool. Both point at connection exhaustion rather than slow queries.`)
	fConstraint := g.user("Important constraint before you go further: do not restart the primary database db-prod-1 or change any of its settings. Any DB change needs approval from Priya Raman, the on-call DBA.")
	g.assistant("Understood — I will not touch db-prod-1. I'll only use the read-only role for queries, and anything that would change the database goes to Priya Raman first.")
	fLatency := g.user("Also, for context: p99 latency on /v1/checkout went from about 180ms to 31s right after the deploy. Error rate is around 7%.")
	g.assistant("That fits: 31 s is the 30 s pool-acquire timeout plus handler overhead. Requests that do get a connection are fast; the slow ones are queued behind an exhausted pool.")
	d.steps(6)
	fPool := g.tool("", "read_file", d.prodYAML(), "path", "config/prod.yaml")
	g.assistant("config/prod.yaml caps the pool at max_open_conns: 20 per pod, with conn_max_idle_time 5m and a 30s acquire timeout. With 8 replicas that is at most 160 client connections, above the server's max_connections = 150, so when pods start opening connections aggressively PostgreSQL refuses the extra ones.")
	d.steps(5)
	act := "  pid  | state               | xact_age | wait_event    | query\n" +
		"-------+---------------------+----------+---------------+------------------------------------------------------------\n"
	for i := 0; i < 14; i++ {
		act += fmt.Sprintf(" %5d | idle in transaction | 00:%02d:%02d | ClientRead    | SELECT quantity FROM inventory WHERE sku = $1 FOR UPDATE\n", 31000+g.intn(9000), 1+g.intn(40), g.intn(60))
	}
	act += fmt.Sprintf(" %5d | active              | 00:00:00 | Lock          | UPDATE inventory SET quantity = quantity - $1 WHERE sku = $2\n", 40000+g.intn(999))
	act += "(15 rows)"
	fIdle := g.tool("Checking pg_stat_activity with the read-only role to see what the connections are doing.", "bash", act,
		"cmd", `psql "$CHECKOUT_RO_DSN" -c "SELECT pid, state, now()-xact_start AS xact_age, wait_event, query FROM pg_stat_activity WHERE datname='checkout' AND state <> 'idle' ORDER BY xact_start"`)
	g.assistant(`Most sessions are "idle in transaction" and their last statement was SELECT quantity FROM inventory WHERE sku = $1 FOR UPDATE — transactions that locked an inventory row and were never committed or rolled back. That's a leak, and the FOR UPDATE lock also blocks the UPDATE that is waiting on Lock.`)
	fMinimal := g.user("Makes sense. When you get to the fix: keep it minimal, no refactors in the hotfix PR. We'll do cleanup afterwards.")
	g.assistant("Will do: smallest possible change in the hotfix, cleanup noted for later.")
	d.steps(3)
	fCode := g.tool("", "read_file", d.repositoryGo(), "path", "orders/repository.go")
	fRoot := g.assistant("Found it. Root cause: in orders/repository.go, CreateOrder begins a transaction, runs the inventory check inside it (the change from commit 9f3c2ab), and when the stock is short it returns ErrInsufficientStock early without calling tx.Rollback(). Every checkout that hits an out-of-stock item leaks one pooled connection, idle in transaction and holding the FOR UPDATE row lock. Once all 20 connections of a pod are leaked, every request waits 30s for a connection and the gateway answers 504.")
	g.user("Wow, ok. Can you prove it with a test before we change anything?")
	g.tool("I'll add a regression test that counts open connections after an out-of-stock order.", "edit_file", "Applied edit to orders/repository_test.go (1 hunk, +34 lines).",
		"path", "orders/repository_test.go", "old", "", "new", "func TestCreateOrder_InventoryShortage(t *testing.T) { ... }")
	fTest := g.tool("", "run_tests", "=== RUN   TestCreateOrder_InventoryShortage\n"+
		"    repository_test.go:214: after CreateOrder: open connections = 1, in use = 1\n"+
		"    repository_test.go:221: leaked 1 connection(s): transaction not closed after ErrInsufficientStock\n"+
		"--- FAIL: TestCreateOrder_InventoryShortage (0.41s)\n"+
		"FAIL\nFAIL\tgithub.com/acme/checkout/orders\t0.622s\nFAIL",
		"pkg", "./orders", "run", "TestCreateOrder_InventoryShortage")
	g.assistant("Reproduced: TestCreateOrder_InventoryShortage fails with \"leaked 1 connection(s)\". The test is the proof and will guard the fix.")
	fDecision := g.user("Good. Decision from the incident channel: rolling back to v2.13.2 is not an option because migration 0087_add_fulfillment_state is not reversible. We'll ship a hotfix as v2.14.1.")
	g.assistant("Agreed: no rollback, hotfix v2.14.1 on top of v2.14.0, containing only the rollback fix and the regression test.")

	// ---- the long tail ------------------------------------------------------
	d.fix()
	d.steps(40)
	d.audit()
	d.steps(40)
	d.deploy()
	d.steps(40)
	d.panicBug()
	d.steps(40)
	d.postmortem()
	for len(g.msgs) < 880 {
		d.steps(1)
	}
	g.user("That's everything for today. Thanks for sticking with it — INC-4471 can be closed once the postmortem is reviewed.")
	g.assistant("Thanks! Summary of open items: CHK-1290 (audit follow-ups), CHK-1302 (nil rate cache entry), and the postmortem review on Thursday.")

	g.fact("The incident is INC-4471: checkouts fail with HTTP 504 since the deploy of checkout-api v2.14.0 at 14:05 UTC.",
		"incident 504 deploy v2.14.0", []string{"INC-4471", "v2.14.0", "14:05 UTC", "504"}, fIncident)
	g.fact("About 3,200 checkouts failed.", "how many failed checkouts", []string{"3,200"}, fIncident)
	g.fact("The errors are \"pq: sorry, too many clients already\" and \"context deadline exceeded\" while acquiring a pool connection after 30000 ms.",
		"error too many clients context deadline exceeded", []string{"too many clients already", "context deadline exceeded"}, fErr, fErrSummary)
	g.fact("Do not restart or change the primary database db-prod-1; any DB change needs approval from Priya Raman, the on-call DBA.",
		"database constraint approval DBA", []string{"db-prod-1", "Priya Raman"}, fConstraint)
	g.fact("p99 latency on /v1/checkout went from about 180ms to 31s after the deploy.", "p99 latency checkout",
		[]string{"180ms", "31s"}, fLatency)
	g.fact("The pool is capped at max_open_conns: 20 per pod (config/prod.yaml); the server allows max_connections = 150.",
		"connection pool size max_open_conns", []string{"max_open_conns", "20"}, fPool)
	g.fact("Leaked sessions are idle in transaction holding SELECT ... FROM inventory ... FOR UPDATE locks.",
		"idle in transaction inventory FOR UPDATE", []string{"idle in transaction", "FOR UPDATE"}, fIdle)
	g.fact("Root cause: CreateOrder in orders/repository.go returns ErrInsufficientStock without tx.Rollback(), leaking one connection per out-of-stock checkout.",
		"root cause CreateOrder rollback leak", []string{"orders/repository.go", "ErrInsufficientStock", "tx.Rollback()"}, fRoot, fCode)
	g.fact("The leak was introduced by commit 9f3c2ab \"orders: check inventory inside tx\".", "commit that introduced the bug",
		[]string{"9f3c2ab"}, fCommit, fRoot)
	g.fact("The regression test TestCreateOrder_InventoryShortage reproduces the leak (\"leaked 1 connection(s)\").",
		"regression test leaked connection", []string{"TestCreateOrder_InventoryShortage", "leaked 1 connection(s)"}, fTest)
	g.fact("Decision: no rollback to v2.13.2 because migration 0087_add_fulfillment_state is not reversible; ship hotfix v2.14.1.",
		"decision rollback hotfix", []string{"v2.14.1", "0087_add_fulfillment_state", "v2.13.2"}, fDecision)
	g.fact("The user wants the fix minimal: no refactors in the hotfix PR.", "hotfix scope preference",
		[]string{"no refactors in the hotfix PR"}, fMinimal)
}

// dbg holds the debugging scenario's vocabulary and generators.
type dbg struct {
	g *gen
}

var (
	dbgPackages = []string{"orders", "payments", "inventory", "cart", "shipping", "internal/db", "internal/httpx", "coupons", "customers", "internal/metrics"}
	dbgFiles    = []string{"orders/repository.go", "orders/service.go", "orders/handler.go", "orders/model.go", "payments/stripe.go",
		"payments/refunds.go", "inventory/client.go", "inventory/reservation.go", "cart/cart.go", "cart/pricing.go",
		"shipping/rates.go", "shipping/cache.go", "internal/db/pool.go", "internal/db/tx.go", "internal/httpx/middleware.go",
		"internal/metrics/metrics.go", "cmd/checkout-api/main.go", "coupons/validate.go", "customers/store.go"}
	dbgEntities = []string{"Order", "Cart", "Shipment", "Refund", "Payment", "Reservation", "Customer", "Coupon", "Invoice", "LineItem"}
	dbgVerbs    = []string{"Get", "List", "Create", "Update", "Cancel", "Reserve", "Release", "Apply", "Load", "Sync"}
	dbgPods     = []string{"checkout-api-7d9c6b5f8-x2kqp", "checkout-api-7d9c6b5f8-9mfzt", "checkout-api-7d9c6b5f8-qq4lw", "checkout-api-7d9c6b5f8-tbn7c",
		"checkout-api-7d9c6b5f8-h8r2d", "checkout-api-7d9c6b5f8-pl0sv"}
	dbgTests = []string{"TestCreateOrder_HappyPath", "TestCreateOrder_DuplicateIdempotencyKey", "TestCancelOrder_AfterCapture", "TestApplyCoupon_Expired",
		"TestReserveStock_Concurrent", "TestRefund_Partial", "TestRates_CacheHit", "TestRates_CarrierTimeout", "TestCart_MergeGuest",
		"TestPricing_TaxRounding", "TestPool_AcquireTimeout", "TestMiddleware_RequestID", "TestListOrders_Pagination"}
)

func (d *dbg) lead(tool string) string { return d.g.fill(d.g.pick(dbgLeads[tool]...)) }

func (d *dbg) entity() string { return d.g.pick(dbgEntities...) }

// logLines is n JSON log lines around the incident, some of them errors.
func (d *dbg) logLines(n, errs int, errBodies []string) string {
	g := d.g
	var b strings.Builder
	t := time.Date(2026, 3, 3, 14, 6, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		t = t.Add(time.Duration(g.between(1, 40))*time.Second + time.Duration(g.intn(999))*time.Millisecond)
		ts := t.Format("2006-01-02T15:04:05.000Z")
		pod := g.pick(dbgPods...)
		if i%(n/errs+1) == 0 || g.chance(0.3) {
			fmt.Fprintf(&b, `{"ts":"%s","level":"error","svc":"checkout-api","pod":"%s",%s,"trace_id":"%s","route":"/v1/checkout"}`+"\n",
				ts, pod, g.pick(errBodies...), g.hex(16))
		} else {
			fmt.Fprintf(&b, `{"ts":"%s","level":"warn","svc":"checkout-api","pod":"%s","msg":"slow request","route":"/v1/checkout","latency_ms":%d,"trace_id":"%s"}`+"\n",
				ts, pod, 25000+g.intn(6500), g.hex(16))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func (d *dbg) prodYAML() string {
	return `# config/prod.yaml — checkout-api production settings
server:
  addr: ":8080"
  read_timeout: 10s
  write_timeout: 35s
database:
  dsn_env: CHECKOUT_DSN
  max_open_conns: 20
  max_idle_conns: 10
  conn_max_idle_time: 5m
  conn_max_lifetime: 30m
  acquire_timeout: 30s
inventory:
  base_url: http://inventory.internal:8080
  timeout: 2s
payments:
  provider: stripe
  webhook_tolerance: 5m
shipping:
  rate_cache_ttl: 5m
replicas: 8`
}

func (d *dbg) repositoryGo() string {
	return `package orders

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

var ErrInsufficientStock = errors.New("orders: insufficient stock")

// CreateOrder stores the order and decrements stock in one transaction.
func (r *Repository) CreateOrder(ctx context.Context, o *Order) error {
	tx, err := r.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	for _, li := range o.Lines {
		var qty int
		if err := tx.QueryRowContext(ctx,
			"SELECT quantity FROM inventory WHERE sku = $1 FOR UPDATE", li.SKU).Scan(&qty); err != nil {
			tx.Rollback()
			return fmt.Errorf("inventory %s: %w", li.SKU, err)
		}
		if qty < li.Quantity {
			return ErrInsufficientStock
		}
		if _, err := tx.ExecContext(ctx,
			"UPDATE inventory SET quantity = quantity - $1 WHERE sku = $2", li.Quantity, li.SKU); err != nil {
			tx.Rollback()
			return fmt.Errorf("decrement %s: %w", li.SKU, err)
		}
	}
	if _, err := tx.ExecContext(ctx,
		"INSERT INTO orders (id, customer_id, status, total_cents) VALUES ($1, $2, 'pending', $3)",
		o.ID, o.CustomerID, o.TotalCents); err != nil {
		tx.Rollback()
		return fmt.Errorf("insert order: %w", err)
	}
	return tx.Commit()
}`
}

// goFile synthesizes a plausible Go source file for path, and says what
// kinds of code it holds (0 query, 1 handler, 2 retry helper, 3 model) so
// the agent's comment can match what it read.
func (d *dbg) goFile(path string) (string, []int) {
	var kinds []int
	g := d.g
	pkg := path[:strings.LastIndexByte(path, '/')]
	if i := strings.LastIndexByte(pkg, '/'); i >= 0 {
		pkg = pkg[i+1:]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"net/http\"\n\t\"time\"\n)\n", pkg)
	for n := g.between(2, 4); n > 0; n-- {
		e := d.entity()
		v := g.pick(dbgVerbs...)
		low := strings.ToLower(e)
		kind := g.intn(4)
		kinds = append(kinds, kind)
		switch kind {
		case 0:
			fmt.Fprintf(&b, `
// %s%s loads one %s by id.
func (s *Store) %s%s(ctx context.Context, id string) (*%s, error) {
	ctx, cancel := context.WithTimeout(ctx, %d*time.Second)
	defer cancel()
	row := s.db.QueryRowContext(ctx, "SELECT id, status, updated_at FROM %ss WHERE id = $1", id)
	var x %s
	if err := row.Scan(&x.ID, &x.Status, &x.UpdatedAt); err != nil {
		return nil, fmt.Errorf("%s %%s: %%w", id, err)
	}
	return &x, nil
}
`, v, e, low, v, e, e, g.between(2, 5), low, e, strings.ToLower(v)+" "+low)
		case 1:
			fmt.Fprintf(&b, `
func (h *Handler) %s%s(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer func() { h.metrics.Observe("%s_%s", time.Since(start)) }()
	var req %sRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	res, err := h.svc.%s%s(r.Context(), req)
	if err != nil {
		writeError(w, statusFor(err), err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
`, v, e, strings.ToLower(v), low, e, v, e)
		case 2:
			fmt.Fprintf(&b, `
// %sRetry retries transient %s failures with backoff.
func %sRetry(ctx context.Context, attempts int, f func() error) error {
	var err error
	for i := 0; i < attempts; i++ {
		if err = f(); err == nil || !isTransient(err) {
			return err
		}
		select {
		case <-time.After(time.Duration(1<<i) * %s * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fmt.Errorf("%s: giving up after %%d attempts: %%w", attempts, err)
}
`, strings.ToLower(v), low, strings.ToLower(v)+e, g.pick("50", "100", "25"), low)
		default:
			fmt.Fprintf(&b, `
type %s struct {
	ID         string
	Status     string
	TotalCents int64
	Currency   string
	UpdatedAt  time.Time
}

func (x *%s) Validate() error {
	if x.ID == "" {
		return fmt.Errorf("%s: missing id")
	}
	if x.TotalCents < 0 {
		return fmt.Errorf("%s %%s: negative total %%d", x.ID, x.TotalCents)
	}
	return nil
}
`, e, e, low, low)
		}
	}
	return strings.TrimRight(b.String(), "\n"), kinds
}

// testRun is the output of go test for pkg; failing names a test that
// fails with msg.
func (d *dbg) testRun(pkg string, failing, msg string) string {
	g := d.g
	var b strings.Builder
	n := g.between(3, 7)
	for i := 0; i < n; i++ {
		name := g.pick(dbgTests...)
		fmt.Fprintf(&b, "=== RUN   %s\n--- PASS: %s (0.%02ds)\n", name, name, g.intn(90))
	}
	if failing != "" {
		fmt.Fprintf(&b, "=== RUN   %s\n    %s\n--- FAIL: %s (%d.%02ds)\nFAIL\nFAIL\tgithub.com/acme/checkout/%s\t%d.%03ds\nFAIL",
			failing, msg, failing, g.intn(3), g.intn(99), pkg, 1+g.intn(4), g.intn(999))
	} else {
		fmt.Fprintf(&b, "PASS\nok  \tgithub.com/acme/checkout/%s\t%d.%03ds", pkg, g.intn(3), g.intn(999))
	}
	return b.String()
}

// grepSnippets are source lines that contain each pattern grep is run for.
var grepSnippets = map[string][]string{
	"BeginTx":              {"tx, err := s.db.BeginTx(ctx, nil)", "tx, err := r.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})", "// BeginTx is wrapped so tests can count open transactions"},
	"Rollback":             {"defer tx.Rollback() //nolint:errcheck", "tx.Rollback()", "if rbErr := tx.Rollback(); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) {"},
	"QueryRowContext":      {"row := s.db.QueryRowContext(ctx, q, id)", "if err := tx.QueryRowContext(ctx, q, sku).Scan(&qty); err != nil {"},
	"FOR UPDATE":           {"\"SELECT quantity FROM inventory WHERE sku = $1 FOR UPDATE\"", "\"SELECT status FROM reservations WHERE id = $1 FOR UPDATE SKIP LOCKED\""},
	"acquire_timeout":      {"AcquireTimeout time.Duration `yaml:\"acquire_timeout\"`", "acquire_timeout: 30s", "acquire_timeout: 5s"},
	"ErrInsufficientStock": {"var ErrInsufficientStock = errors.New(\"orders: insufficient stock\")", "case errors.Is(err, orders.ErrInsufficientStock):", "return ErrInsufficientStock"},
	"Commit()":             {"return tx.Commit()", "if err := tx.Commit(); err != nil {"},
	"WithTimeout":          {"ctx, cancel := context.WithTimeout(ctx, 2*time.Second)", "ctx, cancel := context.WithTimeout(r.Context(), cfg.HandlerTimeout)"},
}

// grepOut is a plausible grep result for pattern over the repository.
func (d *dbg) grepOut(pattern string) string {
	g := d.g
	var b strings.Builder
	n := g.between(2, 8)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s:%d:\t%s\n", g.pick(dbgFiles...), 10+g.intn(300), g.pick(grepSnippets[pattern]...))
	}
	return strings.TrimRight(b.String(), "\n")
}

var (
	dbgUserAsides = []string{
		"ok", "thanks", "ok, go on", "makes sense", "{sounds good|sounds right}, continue",
		"any update?", "how is it going?", "{Priya|the DBA} is asking whether we need her yet — do we?",
		"the incident channel wants an ETA, what should I tell them?", "can you check that again, I'm not sure about that number",
		"hmm, interesting", "wait, why that file?", "{nice|good find}", "I'm back, was in a call. Where are we?",
		"error rate on the dashboard is {6.8|7.1|5.9|6.2}% right now", "ok, take your time",
		"can you explain that in one sentence for the status page?", "👍", "got it",
	}
	// Leads are the optional text of an assistant message that calls a
	// tool; most calls have none, as with real agents.
	dbgLeads = map[string][]string{
		"read_file": {"", "", "", "Let me look at {that|this} file.", "One more look at the code path.", "Reading it to check the error paths."},
		"run_tests": {"", "", "", "Running the package tests.", "Checking the tests{| again}.", "Quick test run:"},
		"grep":      {"", "", "", "Let me search the codebase for that.", "Searching for other call sites.", "Quick search:"},
		"bash":      {"", "", "", "I'll confirm with the cluster.", "Checking the live state.", "Quick check:"},
	}
	// dbgAfterRead are comments on a file read, by the kind of code in it.
	dbgAfterRead = [][]string{
		{"{Only plain reads here|This only reads}: no transaction handling, so it can't leak connections.",
			"{Here|In this file} the query context times out after a few seconds, far below the pool's 30s, so it is not what we see in the logs."},
		{"This is handler code; it just maps errors to status codes. ErrInsufficientStock becomes a 409, which is right.",
			"The handler records latency in a deferred metric call and passes the request context down; fine."},
		{"The retry helper backs off exponentially and respects ctx.Done(), so it won't pile up requests.",
			"Retries only on transient errors, and a pool timeout is not classified as transient, so no retry storm."},
		{"Just model types and validation; nothing touches the database.",
			"Not related to the leak, but the validation error {loses the field name|could say which line item} — noting it for cleanup."},
	}
	dbgAfterTests = []string{
		"All green.", "Tests pass{| in this package}.", "{Passing|Green} — moving on.", "Good, no regressions in {this package|these tests}.",
	}
	dbgAfterGrep = []string{
		"{A few|Several} hits, all of them already close the transaction with a deferred rollback.",
		"None of these matches start a transaction without closing it.",
		"These are log and metric call sites only.",
		"Most hits are in tests; the production ones look correct.",
	}
)

// steps appends n small, varied units of investigation work.
func (d *dbg) steps(n int) {
	g := d.g
	for ; n > 0; n-- {
		if g.chance(0.18) {
			g.user(g.sprinkle(dbgUserAsides))
			if g.chance(0.6) {
				g.assistant(g.fill(g.pick(
					"{Still going|Making progress}: I'm {checking the remaining call sites|re-running the affected tests|reading the pool code}.",
					"Not yet — {I'll tell you|I'll ping you} as soon as it matters.",
					"Short version: {a transaction is left open on one error path, so connections leak until the pool is empty|we're confirming there's no second leak}.",
					"ETA for the hotfix PR: about {20|30|45} minutes including tests.",
					"You're right to double-check; I'll re-run it.",
				)))
			}
		}
		switch g.intn(5) {
		case 0, 1:
			f := g.pick(dbgFiles...)
			src, kinds := d.goFile(f)
			g.tool(d.lead("read_file"), "read_file", src, "path", f)
			g.assistant(g.sprinkle(dbgAfterRead[kinds[g.intn(len(kinds))]]))
		case 2:
			pkg := g.pick(dbgPackages...)
			if g.chance(0.15) {
				name := g.pick(dbgTests...)
				g.tool(d.lead("run_tests"), "run_tests", d.testRun(pkg, name,
					g.pick("timeout waiting for postgres container after 60s", "got status 500, want 200", "unexpected call to Inventory.Reserve", "race detected during execution of test")),
					"pkg", "./"+pkg)
				g.assistant(g.fill("{That failure|This} is {flaky|environmental}: {the test container was slow to start|it passes on re-run|it depends on wall-clock time}. Re-running."))
				g.tool("", "run_tests", d.testRun(pkg, "", ""), "pkg", "./"+pkg, "run", name)
				g.assistant(g.sprinkle(dbgAfterTests))
			} else {
				g.tool(d.lead("run_tests"), "run_tests", d.testRun(pkg, "", ""), "pkg", "./"+pkg)
				if g.chance(0.5) {
					g.assistant(g.sprinkle(dbgAfterTests))
				}
			}
		case 3:
			pat := g.pick("BeginTx", "Rollback", "QueryRowContext", "FOR UPDATE", "acquire_timeout", "ErrInsufficientStock", "Commit()", "WithTimeout")
			g.tool(d.lead("grep"), "grep", d.grepOut(pat), "pattern", pat, "path", ".")
			g.assistant(g.sprinkle(dbgAfterGrep))
		default:
			cmd, out, comment := d.bashStep()
			g.tool(d.lead("bash"), "bash", out, "cmd", cmd)
			g.assistant(g.fill(comment))
		}
	}
}

func (d *dbg) bashStep() (cmd, out, comment string) {
	g := d.g
	switch g.intn(5) {
	case 0:
		var b strings.Builder
		b.WriteString("NAME                           READY   STATUS    RESTARTS   AGE\n")
		for _, p := range dbgPods {
			fmt.Fprintf(&b, "%-30s 1/1     Running   0          %dm\n", p, 30+g.intn(90))
		}
		return "kubectl get pods -n checkout -l app=checkout-api", strings.TrimRight(b.String(), "\n"),
			"Pods are {healthy|all running}; no restarts."
	case 1:
		var b strings.Builder
		for _, p := range dbgPods[:4] {
			fmt.Fprintf(&b, "db_pool_in_use{pod=%q} %d\ndb_pool_wait_seconds_sum{pod=%q} %d.%03d\n", p, 2+g.intn(8), p, g.intn(40), g.intn(999))
		}
		return "curl -s http://checkout-api.checkout:9090/metrics | grep db_pool", strings.TrimRight(b.String(), "\n"),
			"{Connections in use are|The pool gauge is} {steady|flat} at single digits per pod."
	case 2:
		return "go vet ./... && echo vet ok", "vet ok", "vet is clean."
	case 3:
		n := g.between(0, 3)
		return "kubectl logs -n checkout deploy/checkout-api --since=5m | grep -c 'too many clients'", fmt.Sprint(n),
			fmt.Sprintf("%d \"too many clients\" errors in the last 5 minutes{| on this pod}.", n)
	default:
		return "git diff --stat", fmt.Sprintf(" orders/repository.go      | %d +-\n orders/repository_test.go | 34 +++++++++++++++\n 2 files changed, %d insertions(+), 1 deletion(-)", 2+g.intn(2), 36+g.intn(2)),
			"The diff is what we expect: the rollback fix and the test."
	}
}

// fix is the hotfix: the edit, a lint complaint, the tests.
func (d *dbg) fix() {
	g := d.g
	g.tool("Applying the minimal fix: a deferred rollback right after BeginTx (a rollback after a successful commit is a no-op returning sql.ErrTxDone).",
		"edit_file", "Applied edit to orders/repository.go (1 hunk, +1 line).",
		"path", "orders/repository.go", "old", "\tif err != nil {\n\t\treturn fmt.Errorf(\"begin: %w\", err)\n\t}", "new", "\tif err != nil {\n\t\treturn fmt.Errorf(\"begin: %w\", err)\n\t}\n\tdefer tx.Rollback()")
	g.tool("", "run_tests", d.testRun("orders", "", ""), "pkg", "./orders")
	g.assistant("TestCreateOrder_InventoryShortage passes now, along with the rest of ./orders.")
	g.tool("", "bash", "orders/repository.go:24:17: Error return value of `tx.Rollback` is not checked (errcheck)\norders/repository.go:31:14: Error return value of `tx.Rollback` is not checked (errcheck)\n2 issues.", "cmd", "golangci-lint run ./orders/...")
	g.assistant("errcheck complains about the unchecked tx.Rollback calls. The two at lines 24 and 31 existed before; to keep the hotfix minimal I'll suppress only the new deferred one with a //nolint:errcheck comment explaining why, and leave the old ones for the cleanup PR.")
	g.user("Fine by me.")
	g.tool("", "edit_file", "Applied edit to orders/repository.go (1 hunk).", "path", "orders/repository.go", "old", "\tdefer tx.Rollback()", "new", "\tdefer tx.Rollback() //nolint:errcheck // no-op after Commit; closes the tx on every early return")
	g.tool("", "bash", "orders/repository.go:24:17: Error return value of `tx.Rollback` is not checked (errcheck)\norders/repository.go:31:14: Error return value of `tx.Rollback` is not checked (errcheck)\n2 issues (pre-existing, baseline).", "cmd", "golangci-lint run --new-from-rev=v2.14.0 ./orders/...")
	g.assistant("Only the pre-existing findings remain, and the CI lint runs with --new-from-rev, so it will pass.")
	g.tool("", "run_tests", d.testRun("orders", "", "")+"\n"+d.testRun("payments", "", "")+"\n"+d.testRun("inventory", "", ""), "pkg", "./...")
	g.assistant("Full suite green. Proposed PR: \"orders: roll back the transaction on every early return (INC-4471)\", two files, +36/-1.")
}

// audit greps for the same pattern elsewhere.
func (d *dbg) audit() {
	g := d.g
	g.user("Before we ship: are there other places with the same bug?")
	g.tool("Searching every BeginTx call and checking each one's error paths.", "grep",
		"orders/repository.go:14:\ttx, err := r.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})\n"+
			"payments/refunds.go:57:\ttx, err := s.db.BeginTx(ctx, nil)\n"+
			"inventory/reservation.go:88:\ttx, err := s.db.BeginTx(ctx, nil)\n"+
			"coupons/validate.go:41:\ttx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})",
		"pattern", "BeginTx(", "path", ".")
	for _, f := range []string{"payments/refunds.go", "inventory/reservation.go", "coupons/validate.go"} {
		src, _ := d.goFile(f)
		g.tool("", "read_file", src, "path", f)
		switch f {
		case "payments/refunds.go":
			g.assistant("payments/refunds.go has the same shape: an early return when the refund exceeds the captured amount, without rollback. It's far rarer (refunds are manual), so per your minimal-fix rule I'd file it rather than fix it in the hotfix.")
		case "inventory/reservation.go":
			g.assistant("inventory/reservation.go already uses defer tx.Rollback(). Fine.")
		default:
			g.assistant("coupons/validate.go uses a read-only transaction and closes it on all paths. Fine.")
		}
	}
	g.user("Agreed, file it. Call it CHK-1290.")
	g.tool("", "bash", "Created issue CHK-1290: \"payments/refunds.go: roll back tx on over-refund early return\" (labels: bug, tech-debt)", "cmd", "gh issue create --title 'payments/refunds.go: roll back tx on over-refund early return' --label bug,tech-debt")
	g.assistant("Filed CHK-1290 with the file, line 57, and a pointer to the regression test pattern.")
}

// deploy is the hotfix going out, observed through read-only commands.
func (d *dbg) deploy() {
	g := d.g
	g.user("PR approved by Lena. I tagged v2.14.1 and the pipeline is rolling it out as a 10% canary. Can you watch the pool metrics?")
	for i := 0; i < 6; i++ {
		g.tool("", "bash", fmt.Sprintf("db_pool_in_use{version=\"v2.14.1\"} %d\ndb_pool_in_use{version=\"v2.14.0\"} %d\nhttp_requests_errors_ratio{version=\"v2.14.1\"} 0.00%d\nhttp_requests_errors_ratio{version=\"v2.14.0\"} 0.0%d",
			2+g.intn(4), 14+i, g.intn(9), 5+g.intn(4)), "cmd", "curl -s http://prometheus.monitoring:9090/api/v1/query --data-urlencode 'query=...pool by version...' | jq -r '.data.result[] | ...'")
		g.assistant(g.fill("Canary {holds|looks good}: v2.14.1 pods use {2|3|4|5} connections while v2.14.0 pods keep climbing. {Error ratio on the canary is below 0.01.|No 504s from canary pods.}"))
	}
	g.user("Promoting to 100%.")
	g.tool("", "bash", "deployment \"checkout-api\" successfully rolled out", "cmd", "kubectl rollout status -n checkout deploy/checkout-api")
	g.assistant("Rollout finished. Leaked sessions from the old pods disappear as their connections close; pg_stat_activity should show no idle-in-transaction sessions within a few minutes.")
	g.tool("", "bash", "  pid | state | xact_age | wait_event | query\n-----+-------+----------+------------+-------\n(0 rows)", "cmd", `psql "$CHECKOUT_RO_DSN" -c "SELECT pid, state, now()-xact_start AS xact_age, wait_event, query FROM pg_stat_activity WHERE state = 'idle in transaction'"`)
	g.assistant("Zero idle-in-transaction sessions. p99 on /v1/checkout is back to ~190ms.")
}

// panicBug is a second, unrelated issue found while watching the logs.
func (d *dbg) panicBug() {
	g := d.g
	g.user("New thing: a few pods logged a panic in the last hour. Unrelated to the leak I think. Can you look?")
	trace := "panic: runtime error: invalid memory address or nil pointer dereference\n" +
		"[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x8c1f2e]\n\n" +
		"goroutine 48213 [running]:\n" +
		"github.com/acme/checkout/shipping.(*RateCache).Get(0xc000a1e2d0, {0xc0031f4a80, 0x2a})\n" +
		"\t/src/shipping/cache.go:61 +0x4e\n" +
		"github.com/acme/checkout/shipping.(*Service).Quote(0xc0001b6000, {0x1a3c0e8, 0xc004e0c2a0}, 0xc0029d7b00)\n" +
		"\t/src/shipping/rates.go:112 +0x1b9\n" +
		"github.com/acme/checkout/orders.(*Service).Checkout(0xc0001c4120, {0x1a3c0e8, 0xc004e0c2a0}, 0xc0048a1f80)\n" +
		"\t/src/orders/service.go:203 +0x5d2\n" +
		"github.com/acme/checkout/orders.(*Handler).Checkout(0xc0001d2000, {0x1a35f70, 0xc00512a0e0}, 0xc004b7e900)\n" +
		"\t/src/orders/handler.go:77 +0x1c5\n" +
		"net/http.HandlerFunc.ServeHTTP(...)\n\t/usr/local/go/src/net/http/server.go:2220\n" +
		"github.com/acme/checkout/internal/httpx.Recover.func1({0x1a35f70, 0xc00512a0e0}, 0xc004b7e900)\n" +
		"\t/src/internal/httpx/middleware.go:38 +0x98"
	g.tool("", "bash", trace, "cmd", "kubectl logs -n checkout checkout-api-7d9c6b5f8-qq4lw --previous | grep -A 20 '^panic'")
	g.tool("", "read_file", "package shipping\n\nfunc (c *RateCache) Get(key string) (Rate, bool) {\n\tc.mu.RLock()\n\tdefer c.mu.RUnlock()\n\te := c.entries[key]\n\tif time.Since(e.storedAt) > c.ttl { // line 61: e is nil on a miss\n\t\treturn Rate{}, false\n\t}\n\treturn e.rate, true\n}", "path", "shipping/cache.go")
	g.assistant("shipping/cache.go:61 dereferences the map entry before checking that it exists: entries is map[string]*entry, so a cache miss gives nil and e.storedAt panics. It only happens on a miss after 77d2f13 (rate cache, also in v2.14.0). The Recover middleware turns it into a 500, so it's not the 504s.")
	g.user("Ugh. Fix it in a separate PR please, ticket CHK-1302.")
	g.tool("", "edit_file", "Applied edit to shipping/cache.go (1 hunk).", "path", "shipping/cache.go", "old", "\te := c.entries[key]\n\tif time.Since(e.storedAt) > c.ttl {", "new", "\te, ok := c.entries[key]\n\tif !ok || time.Since(e.storedAt) > c.ttl {")
	g.tool("", "run_tests", d.testRun("shipping", "", ""), "pkg", "./shipping")
	g.assistant("Fixed with an ok-check and added TestRateCache_MissReturnsFalse. Branch fix/CHK-1302-rate-cache-miss is ready for review.")
}

// postmortem drafts the incident write-up.
func (d *dbg) postmortem() {
	g := d.g
	g.user("Can you draft the postmortem timeline? Keep it factual.")
	g.assistant("Draft timeline (UTC):\n- 14:05 v2.14.0 deployed (includes 9f3c2ab, inventory check inside the order transaction).\n- 14:09 first \"too many clients\" errors; p99 rising.\n- 14:20 INC-4471 opened; error rate ~7%.\n- 14:58 root cause identified: missing rollback on the out-of-stock path in CreateOrder.\n- 15:40 v2.14.1 canary at 10%.\n- 16:05 v2.14.1 at 100%; no idle-in-transaction sessions; p99 back to ~190ms.\nImpact: failed checkouts during ~2 hours. Contributing factor: no test covered the out-of-stock path with a real transaction. Follow-ups: CHK-1290 (refunds early return), CHK-1302 (rate cache nil entry), a lint rule requiring defer tx.Rollback() after BeginTx.")
	g.user("Good. Add a section on detection: why didn't alerting catch it earlier?")
	g.assistant("Detection: the pool-exhaustion signal (db_pool_wait_seconds) had no alert; the 504 alert fires at 5% over 10 minutes, so it paged at 14:19, 14 minutes after the deploy. Proposal: alert on db_pool_in_use / max_open_conns > 0.9 for 3 minutes, and on any idle-in-transaction session older than 60s.")
	for i := 0; i < 4; i++ {
		g.user(g.fill(g.pick("Can you reword the impact line{| a bit}?", "Add who was on call.", "Mention that the canary caught nothing because the leak needs traffic.", "Shorter please.")))
		g.assistant(g.fill(g.pick("Updated{| the draft}.", "Done — {reworded|shortened} {that section|the paragraph}.", "Added.")))
	}
}
