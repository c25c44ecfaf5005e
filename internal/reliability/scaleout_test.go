//go:build reliability

package reliability

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
	"github.com/contactbook/contactbook/internal/postgres/pgbouncertest"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// scaleoutSettings are what every instance of the scenario runs with, as
// in deploy/compose.yaml: DATABASE_URL on PgBouncer in transaction mode,
// DATABASE_DIRECT_URL on PostgreSQL, a drain longer than HAProxy needs to
// take an instance out (2 checks 500 ms apart).
func scaleoutSettings(directURL, publicURL string) []string {
	return []string{
		"DATABASE_DIRECT_URL=" + directURL, "DATABASE_POOL_MODE=transaction", "SHUTDOWN_DRAIN=3s",
		"DB_MAX_CONNS=10", "PUBLIC_BASE_URL=" + publicURL,
		// A dead instance's job is rescued after 20 s instead of a
		// minute, which keeps the scenario short.
		"JOB_RESCUE_AFTER=20s",
	}
}

// loadStats counts the answers of the mixed load, per phase.
type loadStats struct {
	served, failed atomic.Int64
	mu             sync.Mutex
	failures       []string
}

func (s *loadStats) record(r *response, err error, what string) bool {
	if err == nil && r.status < 500 && r.status != http.StatusTooManyRequests {
		s.served.Add(1)
		return r.status < 300
	}
	s.failed.Add(1)
	s.mu.Lock()
	if len(s.failures) < 5 {
		if err != nil {
			s.failures = append(s.failures, fmt.Sprintf("%s: %v", what, err))
		} else {
			s.failures = append(s.failures, fmt.Sprintf("%s: %d %.120s", what, r.status, strings.Join(strings.Fields(string(r.body)), " ")))
		}
	}
	s.mu.Unlock()
	return false
}

