package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// switchable answers 500 (or status, when set) until ok is stored true,
// then 200.
func switchable(ok *atomic.Bool, status int) func(w http.ResponseWriter, _ *http.Request, _ int) {
	return func(w http.ResponseWriter, _ *http.Request, _ int) {
		if ok.Load() {
			_, _ = io.WriteString(w, "ok")
			return
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "down")
	}
}

func TestWebhookManualRetryIsTheSameDelivery(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{})
	owner := env.Signup("ann")
	drain(t, eng)
	var up atomic.Bool
	rc := newReceiver(t, switchable(&up, http.StatusInternalServerError))
	hookID, secret := createWebhook(t, owner, rc.URL, events.BookCreated)
	base := fmt.Sprintf("/api/teams/%s/webhooks/%s", owner.TeamID, hookID)
	owner.CreateBook("Work")
	// The four automatic attempts, all failing.
	run(t, eng)
	for _, d := range []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute} {
		env.Clock.Advance(d)
		run(t, eng)
	}
	if rc.count() != 4 {
		t.Fatalf("receiver got %d requests, want the 4 automatic attempts", rc.count())
	}
	deliveryID := owner.Get(base + "/deliveries").Expect(http.StatusOK).String("data.0.delivery_id")

	// A retry after the automatic attempts: one more attempt, the same
	// delivery byte for byte, logged manual, not retried when it fails.
	r := owner.Post(base+"/deliveries/"+deliveryID+"/retry", nil).Expect(http.StatusAccepted)
	if r.String("data.delivery_id") != deliveryID {
		t.Errorf("retry answered %v", r.Value("data"))
	}
	if n := run(t, eng); n != 1 {
		t.Fatalf("retry made %d attempts, want 1", n)
	}
	env.Clock.Advance(time.Hour)
	if n := run(t, eng); n != 0 {
		t.Fatalf("a failed manual attempt was retried automatically (%d attempts)", n)
	}
	// Once the receiver is back, a retry succeeds; a retry of a succeeded
	// delivery sends it again too.
	up.Store(true)
	for range 2 {
		owner.Post(base+"/deliveries/"+deliveryID+"/retry", nil).Expect(http.StatusAccepted)
		if n := run(t, eng); n != 1 {
			t.Fatalf("retry made %d attempts, want 1", n)
		}
	}
	got := rc.deliveries()
	if len(got) != 7 {
		t.Fatalf("receiver got %d requests, want 7", len(got))
	}
	for i, d := range got {
		checkSignatures(t, d, secret)
		if d.Header.Get("X-Service-Delivery") != deliveryID || string(d.Body) != string(got[0].Body) {
			t.Errorf("request %d: delivery %s, body %s; want delivery %s with the first body", i, d.Header.Get("X-Service-Delivery"), d.Body, deliveryID)
		}
	}
	log := owner.Get(base + "/deliveries").Expect(http.StatusOK)
	for i, want := range []bool{true, true, true, false, false, false, false} {
		e := fmt.Sprintf("data.%d.", i)
		if log.Bool(e+"manual") != want || log.String(e+"delivery_id") != deliveryID {
			t.Errorf("log entry %d: manual %v, want %v", i, log.Bool(e+"manual"), want)
		}
	}
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE id::text = $1 AND status = 'succeeded' AND NOT manual`, deliveryID); n != 1 {
		t.Error("the delivery is not succeeded after the successful retry")
	}

	// Only a delivery of this webhook can be retried.
	other, _ := createWebhook(t, owner, rc.URL, events.BookCreated)
	owner.Post(fmt.Sprintf("/api/teams/%s/webhooks/%s/deliveries/%s/retry", owner.TeamID, other, deliveryID), nil).
		ExpectError(http.StatusNotFound, "NOT_FOUND")
	owner.Post(base+"/deliveries/00000000-0000-0000-0000-000000000001/retry", nil).ExpectError(http.StatusNotFound, "NOT_FOUND")
}

func TestWebhookTestSend(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{})
	owner := env.Signup("ann")
	drain(t, eng)
	rc := newReceiver(t, nil)
	hookID, secret := createWebhook(t, owner, rc.URL, events.ContactCreated)
	base := fmt.Sprintf("/api/teams/%s/webhooks/%s", owner.TeamID, hookID)
	deliveryID := owner.Post(base+"/test", nil).Expect(http.StatusAccepted).String("data.delivery_id")
	if n := run(t, eng); n != 1 {
		t.Fatalf("test send made %d attempts, want 1", n)
	}
	got := rc.deliveries()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests", len(got))
	}
	d := got[0]
	checkSignatures(t, d, secret)
	p := payload(t, d)
	data, _ := p["data"].(map[string]any)
	if d.Header.Get("X-Service-Event") != "webhook.test" || p["event"] != "webhook.test" || data["webhook_id"] != hookID ||
		p["team_id"] != owner.TeamID || d.Header.Get("X-Service-Delivery") != deliveryID {
		t.Errorf("test event: headers %v, body %s", d.Header, d.Body)
	}
	log := owner.Get(base + "/deliveries?event=webhook.test").Expect(http.StatusOK)
	if log.Len("data") != 1 || !log.Bool("data.0.manual") || log.String("data.0.delivery_id") != deliveryID || !log.Bool("data.0.success") {
		t.Errorf("log: %v", log.Value("data"))
	}
	// A switched-off webhook still gets its admin's test.
	owner.Patch(base, map[string]any{"active": false}).Expect(http.StatusOK)
	owner.Post(base+"/test", nil).Expect(http.StatusAccepted)
	if n := run(t, eng); n != 1 || rc.count() != 2 {
		t.Fatalf("test send to a switched-off webhook: %d attempts, %d requests", n, rc.count())
	}
}

func TestWebhookRecovery(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	// One worker: attempts are made in the order the queue hands them out.
	eng := engine(env, webhooks.EngineConfig{Workers: 1})
	owner := env.Signup("ann")
	drain(t, eng)
	var up atomic.Bool
	rc := newReceiver(t, switchable(&up, http.StatusBadRequest)) // 400: failed at once, no retries
	hookID, _ := createWebhook(t, owner, rc.URL, events.ContactCreated)
	base := fmt.Sprintf("/api/teams/%s/webhooks/%s", owner.TeamID, hookID)
	t0 := env.Clock.Now()
	appendEvents(t, env, owner.TeamID, 5, t0)                  // before since: not recovered
	appendEvents(t, env, owner.TeamID, 12, t0.Add(time.Hour))  // recovered
	appendEvents(t, env, owner.TeamID, 3, t0.Add(2*time.Hour)) // recovered
	env.Clock.Advance(2 * time.Hour)
	if n := run(t, eng); n != 20 {
		t.Fatalf("%d attempts, want 20", n)
	}
	up.Store(true)
	before := rc.count()
	since := t0.Add(30 * time.Minute).Format(time.RFC3339)
	if q := owner.Post(base+"/recover", map[string]any{"since": since}).Expect(http.StatusAccepted).Int("data.queued"); q != 15 {
		t.Fatalf("queued %d, want 15", q)
	}
	env.WaitJobs()
	env.Clock.Advance(time.Second) // the queued deliveries are due microseconds apart, in order
	if n := run(t, eng); n != 15 {
		t.Fatalf("recovery made %d attempts, want 15", n)
	}
	// Oldest first: the hour's twelve in their order, then the next three.
	var ns []float64
	for _, d := range rc.deliveries()[before:] {
		data, _ := payload(t, d)["data"].(map[string]any)
		ns = append(ns, data["n"].(float64))
	}
	want := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2}
	if fmt.Sprint(ns) != fmt.Sprint(want) {
		t.Errorf("recovered in the order %v, want %v", ns, want)
	}
	if n := env.QueryInt(`SELECT count(*) FROM webhook_attempts WHERE manual AND success`); n != 15 {
		t.Errorf("%d manual successful attempts logged, want 15", n)
	}
	// Nothing failed since: a second recovery has nothing to send.
	if q := owner.Post(base+"/recover", map[string]any{"since": since}).Expect(http.StatusAccepted).Int("data.queued"); q != 0 {
		t.Errorf("second recovery queued %d", q)
	}

	// since must be within the last 30 days, and present.
	for _, bad := range []map[string]any{{}, {"since": env.Clock.Now().Add(-31 * 24 * time.Hour).Format(time.RFC3339)},
		{"since": env.Clock.Now().Add(time.Hour).Format(time.RFC3339)}} {
		owner.Post(base+"/recover", bad).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	}
}

func TestWebhookRecoveryRerunSendsEachOnceMore(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true, WithoutJobs: true}).Env
	eng := engine(env, webhooks.EngineConfig{})
	owner := env.Signup("ann")
	drain(t, eng)
	rc := newReceiver(t, switchable(new(atomic.Bool), http.StatusGone)) // always fails, for good
	hookID, _ := createWebhook(t, owner, rc.URL, events.ContactCreated)
	appendEvents(t, env, owner.TeamID, 8, env.Clock.Now())
	env.Clock.Advance(time.Minute)
	run(t, eng)
	owner.Post(fmt.Sprintf("/api/teams/%s/webhooks/%s/recover", owner.TeamID, hookID),
		map[string]any{"since": env.Clock.Now().Add(-time.Hour).Format(time.RFC3339)}).Expect(http.StatusAccepted)
	args := queuedRecovery(t, env)
	ctx := context.Background()
	if err := webhooks.RunRecovery(ctx, env.App.Webhooks, args); err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(time.Second)
	if n := run(t, eng); n != 8 {
		t.Fatalf("recovery made %d attempts, want 8", n)
	}
	// The job runs again (its instance died before River heard it end):
	// the deliveries it queued failed again, and are not queued twice.
	if err := webhooks.RunRecovery(ctx, env.App.Webhooks, args); err != nil {
		t.Fatal(err)
	}
	if n := run(t, eng); n != 0 {
		t.Fatalf("the rerun made %d attempts more", n)
	}
	if rc.count() != 16 {
		t.Errorf("receiver got %d requests, want 16", rc.count())
	}
}

// requestsPerDelivery counts the receiver's requests by X-Service-Delivery.
func requestsPerDelivery(rc *receiver) map[string]int {
	n := map[string]int{}
	for _, d := range rc.deliveries() {
		n[d.Header.Get("X-Service-Delivery")]++
	}
	return n
}

// TestWebhookRecoveryTakesOverWaitingRetries: a delivery waiting for its
// automatic retry has a failed latest attempt too. The recovery sends it
// now, once, in place of the retry. One an engine holds (its attempt
// under way or about to be) is left to that engine, and one never
// attempted has not failed.
func TestWebhookRecoveryTakesOverWaitingRetries(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{Workers: 1})
	owner := env.Signup("ann")
	drain(t, eng)
	var up atomic.Bool
	rc := newReceiver(t, switchable(&up, http.StatusServiceUnavailable)) // 503: retried 10 s later
	hookID, _ := createWebhook(t, owner, rc.URL, events.ContactCreated)
	base := fmt.Sprintf("/api/teams/%s/webhooks/%s", owner.TeamID, hookID)
	t0 := env.Clock.Now()
	appendEvents(t, env, owner.TeamID, 4, t0)
	if n := run(t, eng); n != 4 {
		t.Fatalf("%d attempts, want 4", n)
	}
	// Another instance's engine has claimed one of the four retries.
	env.QueryInt(`UPDATE webhook_deliveries SET lease_owner = 'elsewhere', lease_until = $2
		WHERE id = (SELECT id FROM webhook_deliveries WHERE webhook_id::text = $1 ORDER BY id LIMIT 1) RETURNING 0`,
		hookID, t0.Add(time.Minute))
	appendEvents(t, env, owner.TeamID, 1, t0) // fanned out, not attempted yet
	drain(t, eng)
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE webhook_id::text = $1 AND status = 'pending'`, hookID); n != 5 {
		t.Fatalf("%d deliveries pending, want 5", n)
	}

	up.Store(true)
	since := t0.Add(-time.Minute).Format(time.RFC3339)
	if q := owner.Post(base+"/recover", map[string]any{"since": since}).Expect(http.StatusAccepted).Int("data.queued"); q != 3 {
		t.Fatalf("queued %d, want the 3 retries no engine holds", q)
	}
	env.WaitJobs()
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE recovery_id IS NOT NULL AND manual AND status = 'pending'`); n != 3 {
		t.Fatalf("%d deliveries queued by the recovery, want 3", n)
	}
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE recovery_id IS NULL AND NOT manual
		AND (lease_owner = 'elsewhere' AND attempts = 1 OR lease_owner IS NULL AND attempts = 0)`); n != 2 {
		t.Fatalf("the recovery touched the claimed or the unattempted delivery (%d left as they were, want 2)", n)
	}
	env.Clock.Advance(time.Second)
	if n := run(t, eng); n != 4 {
		t.Fatalf("%d attempts, want the 3 recovered and the first of the new event", n)
	}
	// The retries the recovery replaced are not made as well; the claimed
	// one goes when its engine's lease has run out, as it would have.
	env.Clock.Advance(time.Hour)
	if n := run(t, eng); n != 1 {
		t.Fatalf("%d attempts an hour later, want only the claimed retry", n)
	}
	counts := map[int]int{}
	for _, n := range requestsPerDelivery(rc) {
		counts[n]++
	}
	if fmt.Sprint(counts) != fmt.Sprint(map[int]int{1: 1, 2: 4}) {
		t.Errorf("requests per delivery (requests: deliveries) %v, want the new event once and the 4 others twice", counts)
	}
	if n := env.QueryInt(`SELECT count(*) FROM webhook_attempts WHERE manual AND success`); n != 3 {
		t.Errorf("%d manual attempts logged, want 3", n)
	}
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'`); n != 5 {
		t.Errorf("%d deliveries succeeded, want 5", n)
	}
}

