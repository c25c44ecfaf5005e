// Package ratelimit keeps the counters of request-rate limits in
// PostgreSQL, so that a limit such as "5 checkouts per minute per IP" holds
// across every instance of the service instead of once per process. Its
// Counter is a LimitCounter for go-chi/httprate, which keeps the limiting
// logic (a sliding window over two fixed windows) and the HTTP side.
package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/contactbook/contactbook/internal/postgres"
)

// Counter counts requests per key and window in rate_limit_counters.
//
// httprate's interface carries no context, so each call gets its own
// deadline. httprate reads the count, then adds to it; two instances
// answering the same client in the same instant can each let one request
// through past the limit, which is the price of not locking on every
// request.
type Counter struct {
	db      postgres.DB
	window  time.Duration
	timeout time.Duration
}

// New returns a counter over db.
func New(db postgres.DB) *Counter {
	return &Counter{db: db, window: time.Minute, timeout: 2 * time.Second}
}

// Config is called by httprate with the limiter's window.
func (c *Counter) Config(_ int, window time.Duration) { c.window = window }

// Increment counts one request of key in window.
func (c *Counter) Increment(key string, window time.Time) error { return c.IncrementBy(key, window, 1) }

// IncrementBy counts n requests of key in window, and drops counters more
// than two windows old (no limit reads them any more).
func (c *Counter) IncrementBy(key string, window time.Time, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	_, err := c.db.Exec(ctx, `
		WITH expired AS (DELETE FROM rate_limit_counters WHERE window_start < $4 AND key NOT LIKE '`+spanPrefix+`%')
		INSERT INTO rate_limit_counters AS r (key, window_start, n) VALUES ($1, $2, $3)
		ON CONFLICT (key, window_start) DO UPDATE SET n = r.n + EXCLUDED.n`,
		key, window, n, window.Add(-2*c.window))
	if err != nil {
		return fmt.Errorf("count request: %w", err)
	}
	return nil
}

// Get returns the counts of key in the current and the previous window.
func (c *Counter) Get(key string, current, previous time.Time) (int, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var cur, prev int
	err := c.db.QueryRow(ctx, `
		SELECT COALESCE(sum(n) FILTER (WHERE window_start = $2), 0), COALESCE(sum(n) FILTER (WHERE window_start = $3), 0)
		FROM rate_limit_counters WHERE key = $1 AND window_start IN ($2, $3)`, key, current, previous).Scan(&cur, &prev)
	if err != nil {
		return 0, 0, fmt.Errorf("read request count: %w", err)
	}
	return cur, prev, nil
}
