package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
)

// PerKey limits requests per key (an API key's id) and minute across every
// instance without a database write per request. Each instance counts its
// own admissions in memory and adds them to the shared counter
// (rate_limit_counters) in batches: in the background every SyncEvery (one
// statement for all keys), and at once, on the request's path, when its
// unsynced admissions of a key reach the key's budget (a fortieth of the
// limit; below the limit that takes more than 150 requests a second). What the shared counter
// has not yet heard of is thus at most one budget per instance, so with up
// to four instances the limit holds within 10 %.
type PerKey struct {
	db    postgres.DB
	limit int
	now   func() time.Time
	log   *slog.Logger

	mu   sync.Mutex
	keys map[string]*keyCount
}

// keyCount is one key's count in the current window on this instance.
type keyCount struct {
	// sync serialises the key's batch writes, so that requests arriving
	// while one is under way wait for its answer instead of adding more.
	sync   sync.Mutex
	window time.Time
	shared int // the shared counter's value at the last sync
	local  int // admitted here since the last sync
}

// SyncEvery is how often the background sync adds every key's local
// admissions to the shared counters.
const SyncEvery = 200 * time.Millisecond

// window is the limit's fixed window.
const window = time.Minute

// keyPrefix keeps these counters apart from the others in the table.
const keyPrefix = "api_key:"

// NewPerKey limits each key to limit requests a minute (0: no limit).
func NewPerKey(db postgres.DB, limit int, now func() time.Time, log *slog.Logger) *PerKey {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	return &PerKey{db: db, limit: limit, now: now, log: log, keys: map[string]*keyCount{}}
}

// Decision is the answer to one request.
type Decision struct {
	Allowed   bool
	Limit     int
	Remaining int
	// Reset is how long until the window ends and the count starts over.
	Reset time.Duration
}

// Enabled reports whether there is a limit.
func (p *PerKey) Enabled() bool { return p != nil && p.limit > 0 }

// budget is how many admissions of a key an instance may hold unsynced.
func (p *PerKey) budget() int { return max(1, p.limit/40) }

// Allow counts one request of key and says whether it is within the limit.
func (p *PerKey) Allow(ctx context.Context, key string) (Decision, error) {
	now := p.now()
	start := now.Truncate(window)
	d := Decision{Limit: p.limit, Reset: start.Add(window).Sub(now)}
	c := p.count(key)
	for {
		p.mu.Lock()
		if !c.window.Equal(start) {
			c.window, c.shared, c.local = start, 0, 0
		}
		used := c.shared + c.local
		if used >= p.limit {
			p.mu.Unlock()
			return d, nil
		}
		if c.local < p.budget() {
			c.local++
			d.Allowed, d.Remaining = true, p.limit-used-1
			p.mu.Unlock()
			return d, nil
		}
		p.mu.Unlock()
		// This instance holds a whole budget unsynced: add it to the
		// shared counter first (one write per budget, not per request).
		if err := p.syncKey(ctx, key, c); err != nil {
			return Decision{}, err
		}
	}
}

func (p *PerKey) count(key string) *keyCount {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.keys[key]
	if !ok {
		c = &keyCount{}
		p.keys[key] = c
	}
	return c
}

// syncKey adds c's local admissions to the shared counter and takes the
// total, which includes the other instances' synced admissions.
func (p *PerKey) syncKey(ctx context.Context, key string, c *keyCount) error {
	c.sync.Lock()
	defer c.sync.Unlock()
	p.mu.Lock()
	start, n := c.window, c.local
	p.mu.Unlock()
	if start.IsZero() {
		return nil
	}
	var total int
	err := p.db.QueryRow(ctx, `
		INSERT INTO rate_limit_counters AS r (key, window_start, n) VALUES ($1, $2, $3)
		ON CONFLICT (key, window_start) DO UPDATE SET n = r.n + EXCLUDED.n
		RETURNING n`, keyPrefix+key, start, n).Scan(&total)
	if err != nil {
		return fmt.Errorf("sync request count: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.window.Equal(start) {
		c.local -= n
		c.shared = total
	}
	return nil
}

// Run syncs every key with unsynced admissions every SyncEvery, and
// forgets keys of past windows, until ctx ends.
func (p *PerKey) Run(ctx context.Context) error {
	if !p.Enabled() {
		<-ctx.Done()
		return nil
	}
	tick := time.NewTicker(SyncEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		p.SyncAll(ctx)
	}
}

// SyncAll adds every key's unsynced admissions of the current window to
// the shared counters in one statement, whatever the number of keys, and
// takes the totals back; keys of past windows are forgotten.
func (p *PerKey) SyncAll(ctx context.Context) {
	start := p.now().Truncate(window)
	p.mu.Lock()
	var live []string
	for k, c := range p.keys {
		switch {
		case c.window.Equal(start) && c.local > 0:
			live = append(live, k)
		case c.window.Before(start.Add(-window)):
			delete(p.keys, k)
		}
	}
	p.mu.Unlock()
	if len(live) == 0 {
		return
	}
	// Sorted: each key's sync lock is taken in one order (a request's own
	// sync holds one at a time), and instances upsert rows in one order.
	slices.Sort(live)
	counts := make([]*keyCount, len(live))
	for i, k := range live {
		counts[i] = p.count(k)
		counts[i].sync.Lock()
		defer counts[i].sync.Unlock()
	}
	names := make([]string, 0, len(live))
	ns := make([]int32, 0, len(live))
	p.mu.Lock()
	taken := make(map[string]int, len(live))
	for i, k := range live {
		if c := counts[i]; c.window.Equal(start) && c.local > 0 {
			names, ns = append(names, keyPrefix+k), append(ns, int32(c.local))
			taken[k] = c.local
		}
	}
	p.mu.Unlock()
	if len(names) == 0 {
		return
	}
	rows, err := p.db.Query(ctx, `
		INSERT INTO rate_limit_counters AS r (key, window_start, n)
		SELECT k, $2, n FROM unnest($1::text[], $3::int[]) AS u (k, n) ORDER BY k
		ON CONFLICT (key, window_start) DO UPDATE SET n = r.n + EXCLUDED.n
		RETURNING key, n`, names, start, ns)
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn("rate limit: sync request counts", "err", err)
		}
		return
	}
	totals := map[string]int{}
	var key string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&key, &n}, func() error {
		totals[strings.TrimPrefix(key, keyPrefix)] = n
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn("rate limit: sync request counts", "err", err)
		}
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, k := range live {
		if c := counts[i]; c.window.Equal(start) && taken[k] > 0 {
			c.local -= taken[k]
			c.shared = totals[k]
		}
	}
}