// TestWebhookRecoveryRacingEnginesSendsEachOnce: a recovery runs while two
// engines claim the same retries, now due: each delivery gets one more
// request, from its retry or from the recovery, never both.
func TestWebhookRecoveryRacingEnginesSendsEachOnce(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true, WithoutJobs: true}).Env
	// The engines' clock runs a second ahead of the service's, so that what
	// the recovery queues (due a microsecond apart from now on) is due too.
	ahead := func() time.Time { return env.Clock.Now().Add(time.Second) }
	engines := []*webhooks.Engine{engine(env, webhooks.EngineConfig{Workers: 4, Now: ahead}), engine(env, webhooks.EngineConfig{Workers: 4, Now: ahead})}
	owner := env.Signup("ann")
	drain(t, engines[0])
	var up atomic.Bool
	rc := newReceiver(t, switchable(&up, http.StatusServiceUnavailable))
	hookID, _ := createWebhook(t, owner, rc.URL, events.ContactCreated)
	t0 := env.Clock.Now()
	const total = 300
	appendEvents(t, env, owner.TeamID, total, t0)
	if n := run(t, engines[0]); n != total {
		t.Fatalf("%d attempts, want %d", n, total)
	}
	up.Store(true)
	env.Clock.Advance(10 * time.Second) // every retry is due
	owner.Post(fmt.Sprintf("/api/teams/%s/webhooks/%s/recover", owner.TeamID, hookID),
		map[string]any{"since": t0.Add(-time.Minute).Format(time.RFC3339)}).Expect(http.StatusAccepted)
	args := queuedRecovery(t, env)

	ctx := context.Background()
	var recovered atomic.Bool
	errs := make(chan error, len(engines)+1)
	go func() {
		errs <- webhooks.RunRecovery(ctx, env.App.Webhooks, args)
		recovered.Store(true)
	}()
	for _, eng := range engines {
		go func() {
			for {
				done := recovered.Load()
				n, err := eng.DeliverDue(ctx)
				if err != nil || done && n == 0 {
					errs <- err
					return
				}
			}
		}()
	}
	for range len(engines) + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for id, n := range requestsPerDelivery(rc) {
		if n != 2 {
			t.Errorf("delivery %s got %d requests, want 2 (its failed attempt and one more)", id, n)
		}
	}
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'`); n != total {
		t.Errorf("%d deliveries succeeded, want %d", n, total)
	}
}

