package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// benchEnv is a service with one team whose webhook points at a local
// receiver, and an engine (real clock) that start begins running.
func benchEnv(b *testing.B, handler http.HandlerFunc) (*apptest.Env, *apptest.User, func()) {
	b.Helper()
	env := apptest.Setup(b, apptest.Options{Bare: true, RealClock: true}).Env
	owner := env.Signup("bench")
	rc := httptest.NewServer(handler)
	b.Cleanup(rc.Close)
	createWebhook(b, owner, rc.URL, events.ContactCreated)
	eng := env.App.WebhookEngine // the engine the app's outbox wakes
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	b.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
		}
	})
	start := func() {
		go func() {
			defer close(done)
			_ = eng.Run(ctx)
		}()
	}
	return env, owner, start
}

// BenchmarkWebhookDelivery measures deliveries per second: b.N events
// are queued in the outbox, then the engine fans them out and delivers
// them to a local receiver; the clock runs from engine start to the last
// arrival.
func BenchmarkWebhookDelivery(b *testing.B) {
	var got atomic.Int64
	all := make(chan struct{})
	var target int64
	env, owner, start := benchEnv(b, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if got.Add(1) == atomic.LoadInt64(&target) {
			close(all)
		}
	})
	atomic.StoreInt64(&target, int64(b.N))
	team := uuid.MustParse(owner.TeamID)
	for off := 0; off < b.N; off += 1000 {
		evs := make([]events.Event, min(1000, b.N-off))
		for i := range evs {
			book := uuid.New()
			evs[i] = events.Event{Type: events.ContactCreated, TeamID: team, BookID: &book, Data: map[string]any{"id": uuid.NewString(), "first_name": "Ada"}}
		}
		if err := postgres.InTx(context.Background(), env.App.DB, func(tx *postgres.Tx) error {
			return env.App.Outbox.Append(context.Background(), tx, time.Now(), evs...)
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	began := time.Now()
	start()
	select {
	case <-all:
	case <-time.After(10*time.Second + time.Duration(b.N)*5*time.Millisecond):
		b.Fatalf("delivered %d of %d", got.Load(), b.N)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "deliveries/s")
}

// BenchmarkWebhookLatency commits one event per iteration at 500 events
// per second, each in its own transaction as a real change would, and
// reports the time from commit to arrival at the receiver (p50, p99).
func BenchmarkWebhookLatency(b *testing.B) {
	const rate = 500
	var (
		mu        sync.Mutex
		committed = map[int]time.Time{}
		arrived   = map[int]time.Time{}
		got       atomic.Int64
	)
	env, owner, start := benchEnv(b, func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		var p struct {
			Data struct {
				N int `json:"n"`
			} `json:"data"`
		}
		_ = json.NewDecoder(r.Body).Decode(&p)
		mu.Lock()
		arrived[p.Data.N] = at
		mu.Unlock()
		got.Add(1)
	})
	team := uuid.MustParse(owner.TeamID)
	start()
	time.Sleep(200 * time.Millisecond) // the engine is listening
	// Commits are paced by a schedule, not by each other: several
	// committers, on their own connections, keep the rate when one commit
	// is slow.
	const committerCount = 16
	gen := pgtest.Setup(b, pgtest.On(env.DBURL), pgtest.MaxConns(committerCount)).Pool
	due := make(chan int)
	var committers sync.WaitGroup
	for range committerCount {
		committers.Go(func() {
			for i := range due {
				book := uuid.New()
				if err := postgres.InTx(context.Background(), gen, func(tx *postgres.Tx) error {
					return env.App.Outbox.Append(context.Background(), tx, time.Now(), events.Event{
						Type: events.ContactCreated, TeamID: team, BookID: &book, Data: map[string]any{"id": uuid.NewString(), "n": i},
					})
				}); err != nil {
					b.Error(err)
					return
				}
				at := time.Now()
				mu.Lock()
				committed[i] = at
				mu.Unlock()
			}
		})
	}
	b.ResetTimer()
	began := time.Now()
	for i := range b.N {
		if wait := time.Until(began.Add(time.Duration(i) * time.Second / rate)); wait > 0 {
			time.Sleep(wait)
		}
		due <- i
	}
	close(due)
	committers.Wait()
	sent := time.Since(began)
	for deadline := time.Now().Add(30 * time.Second); got.Load() < int64(b.N); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("delivered %d of %d", got.Load(), b.N)
		}
	}
	b.StopTimer()
	mu.Lock()
	lat := make([]time.Duration, 0, b.N)
	for i, c := range committed {
		lat = append(lat, max(0, arrived[i].Sub(c)))
	}
	mu.Unlock()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(b.N)/sent.Seconds(), "events/s")
}

