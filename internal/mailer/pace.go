package mailer

import (
	"context"
	"sync"
	"time"

	"github.com/contactbook/contactbook/internal/postgres"
)

// Pace holds each book's sending pace: its max_send_rate across every
// instance (a schedule of send times in mailer_send_slots, advanced by
// one statement per handful of emails, on the database's clock so the
// instances' clocks do not matter), and after temporary failures a
// slowdown on this instance that doubles with each failure and wears off
// a minute after the last one.
type Pace struct {
	db  postgres.DB // nil: the rate is held on this instance only
	now func() time.Time

	mu    sync.Mutex
	slow  map[string]*slowdown
	local map[string]time.Time // next free slot when db is nil
}

// slowdown is one book's pace on this instance after temporary failures.
type slowdown struct {
	gap   time.Duration // wait between two sends
	until time.Time     // when it wears off
	next  time.Time     // the earliest next send
}

// Slowdown bounds: the first temporary failure spaces sends by
// slowFirst, each further one doubles it up to slowMax; slowFor after
// the last failure the book sends at full pace again.
const (
	slowFirst = 250 * time.Millisecond
	slowMax   = 8 * time.Second
	slowFor   = time.Minute
)

// NewPace holds the rates in db (nil: per instance).
func NewPace(db postgres.DB, now func() time.Time) *Pace {
	if now == nil {
		now = time.Now
	}
	return &Pace{db: db, now: now, slow: map[string]*slowdown{}, local: map[string]time.Time{}}
}

// maxTake is how many send times one schedule statement takes for
// rate: a tenth of a second's worth, so what one instance holds ahead
// keeps every instance within 10 % of the rate over any second.
func maxTake(rate int) int { return max(1, rate/10) }

// take reserves n send times (n <= maxTake) and returns when the first
// is due, relative to now, and the gap between them.
func (p *Pace) take(ctx context.Context, key string, rate, n int) (time.Duration, time.Duration, error) {
	gap := time.Second / time.Duration(rate)
	span := gap * time.Duration(n)
	if p.db == nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		now := p.now()
		start := later(p.local[key], now)
		p.local[key] = start.Add(span)
		return start.Sub(now), gap, nil
	}
	var wait time.Duration
	err := p.db.QueryRow(ctx, `
		INSERT INTO mailer_send_slots AS s (pace_key, next_slot_at) VALUES ($1, clock_timestamp() + $2::interval)
		ON CONFLICT (pace_key) DO UPDATE SET next_slot_at = greatest(s.next_slot_at, clock_timestamp()) + $2::interval
		RETURNING greatest(s.next_slot_at - $2::interval - clock_timestamp(), interval '0')`,
		key, span).Scan(&wait)
	return wait, gap, err
}

// schedule hands out send times of one account to the senders of one
// batch: each asks for the next with wait.
type schedule struct {
	p    *Pace
	key  string
	rate int

	mu    sync.Mutex
	slots []time.Time
}

func (p *Pace) schedule(a *Account) *schedule {
	if p == nil {
		return &schedule{}
	}
	return &schedule{p: p, key: "book:" + a.Key, rate: a.MaxRate}
}

// wait returns when the account may send one more email; left says how
// many the caller still has to send, so a schedule statement takes no
// more times than the batch uses.
func (s *schedule) wait(ctx context.Context, left int) error {
	if s.p == nil {
		return ctx.Err()
	}
	if err := s.p.waitSlow(ctx, s.key); err != nil {
		return err
	}
	if s.rate <= 0 {
		return ctx.Err()
	}
	s.mu.Lock()
	if len(s.slots) == 0 {
		n := min(maxTake(s.rate), max(1, left))
		wait, gap, err := s.p.take(ctx, s.key, s.rate, n)
		if err != nil {
			s.mu.Unlock()
			return &Error{Message: "send rate schedule unavailable: " + err.Error(), cause: err}
		}
		start := s.p.now().Add(wait)
		for i := range n {
			s.slots = append(s.slots, start.Add(gap*time.Duration(i)))
		}
	}
	at := s.slots[0]
	s.slots = s.slots[1:]
	s.mu.Unlock()
	return sleepUntil(ctx, s.p.now, at)
}

// waitSlow waits out this instance's slowdown of the key, if any.
func (p *Pace) waitSlow(ctx context.Context, key string) error {
	p.mu.Lock()
	sd := p.slow[key]
	now := p.now()
	if sd == nil || now.After(sd.until) {
		delete(p.slow, key)
		p.mu.Unlock()
		return nil
	}
	at := later(sd.next, now)
	sd.next = at.Add(sd.gap)
	p.mu.Unlock()
	return sleepUntil(ctx, p.now, at)
}

// slowDown records a temporary failure of the account.
func (p *Pace) slowDown(a *Account) {
	if p == nil {
		return
	}
	key := "book:" + a.Key
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	sd := p.slow[key]
	if sd == nil || now.After(sd.until) {
		sd = &slowdown{gap: slowFirst / 2}
		p.slow[key] = sd
	}
	sd.gap = min(slowMax, sd.gap*2)
	sd.until = now.Add(slowFor)
}

// Slowed reports the gap this instance now keeps between two sends of
// the book key (0: full pace).
func (p *Pace) Slowed(bookKey string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	sd := p.slow["book:"+bookKey]
	if sd == nil || p.now().After(sd.until) {
		return 0
	}
	return sd.gap
}

func sleepUntil(ctx context.Context, now func() time.Time, at time.Time) error {
	d := at.Sub(now())
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