// TestWebhookRecoveryWhileSwitchedOff: a recovery of a switched-off
// webhook is accepted; what it queues is kept like the webhook's other
// pending deliveries and goes out, once, when it is switched on. That
// holds for a webhook an admin switched off and for one the service did.
func TestWebhookRecoveryWhileSwitchedOff(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{Workers: 1, DisableAfter: time.Hour})
	owner := env.Signup("ann")
	drain(t, eng)
	var up atomic.Bool
	rc := newReceiver(t, switchable(&up, http.StatusServiceUnavailable))
	hookID, _ := createWebhook(t, owner, rc.URL, events.ContactCreated)
	base := fmt.Sprintf("/api/teams/%s/webhooks/%s", owner.TeamID, hookID)
	t0 := env.Clock.Now()
	status := func(s string) int {
		return env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE webhook_id::text = $1 AND status = $2`, hookID, s)
	}
	recoverSince := func(since time.Time) int {
		t.Helper()
		q := owner.Post(base+"/recover", map[string]any{"since": since.Format(time.RFC3339)}).Expect(http.StatusAccepted).Int("data.queued")
		env.WaitJobs()
		return q
	}

	// Switched off by an admin: the retries are canceled.
	appendEvents(t, env, owner.TeamID, 3, t0)
	run(t, eng)
	owner.Patch(base, map[string]any{"active": false}).Expect(http.StatusOK)
	up.Store(true)
	if q := recoverSince(t0.Add(-time.Minute)); q != 3 {
		t.Fatalf("queued %d, want 3", q)
	}
	if status("held") != 3 {
		t.Fatalf("%d deliveries held, want the 3 recovered", status("held"))
	}
	env.Clock.Advance(time.Hour)
	if n := run(t, eng); n != 0 || rc.count() != 3 {
		t.Fatalf("the switched-off webhook got %d attempts", n)
	}
	owner.Patch(base, map[string]any{"active": true}).Expect(http.StatusOK)
	if n := run(t, eng); n != 3 || status("succeeded") != 3 {
		t.Fatalf("switching on sent %d deliveries (%d succeeded), want the 3 recovered", n, status("succeeded"))
	}

	// Switched off by the service, its retry held: recovered as well.
	up.Store(false)
	t1 := env.Clock.Now()
	appendEvents(t, env, owner.TeamID, 1, t1)
	run(t, eng)
	env.Clock.Advance(time.Hour + time.Minute)
	run(t, eng) // the retry fails an hour after the last success
	if status("held") != 1 || env.QueryInt(`SELECT count(*) FROM webhooks WHERE active`) != 0 {
		t.Fatalf("not switched off by the service with its retry held (%d held)", status("held"))
	}
	if q := recoverSince(t1); q != 1 {
		t.Fatalf("queued %d, want the held retry", q)
	}
	before := rc.count()
	owner.Patch(base, map[string]any{"active": true}).Expect(http.StatusOK)
	up.Store(true)
	if n := run(t, eng); n != 1 || rc.count() != before+1 || status("succeeded") != 4 {
		t.Fatalf("switching on made %d attempts, want 1", n)
	}
	if n := env.QueryInt(`SELECT count(*) FROM webhook_attempts WHERE manual AND success`); n != 4 {
		t.Errorf("%d manual attempts logged, want the 4 recovered", n)
	}
}

// queuedRecovery returns the arguments of the recovery job a recover
// request queued (the only one of the test's service).
func queuedRecovery(t *testing.T, env *apptest.Env) webhooks.RecoveryArgs {
	t.Helper()
	var raw []byte
	if err := env.App.Pool.QueryRow(context.Background(), `SELECT args FROM river_job WHERE kind = 'webhook_recovery'`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var args webhooks.RecoveryArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		t.Fatal(err)
	}
	return args
}
