//go:build reliability

package reliability

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// TestWebhookBurstCrash produces 1,000 contact.created events through the
// API while a slow receiver takes their webhooks, kills the instance with
// SIGKILL mid-burst, starts a new one, and requires every event in the
// outbox to reach the receiver at least once (by its delivery's id).
func TestWebhookBurstCrash(t *testing.T) {
	const total = 1000
	dbURL := pgtest.Setup(t).URL
	pool := dbPool(t, dbURL)

	var (
		mu       sync.Mutex
		received = map[string]int{}
		requests int
	)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		received[r.Header.Get("X-Service-Delivery")]++
		requests++
		mu.Unlock()
		time.Sleep(30 * time.Millisecond) // slow: the burst outlasts the kill
	}))
	defer rc.Close()
	distinct := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(received)
	}

	// Few workers, so that delivering the burst takes seconds.
	first := start(t, "first", dbURL, "http://127.0.0.1:9", "WEBHOOK_WORKERS=2")
	tm := signup(t, first.base, "Burst")
	tm.owner.must(t, http.StatusCreated, "POST", "/api/teams/"+tm.teamID+"/webhooks",
		map[string]any{"url": rc.URL + "/hook", "events": []string{events.ContactCreated}})

	outbox := func() int {
		return queryInt(t, pool, `SELECT count(*) FROM events WHERE type = $1`, events.ContactCreated)
	}
	// produce creates contacts with 16 concurrent clients until n were
	// answered 201 or a request fails (the instance is gone).
	produce := func(key caller, n int) (created int64, failed int64) {
		var left = int64(n)
		var wg sync.WaitGroup
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for atomic.AddInt64(&left, -1) >= 0 {
					r, err := key.do("POST", "/api/v1/contacts", map[string]any{
						"first_name": "Burst", "last_name": fmt.Sprint(w),
						"emails": []map[string]any{{"address": unique("b") + "@example.com", "label": "work", "primary": true}},
					})
					if err != nil || r.status != http.StatusCreated {
						atomic.AddInt64(&failed, 1)
						return
					}
					atomic.AddInt64(&created, 1)
				}
			}()
		}
		wg.Wait()
		return created, failed
	}

	produced := make(chan [2]int64, 1)
	go func() {
		c, f := produce(tm.key, total)
		produced <- [2]int64{c, f}
	}()
	// Kill with a backlog: events queued in the outbox and not yet delivered.
	waitFor(t, 60*time.Second, "a backlog before the kill", func() bool { return distinct() >= 100 && outbox() >= 500 })
	first.kill()
	killedAt := distinct()
	p1 := <-produced
	inOutbox := outbox()
	if killedAt >= total {
		t.Fatalf("the burst was over (%d delivered) before the kill", killedAt)
	}

	began := time.Now()
	second := start(t, "second", dbURL, "http://127.0.0.1:9", "WEBHOOK_WORKERS=2")
	key2 := tm.key
	key2.base = second.base
	if rest := total - inOutbox; rest > 0 {
		if c, f := produce(key2, rest); f != 0 || int(c) != rest {
			t.Fatalf("after the restart: %d created, %d failed, want %d", c, f, rest)
		}
	}
	ids := func() []string {
		rows, err := pool.Query(context.Background(), `SELECT id::text FROM events WHERE type = $1`, events.ContactCreated)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}()
	if len(ids) < total {
		t.Fatalf("%d events in the outbox, want at least %d", len(ids), total)
	}
	// An event reached the receiver when its delivery (the webhook's
	// X-Service-Delivery) did; one not fanned out yet has none.
	missing := func() int {
		rows, err := pool.Query(context.Background(), `
			SELECT d.id::text FROM events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.type = $1`, events.ContactCreated)
		if err != nil {
			t.Fatal(err)
		}
		deliveries, err := pgx.CollectRows(rows, pgx.RowTo[*string])
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, d := range deliveries {
			if d == nil || received[*d] == 0 {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(90 * time.Second)
	for missing() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events never delivered", missing(), len(ids))
		}
		time.Sleep(50 * time.Millisecond)
	}
	catchUp := time.Since(began)
	mu.Lock()
	dupes := requests - len(received)
	mu.Unlock()
	report(t, "webhook burst: %d events (%d created before the kill, %d requests failed by the kill, %d in the outbox at the kill); "+
		"killed after %d delivered; 0 lost; %d duplicate deliveries; restart (%d more produced) caught up in %s",
		len(ids), p1[0], p1[1], inOutbox, killedAt, dupes, total-inOutbox, catchUp.Round(100*time.Millisecond))
}
