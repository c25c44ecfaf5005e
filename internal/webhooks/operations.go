package webhooks

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// An admin's sends: a test event, one delivery again, and the recovery of
// every delivery that failed since a time. Each is an ordinary delivery of
// the queue, signed and logged like the others, marked manual: it is made
// once, without automatic retries, and its attempt is logged manual.

// MaxRecoveryAge is how far back a recovery may reach.
const MaxRecoveryAge = 30 * 24 * time.Hour

// recoveryBatch is how many deliveries one statement of a recovery queues.
const recoveryBatch = 5000

// SendTest queues a webhook.test event (data: {webhook_id}) to the webhook,
// due now, and returns its delivery id. It goes out whether or not the
// webhook is switched on: it is how a receiver is checked before. typ,
// when not "", is an event type whose sample (the catalogue's: its
// documented data with made-up ids) goes instead, so a receiver can be
// tried on every shape it will get.
func (s *Service) SendTest(ctx context.Context, sc access.Scope, id uuid.UUID, typ string) (uuid.UUID, error) {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return uuid.Nil, err
	}
	ev := events.Event{Type: events.WebhookTest, TeamID: sc.Team, Data: map[string]uuid.UUID{"webhook_id": id}}
	if typ != "" {
		info, ok := events.Info(typ)
		if !ok {
			return uuid.Nil, apperr.Invalidf("`event` must be an event type: %s.", strings.Join(events.Types, ", "))
		}
		ev = events.Event{Type: typ, TeamID: sc.Team, Data: info.Sample()}
	}
	var delivery uuid.UUID
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if _, err := s.st.webhook(ctx, tx, sc.Team, id); err != nil {
			return err
		}
		now := s.now()
		evID, err := events.Write(ctx, tx, now, ev)
		if err != nil {
			return err
		}
		if delivery, err = s.st.insertManual(ctx, tx, id, evID, now); err != nil {
			return err
		}
		tx.AfterCommit(s.wake)
		return nil
	})
	return delivery, err
}

// Retry sends one delivery of the webhook again now, byte for byte and
// with the same delivery id, whatever became of it. An attempt of it that
// is under way is a CONFLICT.
func (s *Service) Retry(ctx context.Context, sc access.Scope, id, deliveryID uuid.UUID) error {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return err
	}
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if _, err := s.st.webhook(ctx, tx, sc.Team, id); err != nil {
			return err
		}
		if err := s.st.queueManual(ctx, tx, id, deliveryID, s.now()); err != nil {
			return err
		}
		tx.AfterCommit(s.wake)
		return nil
	})
}

// Recover sends once more every event of the webhook since since whose
// latest attempt failed, oldest first, and returns how many. The work is
// a job (RecoveryArgs) queued in the same transaction: it survives a
// restart, one instance works it, and a rerun after a crash skips what
// it had queued already. A switched-off webhook is recovered too: its
// deliveries are then kept like its other pending ones, and go out when
// it is switched on.
func (s *Service) Recover(ctx context.Context, sc access.Scope, id uuid.UUID, since time.Time) (int, error) {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return 0, err
	}
	now := s.now()
	if since.IsZero() {
		return 0, apperr.Invalidf("`since` is required: the time (RFC 3339) from which failed events are sent again.")
	}
	if since.Before(now.Add(-MaxRecoveryAge)) || since.After(now) {
		return 0, apperr.Invalidf("`since` must be within the last 30 days.")
	}
	var queued int
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if _, err := s.st.webhook(ctx, tx, sc.Team, id); err != nil {
			return err
		}
		var err error
		if queued, err = s.st.countRecoverable(ctx, tx, id, since, now, now); err != nil || queued == 0 {
			return err
		}
		if s.recoveries == nil {
			return apperr.New(apperr.Unavailable, "Recoveries cannot be queued on this instance.")
		}
		args := RecoveryArgs{RecoveryID: uuid.New(), WebhookID: id, Since: since, Until: now}
		if _, err := s.recoveries.InsertTx(ctx, tx, args, nil); err != nil {
			return apperr.Wrap(err, apperr.Internal, "queue recovery")
		}
		return nil
	})
	return queued, err
}

// RecoveryArgs is the job of one recovery: the webhook's deliveries whose
// events happened in [Since, Until] and whose latest attempt failed.
type RecoveryArgs struct {
	RecoveryID uuid.UUID `json:"recovery_id"`
	WebhookID  uuid.UUID `json:"webhook_id"`
	Since      time.Time `json:"since"`
	Until      time.Time `json:"until"`
}

// Kind names the job in river_job.
func (RecoveryArgs) Kind() string { return "webhook_recovery" }

// InsertOpts retries a recovery that failed or whose instance died; each
// run carries on where the last one stopped.
func (RecoveryArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 10} }

// Jobs registers the recovery worker with the job queue; recoveries have
// no periodic job.
func (s *Service) Jobs(w *river.Workers) ([]*river.PeriodicJob, error) {
	return nil, river.AddWorkerSafely(w, &recoveryWorker{s: s})
}

type recoveryWorker struct {
	river.WorkerDefaults[RecoveryArgs]
	s *Service
}

// Work queues the recovery in batches, each its own transaction: what a
// batch queued stays queued if the instance dies, and is marked with the
// recovery's id so the rerun does not queue it again (once more at most).
// The engine is woken after each batch, so sending starts with the first.
// A recovery longer than the queue's job timeout (a month of a busy
// webhook) ends with its context and carries on in the next attempt.
func (w *recoveryWorker) Work(ctx context.Context, job *river.Job[RecoveryArgs]) error {
	base, total := w.s.now(), 0
	for {
		n, err := w.s.recoverBatch(ctx, job.Args, base, total)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		total += n
		w.s.wake()
	}
	w.s.log.Info("webhooks: recovery queued", "webhook_id", job.Args.WebhookID, "recovery_id", job.Args.RecoveryID,
		"deliveries", total, "since", job.Args.Since)
	return nil
}

// recoverBatch queues one batch of the recovery, held when the webhook is
// switched off. The webhook's row stays locked until the batch commits:
// switching it on releases the held deliveries, and switching it off
// holds or cancels the pending ones, so either comes wholly before the
// batch or sees all it queued. A webhook deleted meanwhile ends it.
func (s *Service) recoverBatch(ctx context.Context, args RecoveryArgs, base time.Time, offset int) (int, error) {
	var n int
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		active, found, err := s.st.webhookActiveShared(ctx, tx, args.WebhookID)
		if err != nil || !found {
			return err
		}
		status := statusHeld
		if active {
			status = statusPending
		}
		n, err = s.st.recoverBatch(ctx, tx, args, status, base, s.now(), offset, recoveryBatch)
		return err
	})
	return n, err
}
