package campaigns

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/robfig/cron/v3"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/jobs"
)

// RunArgs is the job of a run that a request asked for: one pass over the
// campaign. At most one is queued per campaign, whatever the instance; a
// run asked for while one is running is queued behind it (Service.Run).
type RunArgs struct {
	CampaignID uuid.UUID `json:"campaign_id"`
	// Behind is the run job that was running when this one was asked for
	// (0: none was). It makes the job unique apart from that one, whose
	// pass may have read the campaign before the change that asked for
	// this run.
	Behind int64 `json:"behind,omitempty"`
}

// Kind names the job in river_job.
func (RunArgs) Kind() string { return "campaign_run" }

// InsertOpts makes the run unique per campaign while queued or running.
func (RunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 10, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: jobs.QueuedStates}}
}

// ScheduleArgs is the job of one scheduler tick: every runnable campaign
// of every team in fair turns (ProcessDue). A tick due while the previous
// one is still queued or running is skipped.
type ScheduleArgs struct{}

// Kind names the job in river_job.
func (ScheduleArgs) Kind() string { return "campaign_schedule" }

// InsertOpts makes a tick unique while queued or running; a tick that
// failed is not retried, the next one does its work.
func (ScheduleArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByState: jobs.QueuedStates}}
}

// Jobs registers the runner's workers (requested runs and scheduler
// ticks) and returns the scheduler's periodic job: a tick at every time of
// Deps.Schedule, a standard cron expression (UTC) or a descriptor such as
// "@every 1m" (CAMPAIGN_SCHEDULE). Only the elected leader among the
// instances enqueues the ticks.
func (rn *Runner) Jobs(w *river.Workers) ([]*river.PeriodicJob, error) {
	if err := river.AddWorkerSafely(w, &runWorker{rn: rn}); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(w, &scheduleWorker{rn: rn}); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(w, &entryWorker{rn: rn}); err != nil {
		return nil, err
	}
	if rn.schedule == "" {
		return nil, nil
	}
	sched, err := cronSchedule(rn.schedule)
	if err != nil {
		return nil, err
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(sched,
		func() (river.JobArgs, *river.InsertOpts) { return ScheduleArgs{}, nil },
		&river.PeriodicJobOpts{ID: "campaign_schedule"})}, nil
}

// cronSchedule reads spec as the scheduler always has: robfig/cron's
// standard parser, in UTC.
func cronSchedule(spec string) (river.PeriodicSchedule, error) {
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("campaign schedule %q: %w", spec, err)
	}
	return utcSchedule{sched}, nil
}

// utcSchedule reads a cron schedule in UTC whatever the process's zone.
type utcSchedule struct{ cron.Schedule }

func (u utcSchedule) Next(t time.Time) time.Time { return u.Schedule.Next(t.UTC()) }

type runWorker struct {
	river.WorkerDefaults[RunArgs]
	rn *Runner
}

// Work works the run in turns (each at most TurnParticipants
// participants, no new claim after TurnTime). After a turn cut short, the
// run goes straight on with the next one while no other job waits for a
// worker and the attempt has time left for a whole turn; otherwise it is
// snoozed: the same job, still unique, is available again at once (to
// any instance) without spending an attempt, so the waiting jobs get
// their turn in between and no attempt runs for long. Going on rather than
// always snoozing matters because a snoozed job is picked up again only
// at the queue's next fetch, which left the machine idle between turns.
// Keeping each attempt inside its timeout keeps River's rescue of the
// jobs of a dead instance (jobs.Config.RescueAfter) from ever catching a
// live one. A campaign that may not run (no longer active, no paid
// add-on, deleted) cancels the job; other errors retry it with backoff.
func (w *runWorker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	for {
		unfinished, err := w.rn.runTurn(ctx, job.Args.CampaignID)
		switch {
		case apperr.Is(err, apperr.InvalidStatus) || apperr.Is(err, apperr.AddonRequired) || apperr.Is(err, apperr.NotFound):
			return river.JobCancel(err)
		case ctx.Err() != nil:
			return river.JobSnooze(0)
		case err != nil:
			return err
		case !unfinished:
			return nil
		}
		if !w.mayGoOn(ctx) {
			return river.JobSnooze(0)
		}
	}
}

// mayGoOn tells whether the run may take another turn in this attempt:
// a whole turn (and its chunks in flight) fits before the attempt's
// deadline, and no job of the queue is waiting for a worker.
func (w *runWorker) mayGoOn(ctx context.Context) bool {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < 2*w.rn.opts.TurnTime {
		return false
	}
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return false
	}
	waiting, err := client.JobList(ctx, river.NewJobListParams().
		States(rivertype.JobStateAvailable).Queues(river.QueueDefault).First(1))
	if err != nil {
		w.rn.log.Warn("campaign run: could not look for waiting jobs; yielding the turn", "err", err)
		return false
	}
	return len(waiting.Jobs) == 0
}

type scheduleWorker struct {
	river.WorkerDefaults[ScheduleArgs]
	rn *Runner
}

// Timeout lets a tick go on while it has work (every runnable campaign,
// turn by turn) but not past the next default tick; a tick whose leader
// died stays "running" this long before River discards it (it is not
// retried) and the next one is enqueued.
func (w *scheduleWorker) Timeout(*river.Job[ScheduleArgs]) time.Duration { return 10 * time.Minute }

func (w *scheduleWorker) Work(ctx context.Context, _ *river.Job[ScheduleArgs]) error {
	return w.rn.ProcessDue(ctx)
}
