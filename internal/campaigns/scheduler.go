package campaigns

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"
)

// Scheduler is the background worker that processes every runnable
// campaign on a cron schedule (CAMPAIGN_SCHEDULE, UTC). A tick that is
// still running when the next one is due makes the next one skip; other
// instances of the binary are kept apart by the database claims.
type Scheduler struct {
	runner *Runner
	spec   string
	log    *slog.Logger
}

// NewScheduler returns the worker for spec, a standard cron expression or
// a descriptor such as "@every 1m".
func NewScheduler(runner *Runner, spec string, log *slog.Logger) *Scheduler {
	return &Scheduler{runner: runner, spec: spec, log: log}
}

// Run ticks until ctx ends, then lets the running tick finish its chunks
// in flight.
func (sc *Scheduler) Run(ctx context.Context) error {
	c := cron.New(
		cron.WithParser(cron.NewParser(cron.Minute|cron.Hour|cron.Dom|cron.Month|cron.Dow|cron.Descriptor)),
		cron.WithChain(cron.SkipIfStillRunning(cron.DiscardLogger)),
		cron.WithLocation(time.UTC),
	)
	if _, err := c.AddFunc(sc.spec, func() {
		if err := sc.runner.ProcessDue(ctx); err != nil && ctx.Err() == nil {
			sc.log.Error("campaign scheduler tick failed", "err", err)
		}
	}); err != nil {
		return fmt.Errorf("campaign schedule %q: %w", sc.spec, err)
	}
	c.Start()
	sc.log.Info("campaign scheduler started", "schedule", sc.spec)
	<-ctx.Done()
	<-c.Stop().Done()
	return nil
}
