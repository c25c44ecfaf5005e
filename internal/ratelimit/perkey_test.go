package ratelimit_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
	"github.com/contactbook/contactbook/internal/ratelimit"
)

// Two instances on one database, hammered at once, admit at most 10 %
// over the limit between them.
func TestPerKeyHoldsAcrossInstances(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	// Mid-window, so the test does not straddle a minute.
	now := func() time.Time { return time.Date(2026, 11, 26, 12, 0, 30, 0, time.UTC) }
	const limit = 200
	a := ratelimit.NewPerKey(postgres.Wrap(pool), limit, now, nil)
	b := ratelimit.NewPerKey(postgres.Wrap(pool), limit, now, nil)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for i := range 8 {
		inst := a
		if i%2 == 1 {
			inst = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				d, err := inst.Allow(ctx, "k1")
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	got := admitted.Load()
	if got < limit || got > limit*11/10 {
		t.Fatalf("admitted %d of 800 requests with a limit of %d; want %d..%d", got, limit, limit, limit*11/10)
	}
	// A refused request says how long to wait, and a fresh key is apart.
	d, err := a.Allow(ctx, "k1")
	if err != nil || d.Allowed || d.Reset != 30*time.Second || d.Remaining != 0 {
		t.Fatalf("over the limit: %+v, %v", d, err)
	}
	if d, _ := a.Allow(ctx, "k2"); !d.Allowed || d.Remaining != limit-1 {
		t.Fatalf("another key: %+v", d)
	}
}

// Requests within one budget cost no database write; the one past it
// syncs them, and the background sync adds the rest.
func TestPerKeyWritesOncePerBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	now := func() time.Time { return time.Date(2026, 11, 26, 12, 0, 30, 0, time.UTC) }
	l := ratelimit.NewPerKey(postgres.Wrap(pool), 1200, now, nil) // budget 30
	for range 30 {
		if d, err := l.Allow(ctx, "k"); err != nil || !d.Allowed {
			t.Fatalf("%+v %v", d, err)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM rate_limit_counters`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("counter rows after one budget: %d (%v), want 0", n, err)
	}
	if _, err := l.Allow(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	var total int
	if err := pool.QueryRow(ctx, `SELECT n FROM rate_limit_counters WHERE key = 'api_key:k'`).Scan(&total); err != nil || total != 30 {
		t.Fatalf("shared count after the budget: %d (%v), want 30", total, err)
	}
	l.SyncAll(ctx)
	if err := pool.QueryRow(ctx, `SELECT n FROM rate_limit_counters WHERE key = 'api_key:k'`).Scan(&total); err != nil || total != 31 {
		t.Fatalf("shared count after a sync: %d (%v), want 31", total, err)
	}
}

// BenchmarkPerKeyAllow is the limit's cost on a request's path between two
// syncs: a map lookup and a count under a mutex.
func BenchmarkPerKeyAllow(b *testing.B) {
	l := ratelimit.NewPerKey(pgtest.Setup(b).DB, 1_000_000_000, nil, nil)
	ctx := context.Background()
	for b.Loop() {
		if _, err := l.Allow(ctx, "k"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPerKeySync is one admission and one sync of the key's count
// with PostgreSQL (one upsert), which a key pays once per budget (a
// fortieth of the limit) of requests, and every key in use once per
// SyncEvery in the background.
func BenchmarkPerKeySync(b *testing.B) {
	l := ratelimit.NewPerKey(pgtest.Setup(b).DB, 1_000_000_000, nil, nil)
	ctx := context.Background()
	for b.Loop() {
		if _, err := l.Allow(ctx, "k"); err != nil {
			b.Fatal(err)
		}
		l.SyncAll(ctx)
	}
}

// One background sync carries every key's count.
func TestPerKeySyncAllCarriesEveryKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	now := func() time.Time { return time.Date(2026, 11, 26, 12, 0, 30, 0, time.UTC) }
	a := ratelimit.NewPerKey(postgres.Wrap(pool), 1200, now, nil)
	b := ratelimit.NewPerKey(postgres.Wrap(pool), 1200, now, nil)
	for i, n := range []int{3, 5, 7} {
		for range n {
			if _, err := a.Allow(ctx, fmt.Sprint("k", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := b.Allow(ctx, "k0"); err != nil {
		t.Fatal(err)
	}
	a.SyncAll(ctx)
	b.SyncAll(ctx)
	rows, err := pool.Query(ctx, `SELECT key || '=' || n FROM rate_limit_counters ORDER BY key`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "api_key:k0=4 api_key:k1=5 api_key:k2=7" {
		t.Fatalf("counters: %v", got)
	}
	// The totals came back: b knows of a's three.
	if d, _ := b.Allow(ctx, "k0"); d.Remaining != 1200-5 {
		t.Fatalf("b after the sync: %+v", d)
	}
	// Nothing left to sync: no write.
	a.SyncAll(ctx)
	var n int
	if err := pool.QueryRow(ctx, `SELECT n FROM rate_limit_counters WHERE key = 'api_key:k1'`).Scan(&n); err != nil || n != 5 {
		t.Fatalf("k1 after an idle sync: %d %v", n, err)
	}
}
