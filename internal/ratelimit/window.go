package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/contactbook/contactbook/internal/postgres"
)

// spanPrefix starts the keys of Take's counters.
const spanPrefix = "span:"

// Take counts one action of key against limit per window, in
// rate_limit_counters, and reports how long to wait when the action is
// over the limit (0: go ahead; a refused action is not counted). The
// count is a sliding window over the current and the previous fixed
// window, as httprate's: the previous window's count weighs by how much
// of it the sliding window still covers, so a burst at the end of one
// window and the start of the next is limited too. One statement counts
// and reads, so several instances share the limit.
func Take(ctx context.Context, db postgres.DB, key string, limit int, window time.Duration, now time.Time) (time.Duration, error) {
	cur := now.Truncate(window)
	prev := cur.Add(-window)
	// The key names its window, so each window's stale counters are
	// dropped by its own takers (the per-minute counters of Counter go
	// sooner).
	span := fmt.Sprintf("%s%d:", spanPrefix, int64(window/time.Second))
	key = span + key
	var n, p int
	err := db.QueryRow(ctx, `
		WITH expired AS (DELETE FROM rate_limit_counters WHERE key LIKE $4 || '%' AND window_start < $3),
		counted AS (
			INSERT INTO rate_limit_counters AS r (key, window_start, n) VALUES ($1, $2, 1)
			ON CONFLICT (key, window_start) DO UPDATE SET n = r.n + 1
			RETURNING n)
		SELECT counted.n, coalesce((SELECT n FROM rate_limit_counters WHERE key = $1 AND window_start = $3), 0)
		FROM counted`, key, cur, prev, span).Scan(&n, &p)
	if err != nil {
		return 0, err
	}
	covered := 1 - float64(now.Sub(cur))/float64(window)
	if float64(n)+float64(p)*covered <= float64(limit) {
		return 0, nil
	}
	if _, err := db.Exec(ctx, `UPDATE rate_limit_counters SET n = n - 1 WHERE key = $1 AND window_start = $2 AND n > 0`, key, cur); err != nil {
		return 0, err
	}
	// The earliest moment the estimate drops under the limit: the end of
	// the current window at the latest.
	wait := cur.Add(window).Sub(now)
	if p > 0 && n <= limit {
		// n-1 + p*(1 - t/window) <= limit - 1 ... solved for t.
		need := float64(n) + float64(p) - float64(limit)
		if t := time.Duration(need / float64(p) * float64(window)); cur.Add(t).After(now) {
			wait = cur.Add(t).Sub(now)
		}
	}
	return max(wait, time.Second), nil
}