// BenchmarkWebhookRecovery recovers 10,000 failed events: it reports how
// long the recovery takes to queue them all (from the request) and the
// rate at which the engine then delivers them to a local receiver.
func BenchmarkWebhookRecovery(b *testing.B) {
	const failed = 10000
	for range b.N {
		var got atomic.Int64
		all := make(chan struct{})
		env, owner, start := benchEnv(b, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			if got.Add(1) == failed {
				close(all)
			}
		})
		var hook uuid.UUID
		team := uuid.MustParse(owner.TeamID)
		err := env.App.Pool.QueryRow(context.Background(), `SELECT id FROM webhooks WHERE team_id = $1`, team).Scan(&hook)
		if err != nil {
			b.Fatal(err)
		}
		// An hour-old outage: every event's delivery failed for good.
		_, err = env.App.Pool.Exec(context.Background(), `
			WITH e AS (
				INSERT INTO events (id, team_id, type, body, occurred_at)
				SELECT gen_random_uuid(), $1, 'contact.created', convert_to('{"event":"contact.created","n":' || n || '}', 'UTF8'),
				       now() - interval '1 hour' + n * interval '1 millisecond'
				FROM generate_series(1, $3) n RETURNING id)
			INSERT INTO webhook_deliveries (event_id, webhook_id, status, attempts, next_attempt_at)
			SELECT id, $2, 'failed', 4, now() FROM e`, team, hook, failed)
		if err != nil {
			b.Fatal(err)
		}
		start()
		b.ResetTimer()
		began := time.Now()
		r := owner.Post(fmt.Sprintf("/api/teams/%s/webhooks/%s/recover", team, hook),
			map[string]any{"since": time.Now().Add(-2 * time.Hour).Format(time.RFC3339)}).Expect(http.StatusAccepted)
		if queued := r.Int("data.queued"); queued != failed {
			b.Fatalf("recover queued %d", queued)
		}
		var queuedIn time.Duration
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(2 * time.Millisecond) {
			var n int
			if err := env.App.Pool.QueryRow(context.Background(),
				`SELECT count(*) FROM webhook_deliveries WHERE recovery_id IS NOT NULL`).Scan(&n); err != nil {
				b.Fatal(err)
			}
			if n == failed {
				queuedIn = time.Since(began)
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("queued %d of %d", n, failed)
			}
		}
		select {
		case <-all:
		case <-time.After(60 * time.Second):
			b.Fatalf("delivered %d of %d", got.Load(), failed)
		}
		b.StopTimer()
		b.ReportMetric(float64(queuedIn.Microseconds())/1000, "queue-ms")
		var pickup, work float64
		_ = env.App.Pool.QueryRow(context.Background(), `SELECT extract(epoch from attempted_at - created_at)*1000, extract(epoch from finalized_at - attempted_at)*1000 FROM river_job WHERE kind = 'webhook_recovery'`).Scan(&pickup, &work)
		b.Logf("pickup %.0f ms, work %.0f ms", pickup, work)
		b.ReportMetric(failed/time.Since(began).Seconds(), "deliveries/s")
	}
}