// TestScaleOut runs three instances of the binary behind HAProxy, on one
// PostgreSQL reached through PgBouncer in transaction mode, under a mixed
// load (reads, creates, patches, bulk changes) with an import, two
// campaign runs and webhook deliveries going on. A rolling restart of all
// three instances must fail no request; a kill -9 of one instance must lose
// no acknowledged write, send no email twice and deliver every webhook
// event at least once; an image uploaded through one instance is served by
// the other two.
func TestScaleOut(t *testing.T) {
	const clients, seedContacts, campaignSize, importRows = 24, 2000, 4000, 20000
	ctx := context.Background()
	dbURL := pgtest.Setup(t).URL
	pool := dbPool(t, dbURL)
	bouncer := pgbouncertest.Start(t, dbURL, pgbouncertest.Options{PoolSize: 20, MaxClients: 500})
	bouncerURL := bouncer.URL(dbURL)
	mail := mailertest.NewServer(t)
	// Each provider request (up to 1,000 recipients) takes 1.5 s: a run
	// lasts seconds, long enough to be interrupted.
	mail.SetDelay(1500 * time.Millisecond)

	var (
		hookMu   sync.Mutex
		received = map[string]int{}
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hookMu.Lock()
		received[r.Header.Get("X-Service-Delivery")]++
		hookMu.Unlock()
	}))
	t.Cleanup(hook.Close)

	lbAddr := apptest.FreeAddr(t)
	lb := "http://" + lbAddr
	settings := scaleoutSettings(dbURL, lb)
	addrs := map[string]string{"a": apptest.FreeAddr(t), "b": apptest.FreeAddr(t), "c": apptest.FreeAddr(t)}
	instances := map[string]*instance{}
	for _, name := range []string{"a", "b", "c"} {
		instances[name] = startAt(t, name, addrs[name], bouncerURL, mail.URL, settings...)
	}
	startHAProxy(t, lbAddr, addrs)
	waitFor(t, 10*time.Second, "haproxy to see the instances", func() bool {
		r, err := caller{base: lb}.do("GET", "/readyz", nil)
		return err == nil && r.status == http.StatusOK
	})

	// The team, its webhook, its campaigns and the seed, through the load
	// balancer (the seed contacts in one statement).
	tm := signup(t, lb, "Scale")
	if _, err := pool.Exec(ctx, `UPDATE teams SET campaign_addon = 'active' WHERE id = $1`, tm.teamID); err != nil {
		t.Fatal(err)
	}
	tm.owner.must(t, http.StatusCreated, "POST", "/api/teams/"+tm.teamID+"/webhooks",
		map[string]any{"url": hook.URL + "/hook", "events": []string{events.ContactCreated}})
	label := tm.owner.must(t, http.StatusCreated, "POST", "/api/books/"+tm.book+"/labels", map[string]any{"name": "Hot"}).str("data.id")
	tm.owner.must(t, http.StatusOK, "PUT", "/api/campaign-settings", map[string]any{
		"sender_name": "Acme News", "sender_email": "news@acme.example", "reply_to_email": "help@acme.example",
		"company_name": "Acme Inc.", "address_line1": "1 Main St", "city": "Springfield", "state": "IL",
		"postal_code": "62701", "country": "USA", "mailer_api_key": "SG.reliability-0123456789",
	})
	tpl := tm.key.must(t, http.StatusOK, "POST", "/api/v1/campaign-templates",
		map[string]any{"name": "Hello", "subject": "Hello {{first_name}}", "body_html": "<p>Hi {{first_name}}</p>"}).str("data.id")
	seed := func(prefix string, n int) []string {
		if _, err := pool.Exec(ctx, `
			INSERT INTO contacts (book_id, first_name, last_name, emails)
			SELECT $1, $2 || g, 'Scale', jsonb_build_array(jsonb_build_object('address', $2 || g || '@example.com', 'label', 'work', 'primary', true))
			FROM generate_series(1, $3) AS g`, tm.book, prefix, n); err != nil {
			t.Fatal(err)
		}
		rows, _ := pool.Query(ctx, `SELECT id::text FROM contacts WHERE book_id = $1 AND first_name LIKE $2 || '%'`, tm.book, prefix)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(ids) != n {
			t.Fatalf("seed %s: %d, %v", prefix, len(ids), err)
		}
		return ids
	}
	seedIDs := seed("seed", seedContacts)
	campaign := func(name, prefix string) (id, step string) {
		id = tm.key.must(t, http.StatusOK, "POST", "/api/v1/campaigns", map[string]any{"name": name}).str("data.id")
		step = tm.key.must(t, http.StatusOK, "POST", "/api/v1/campaigns/"+id+"/steps", map[string]any{
			"step_type": "email", "name": "Email", "schedule_type": "immediate", "email_template_id": tpl,
		}).str("data.id")
		if n := tm.key.must(t, http.StatusOK, "POST", "/api/v1/campaigns/"+id+"/participants",
			map[string]any{"contact_ids": seed(prefix, campaignSize)}).num("data.enrolled"); n != campaignSize {
			t.Fatalf("enrolled %d, want %d", n, campaignSize)
		}
		tm.key.must(t, http.StatusOK, "PATCH", "/api/v1/campaigns/"+id, map[string]any{"status": "active"})
		return id, step
	}
	camp1, step1 := campaign("Rolling", "rolling")
	camp2, step2 := campaign("Killed", "killed")

	// The mixed load, through the load balancer, until stopped.
	var (
		phase     atomic.Pointer[loadStats]
		ackedMu   sync.Mutex
		created   []string
		labelled  = map[string]bool{}
		stopLoad  = make(chan struct{})
		loadGroup sync.WaitGroup
	)
	phase.Store(&loadStats{})
	key := tm.key
	key.base = lb
	// one sends one request of the mix and counts its answer in st.
	one := func(r *rand.Rand, st *loadStats) {
		switch n := r.IntN(100); {
		case n < 35:
			res, err := key.do("GET", "/api/v1/contacts/"+seedIDs[r.IntN(len(seedIDs))], nil)
			st.record(res, err, "get")
		case n < 55:
			res, err := key.do("GET", fmt.Sprintf("/api/v1/contacts?limit=50&page=%d", 1+r.IntN(20)), nil)
			st.record(res, err, "list")
		case n < 65:
			res, err := key.do("GET", fmt.Sprintf("/api/v1/contacts?q=seed%d", r.IntN(seedContacts)), nil)
			st.record(res, err, "search")
		case n < 85:
			res, err := key.do("POST", "/api/v1/contacts", map[string]any{
				"first_name": "New", "last_name": strconv.Itoa(r.IntN(1e6)),
				"emails": []map[string]any{{"address": unique("new") + "@example.com", "label": "work", "primary": true}},
			})
			if st.record(res, err, "create") {
				ackedMu.Lock()
				created = append(created, res.str("data.id"))
				ackedMu.Unlock()
			}
		case n < 95:
			res, err := key.do("PATCH", "/api/v1/contacts/"+seedIDs[r.IntN(len(seedIDs))], map[string]any{"job_title": "T" + strconv.Itoa(r.IntN(1000))})
			st.record(res, err, "patch")
		default:
			s := r.IntN(len(seedIDs) - 50)
			ids := seedIDs[s : s+50]
			res, err := key.do("POST", "/api/v1/contacts/bulk-add-label", map[string]any{"contact_ids": ids, "label_id": label})
			if st.record(res, err, "bulk-add-label") {
				ackedMu.Lock()
				for _, id := range ids {
					labelled[id] = true
				}
				ackedMu.Unlock()
			}
		}
	}

	// Phase 0: the database cost of a request, from PgBouncer's counters:
	// first one client alone for 5 s (the cost of a request on an idle
	// system), then the 24 clients for 6 s (at saturation, where the time
	// includes queueing for the machine's 2 cores).
	dbName := dbURL[strings.LastIndex(dbURL, "/")+1:]
	if i := strings.IndexByte(dbName, '?'); i >= 0 {
		dbName = dbName[:i]
	}
	measure := func(run func()) (pgbouncertest.Stats, time.Duration) {
		before, err := bouncer.Stats(ctx, dbName)
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		run()
		after, err := bouncer.Stats(ctx, dbName)
		if err != nil {
			t.Fatal(err)
		}
		return after.Sub(before), time.Since(began)
	}
	// The instances' own background work (job queue and webhook polls,
	// leader election), with no request: subtracted from what follows.
	idleCost, idleTook := measure(func() { time.Sleep(4 * time.Second) })
	solo := &loadStats{}
	soloCost, soloTook := measure(func() {
		r := rand.New(rand.NewPCG(99, 7))
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
			one(r, solo)
		}
	})
	time.Sleep(2 * time.Second) // the solo phase's webhook deliveries
	for c := range clients {
		loadGroup.Go(func() {
			r := rand.New(rand.NewPCG(uint64(c), 7))
			for {
				select {
				case <-stopLoad:
					return
				default:
				}
				one(r, phase.Load())
			}
		})
	}
	owner := tm.owner
	owner.base = lb
	runCampaign := func(id string) string {
		return owner.must(t, http.StatusOK, "POST", "/api/campaigns/"+id+"/run", nil).str("data.message")
	}

	time.Sleep(time.Second)
	steady := &loadStats{}
	phase.Store(steady)
	cost, steadyTook := measure(func() { time.Sleep(6 * time.Second) })

	// Phase 1: the rolling restart, with an import and a run going on.
	var csv bytes.Buffer
	csv.WriteString("first_name,last_name,email\r\n")
	for i := range importRows {
		fmt.Fprintf(&csv, "Imported,%d,imported%d@example.com\r\n", i, i)
	}
	importID := owner.must(t, http.StatusAccepted, "POST", "/api/books/"+tm.book+"/imports",
		raw(apptest.ImportForm(t, csv.Bytes(), nil))).str("data.id")
	runCampaign(camp1)
	rolling := &loadStats{}
	phase.Store(rolling)
	rollingBegan := time.Now()
	type restart struct {
		name              string
		stop, start, back time.Duration
	}
	var restarts []restart
	for _, name := range []string{"a", "b", "c"} {
		in := instances[name]
		t0 := time.Now()
		_ = in.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-in.done:
		case <-time.After(45 * time.Second):
			t.Fatalf("%s did not stop within 45 s of SIGTERM", name)
		}
		stopped := time.Since(t0)
		t1 := time.Now()
		instances[name] = startAt(t, name, addrs[name], bouncerURL, mail.URL, settings...)
		started := time.Since(t1)
		// Back in rotation: HAProxy's next check (500 ms) sees it ready.
		time.Sleep(time.Second)
		restarts = append(restarts, restart{name, stopped, started, time.Since(t1)})
	}
	rollingTook := time.Since(rollingBegan)
	time.Sleep(2 * time.Second)

	// Phase 2: kill -9 of the instance working the second run (another
	// one if the run is not being worked yet).
	runCampaign(camp2)
	killPhase := &loadStats{}
	phase.Store(killPhase)
	victim := "b"
	waitFor(t, 20*time.Second, "the second run's job to be running", func() bool {
		var holder string
		_ = pool.QueryRow(ctx, `SELECT coalesce(attempted_by[cardinality(attempted_by)], '') FROM river_job
			WHERE kind = 'campaign_run' AND state = 'running' AND args->>'campaign_id' = $1`, camp2).Scan(&holder)
		for name, in := range instances {
			if strings.Contains(holder, fmt.Sprintf("_pid%d_", in.cmd.Process.Pid)) {
				victim = name
				return true
			}
		}
		return false
	})
	waitFor(t, 30*time.Second, "emails of the second run before the kill", func() bool { return mail.RecipientCount() >= campaignSize+1000 })
	instances[victim].kill()
	emailsAtKill := mail.RecipientCount()
	time.Sleep(3 * time.Second)
	instances[victim] = startAt(t, victim, addrs[victim], bouncerURL, mail.URL, settings...)
	time.Sleep(3 * time.Second)
	close(stopLoad)
	loadGroup.Wait()

	// An image uploaded through one instance, served by the other two.
	png := apptest.PNG()
	viaA := tm.owner
	viaA.base = instances["a"].base
	imageURL := viaA.must(t, http.StatusOK, "POST", "/api/campaign-images",
		raw(apptest.Multipart(t, nil, apptest.File{Field: "image", Name: "logo.png", Data: png}))).str("data.url")
	imagePath := imageURL[strings.Index(imageURL, "/images/"):]
	for _, name := range []string{"b", "c"} {
		r := caller{base: instances[name].base}.must(t, http.StatusOK, "GET", imagePath, nil)
		if !bytes.Equal(r.body, png) || r.ctype != "image/png" {
			t.Errorf("the image from %s: %s, %d bytes", name, r.ctype, len(r.body))
		}
	}

	// Everything settles: the import, both runs (the killed instance's
	// claims are held until their lease ends, 10 minutes: moved into the
	// past here, as an operator's wait would), the webhook deliveries.
	waitFor(t, 120*time.Second, "the import to finish", func() bool {
		return owner.must(t, http.StatusOK, "GET", "/api/books/"+tm.book+"/imports/"+importID, nil).str("data.status") == "succeeded"
	})
	waitFor(t, 240*time.Second, "no run queued or running", func() bool {
		return strings.Contains(runCampaign(camp1), "started") && strings.Contains(runCampaign(camp2), "started")
	})
	time.Sleep(time.Second)
	waitFor(t, 60*time.Second, "the runs to be idle", func() bool {
		return strings.Contains(runCampaign(camp1), "started") && strings.Contains(runCampaign(camp2), "started")
	})
	for _, cid := range []string{camp1, camp2} {
		if _, err := pool.Exec(ctx, `UPDATE campaign_claims SET lease_until = now() - interval '1 second' WHERE campaign_id = $1`, cid); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []string{step1, step2} {
		if _, err := pool.Exec(ctx, `UPDATE campaign_step_completions SET lease_until = now() - interval '1 second' WHERE step_id = $1 AND result IS NULL`, step); err != nil {
			t.Fatal(err)
		}
	}
	runCampaign(camp1)
	runCampaign(camp2)
	waitFor(t, 120*time.Second, "every participant to have a completion", func() bool {
		return queryInt(t, pool, `SELECT count(*) FROM campaign_step_completions WHERE step_id = ANY($1) AND result IS NOT NULL`, []string{step1, step2}) == 2*campaignSize
	})
	// An event reached the receiver when its delivery (the webhook's
	// X-Service-Delivery) did; one not fanned out yet has none.
	undelivered := func() int {
		rows, _ := pool.Query(ctx, `
			SELECT d.id::text FROM events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.type = $1`, events.ContactCreated)
		deliveries, err := pgx.CollectRows(rows, pgx.RowTo[*string])
		if err != nil {
			t.Fatal(err)
		}
		hookMu.Lock()
		defer hookMu.Unlock()
		n := 0
		for _, d := range deliveries {
			if d == nil || received[*d] == 0 {
				n++
			}
		}
		return n
	}
	waitFor(t, 120*time.Second, "every webhook event to be delivered", func() bool { return undelivered() == 0 })

	// What was acknowledged is there.
	lostCreates := len(created) - queryInt(t, pool, `SELECT count(*) FROM contacts WHERE id = ANY($1::uuid[])`, created)
	labelledIDs := make([]string, 0, len(labelled))
	for id := range labelled {
		labelledIDs = append(labelledIDs, id)
	}
	lostLabels := len(labelledIDs) - queryInt(t, pool, `SELECT count(*) FROM contact_labels WHERE label_id = $1 AND contact_id = ANY($2::uuid[])`, label, labelledIDs)
	imported := queryInt(t, pool, `SELECT count(*) FROM contacts WHERE book_id = $1 AND first_name = 'Imported'`, tm.book)
	perAddress := map[string]int{}
	for _, r := range mail.Recipients() {
		perAddress[strings.ToLower(r.Email)]++
	}
	dupes := 0
	for _, n := range perAddress {
		if n > 1 {
			dupes++
		}
	}
	steps := []string{step1, step2}
	success := queryInt(t, pool, `SELECT count(*) FROM campaign_step_completions WHERE step_id = ANY($1) AND result = 'success'`, steps)
	unknown := queryInt(t, pool, `SELECT count(*) FROM campaign_step_completions WHERE step_id = ANY($1) AND result = 'failed' AND result_detail = $2`, steps, campaigns.DetailOutcomeUnknown)
	// Instances that worked a part of the import, and of the first run,
	// which the rolling restart moved from one to the next.
	workedBy := func(kind, arg, value string) int {
		return queryInt(t, pool, `SELECT count(DISTINCT a) FROM river_job, unnest(attempted_by) AS a WHERE kind = $1 AND args->>$2 = $3`, kind, arg, value)
	}
	importWorkers, run1Workers := workedBy("contact_import", "import_id", importID), workedBy("campaign_run", "campaign_id", camp1)
	hookMu.Lock()
	deliveries := 0
	for _, n := range received {
		deliveries += n
	}
	hookMu.Unlock()

	if n := steady.failed.Load() + solo.failed.Load(); n != 0 {
		t.Errorf("the steady load failed %d requests, want 0: %v", n, steady.failures)
	}
	if n := rolling.failed.Load(); n != 0 {
		t.Errorf("the rolling restart failed %d requests, want 0: %v", n, rolling.failures)
	}
	if lostCreates != 0 || lostLabels != 0 {
		t.Errorf("acknowledged writes lost: %d creates, %d labelled contacts", lostCreates, lostLabels)
	}
	if imported != importRows {
		t.Errorf("the import left %d contacts, want %d", imported, importRows)
	}
	if dupes != 0 {
		t.Errorf("%d addresses got a campaign email more than once", dupes)
	}
	if success+unknown != 2*campaignSize {
		t.Errorf("%d sent + %d outcome unknown, want %d in all and no other failures", success, unknown, 2*campaignSize)
	}
	if undelivered() != 0 {
		t.Errorf("%d webhook events never delivered", undelivered())
	}
	report(t, "scale-out: 3 instances behind HAProxy, PgBouncer 1.18 (transaction mode, 20 server connections) in front of PostgreSQL; %d clients of mixed load; machine load average at the end %s",
		clients, loadAverage())
	idleShare := func(took time.Duration) pgbouncertest.Stats {
		f := took.Seconds() / idleTook.Seconds()
		return pgbouncertest.Stats{
			Transactions: int64(float64(idleCost.Transactions) * f), Queries: int64(float64(idleCost.Queries) * f),
			TransactionTime: time.Duration(float64(idleCost.TransactionTime) * f), QueryTime: time.Duration(float64(idleCost.QueryTime) * f),
			WaitTime: time.Duration(float64(idleCost.WaitTime) * f),
		}
	}
	report(t, "scale-out database cost of 3 idle instances (%s): %.1f transactions/s, %.1f statements/s, %s/s in transactions",
		idleTook.Round(100*time.Millisecond), float64(idleCost.Transactions)/idleTook.Seconds(), float64(idleCost.Queries)/idleTook.Seconds(),
		time.Duration(float64(idleCost.TransactionTime)/idleTook.Seconds()).Round(10*time.Microsecond))
	costReport := func(what string, st *loadStats, cost pgbouncertest.Stats, took time.Duration) {
		cost = cost.Sub(idleShare(took))
		per := func(n int64) float64 { return float64(n) / float64(max(st.served.Load(), 1)) }
		perTime := func(d time.Duration) time.Duration { return time.Duration(per(int64(d))).Round(10 * time.Microsecond) }
		report(t, "scale-out database cost, %s (%s, %d requests, %.0f req/s, %d failed), the idle instances' share taken out: per request %.2f transactions, %.2f statements, "+
			"%s in statements, %s in transactions (a server connection held), %s waiting for a server connection",
			what, took.Round(100*time.Millisecond), st.served.Load(), float64(st.served.Load())/took.Seconds(), st.failed.Load(),
			per(cost.Transactions), per(cost.Queries), perTime(cost.QueryTime), perTime(cost.TransactionTime), perTime(cost.WaitTime))
	}
	costReport("1 client", solo, soloCost, soloTook)
	costReport(fmt.Sprintf("%d clients", clients), steady, cost, steadyTook)
	report(t, "scale-out rolling restart: %d requests served, %d failed, in %s; meanwhile an import of %d rows (worked by %d instance processes in turn, %d contacts in the end) and a run of %d emails (its jobs worked by %d instance processes)",
		rolling.served.Load(), rolling.failed.Load(), rollingTook.Round(100*time.Millisecond), importRows, importWorkers, imported, campaignSize, run1Workers)
	for _, r := range restarts {
		report(t, "scale-out rolling restart of %s: SIGTERM to exit %s (drain 3 s included), start to ready %s, back in rotation after %s",
			r.name, r.stop.Round(10*time.Millisecond), r.start.Round(10*time.Millisecond), r.back.Round(100*time.Millisecond))
	}
	report(t, "scale-out kill -9 of %s (holding the second run, %d emails at the provider): %d requests served, %d failed (in flight to the killed instance) %v",
		victim, emailsAtKill, killPhase.served.Load(), killPhase.failed.Load(), killPhase.failures)
	report(t, "scale-out lost: %d of %d acknowledged creates, %d of %d acknowledged labellings; emails: %d participants, %d sent, %d recorded as %q (handed to the provider by the killed instance, so never sent again), %d accepted by the provider in all, %d addresses twice; "+
		"webhooks: %d events, %d deliveries, %d never delivered; an image uploaded on a served by b and c",
		lostCreates, len(created), lostLabels, len(labelledIDs), 2*campaignSize, success, unknown, campaigns.DetailOutcomeUnknown, mail.RecipientCount(), dupes,
		queryInt(t, pool, `SELECT count(*) FROM events WHERE type = $1`, events.ContactCreated), deliveries, undelivered())
}

// loadAverage is the machine's 1-minute load average (Linux), which says
// how much of the measured times is queueing for the CPU.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(b))[0]
}
