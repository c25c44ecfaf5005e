package ratelimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/httprate"

	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
	"github.com/contactbook/contactbook/internal/ratelimit"
)

// TestLimitHoldsAcrossInstances: two limiters with their own counters on
// one database, as two instances of the service have, share the limit.
func TestLimitHoldsAcrossInstances(t *testing.T) {
	pool := pgtest.Setup(t).Pool
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	key := func(*http.Request) (string, error) { return "203.0.113.7", nil }
	instances := []http.Handler{
		httprate.LimitBy(5, time.Minute, key, httprate.WithLimitCounter(ratelimit.New(postgres.Wrap(pool))))(ok),
		httprate.LimitBy(5, time.Minute, key, httprate.WithLimitCounter(ratelimit.New(postgres.Wrap(pool))))(ok),
	}
	var codes []int
	for i := range 7 {
		rec := httptest.NewRecorder()
		instances[i%2].ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
		codes = append(codes, rec.Code)
	}
	for i, code := range codes {
		want := http.StatusNoContent
		if i >= 5 {
			want = http.StatusTooManyRequests
		}
		if code != want {
			t.Fatalf("answers %v: request %d got %d, want %d (5 allowed per minute over both instances)", codes, i+1, code, want)
		}
	}
}

// TestCounterForgetsOldWindows: a count is kept per window, and counting
// drops windows no limit reads any more (older than two windows).
func TestCounterForgetsOldWindows(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	c := ratelimit.New(postgres.Wrap(pool))
	c.Config(5, time.Minute)
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, w := range []time.Time{start, start, start.Add(time.Minute)} {
		if err := c.Increment("k", w); err != nil {
			t.Fatal(err)
		}
	}
	cur, prev, err := c.Get("k", start.Add(time.Minute), start)
	if err != nil || cur != 1 || prev != 2 {
		t.Fatalf("Get = %d, %d, %v; want 1 in the current window, 2 in the previous", cur, prev, err)
	}
	if err := c.IncrementBy("other", start.Add(3*time.Minute), 2); err != nil {
		t.Fatal(err)
	}
	var windows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM rate_limit_counters WHERE key = 'k'`).Scan(&windows); err != nil {
		t.Fatal(err)
	}
	if windows != 1 {
		t.Fatalf("%d windows of k left, want 1 (windows more than two back are dropped)", windows)
	}
}
