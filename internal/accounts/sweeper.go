package accounts

import (
	"context"
	"log/slog"
	"time"

	"github.com/contactbook/contactbook/internal/postgres"
)

// Sweeper deletes expired sessions, invitations, reset tokens and throttle
// windows every sweepEvery. Expired rows already stop working; sweeping
// only keeps the tables small.
type Sweeper struct {
	db  postgres.DB
	now func() time.Time
	log *slog.Logger
}

const sweepEvery = 10 * time.Minute

// NewSweeper returns a sweeper over db.
func NewSweeper(db postgres.DB, now func() time.Time, log *slog.Logger) *Sweeper {
	if now == nil {
		now = time.Now
	}
	return &Sweeper{db: db, now: now, log: log}
}

// Run sweeps until ctx ends.
func (w *Sweeper) Run(ctx context.Context) error {
	tick := time.NewTicker(sweepEvery)
	defer tick.Stop()
	for {
		if err := (store{}).sweep(ctx, w.db, w.now()); err != nil && ctx.Err() == nil {
			w.log.Warn("sweep expired sessions and links", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
