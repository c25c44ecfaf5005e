package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/webhooks"
)

func TestWebhookRateLimitSchedulesWhatExceedsIt(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{})
	owner := env.Signup("ann")
	drain(t, eng)
	limited, free := newReceiver(t, nil), newReceiver(t, nil)
	r := owner.Post(fmt.Sprintf("/api/teams/%s/webhooks", owner.TeamID),
		map[string]any{"url": limited.URL, "events": []string{events.ContactCreated}, "rate_limit": 2}).Expect(http.StatusCreated)
	if r.Int("data.webhook.rate_limit") != 2 {
		t.Fatalf("rate_limit = %v", r.Value("data.webhook.rate_limit"))
	}
	createWebhook(t, owner, free.URL, events.ContactCreated)
	appendEvents(t, env, owner.TeamID, 5, env.Clock.Now())

	// 2 a second: one now, the next ones every half second; the webhook
	// without a limit gets all five at once.
	if n := run(t, eng); n != 6 || limited.count() != 1 || free.count() != 5 {
		t.Fatalf("first round: %d attempts, %d limited, %d free", n, limited.count(), free.count())
	}
	env.Clock.Advance(499 * time.Millisecond)
	if n := run(t, eng); n != 0 {
		t.Fatalf("%d attempts before the next send time", n)
	}
	env.Clock.Advance(time.Millisecond)
	if n := run(t, eng); n != 1 {
		t.Fatalf("%d attempts at the next send time, want 1", n)
	}
	env.Clock.Advance(500 * time.Millisecond)
	if n := run(t, eng); n != 1 {
		t.Fatalf("%d attempts at 1 s, want 1", n)
	}
	// An instance that falls behind does not catch up in a burst: the
	// delivery whose time (1.5 s) passed more than a moment ago takes a
	// new one (2.5 s), after the one due now (2 s).
	env.Clock.Advance(time.Second)
	if n := run(t, eng); n != 1 {
		t.Fatalf("%d attempts at 2 s, want 1", n)
	}
	env.Clock.Advance(499 * time.Millisecond)
	if n := run(t, eng); n != 0 {
		t.Fatalf("%d attempts before the new send time", n)
	}
	env.Clock.Advance(time.Millisecond)
	if n := run(t, eng); n != 1 || limited.count() != 5 {
		t.Fatalf("%d attempts at the new send time, want the last one", n)
	}
	// The waiting deliveries did not fail, and each attempt is logged once.
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded' AND attempts = 1`); n != 10 {
		t.Errorf("%d deliveries succeeded at the first attempt, want 10", n)
	}

	// Bounds, and null removes the limit.
	id := r.String("data.webhook.id")
	path := fmt.Sprintf("/api/teams/%s/webhooks/%s", owner.TeamID, id)
	for _, bad := range []any{0, 1001, "fast", 1.5} {
		owner.Patch(path, map[string]any{"rate_limit": bad}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	}
	if got := owner.Patch(path, map[string]any{"rate_limit": nil}).Expect(http.StatusOK).Value("data.rate_limit"); got != nil {
		t.Errorf("rate_limit after null = %v", got)
	}
	if got := owner.Patch(path, map[string]any{"rate_limit": 1000}).Expect(http.StatusOK).Int("data.rate_limit"); got != 1000 {
		t.Errorf("rate_limit = %d", got)
	}
}

// Two engines on one database share the webhook's rate: the receiver
// never gets more than 10 % over it in any second.
func TestWebhookRateLimitAcrossInstances(t *testing.T) {
	t.Parallel()
	const rate, total = 50, 250
	env := apptest.Setup(t, apptest.Options{Bare: true, RealClock: true}).Env
	owner := env.Signup("ann")
	drain(t, engine(env, webhooks.EngineConfig{Now: time.Now}))
	rc := newReceiver(t, nil)
	owner.Post(fmt.Sprintf("/api/teams/%s/webhooks", owner.TeamID),
		map[string]any{"url": rc.URL, "events": []string{events.ContactCreated}, "rate_limit": rate}).Expect(http.StatusCreated)
	appendEvents(t, env, owner.TeamID, total, time.Now())

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		eng := engine(env, webhooks.EngineConfig{Now: time.Now, Poll: time.Second})
		wg.Go(func() { _ = eng.Run(ctx) })
	}
	rc.waitFor(t, total, 30*time.Second)
	cancel()
	wg.Wait()

	// The attempts' start times, as the engines logged them: the receiver
	// here shares the test's CPU, and its own clock readings bunch up when
	// it is starved.
	rows, err := env.App.Pool.Query(context.Background(), `SELECT created_at FROM webhook_attempts ORDER BY created_at`)
	if err != nil {
		t.Fatal(err)
	}
	at, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	if err != nil {
		t.Fatal(err)
	}
	most := busiestSecond(at)
	var received []time.Time
	for _, d := range rc.deliveries() {
		received = append(received, d.At)
	}
	span := at[len(at)-1].Sub(at[0])
	t.Logf("%d deliveries in %s by two engines; at most %d sent in one second (limit %d), %d received",
		len(at), span.Round(time.Millisecond), most, rate, busiestSecond(received))
	if most > rate*11/10 {
		t.Errorf("%d deliveries in one second, limit %d (+10 %%)", most, rate)
	}
	if min := time.Duration((total - 1) * 10 / 11 * int(time.Second) / rate); span < min {
		t.Errorf("%d deliveries in %s: faster than the limit allows (%s)", total, span, min)
	}
	if len(at) != total {
		t.Errorf("receiver got %d requests, want %d", len(at), total)
	}
}

// busiestSecond is the most of times that fall within one second.
func busiestSecond(times []time.Time) int {
	at := append([]time.Time(nil), times...)
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	most := 0
	for i := range at {
		n := sort.Search(len(at), func(j int) bool { return !at[j].Before(at[i].Add(time.Second)) }) - i
		most = max(most, n)
	}
	return most
}
