package transactional

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
)

// RunnerConfig tunes the sending loop.
type RunnerConfig struct {
	// Senders is how many messages one claim takes and sends at once
	// (default 16).
	Senders int
	// Poll is how often the queue is looked at when nothing woke the
	// runner (default 500 ms): the delay of a message accepted by another
	// instance.
	Poll time.Duration
	// Lease is how long a send may go without an outcome before it is
	// settled as failed with its outcome unknown (default 10 minutes,
	// far beyond SendTimeout).
	Lease time.Duration
	// SendTimeout bounds one provider call (default 30 s).
	SendTimeout time.Duration
	// MaxAttempts is how many sends a temporary failure gets (default 8,
	// about an hour and a half with the backoff).
	MaxAttempts int
	// RetryBase is the wait after the first temporary failure, doubled
	// after each (default 30 s, at most 30 minutes).
	RetryBase time.Duration
}

func (c RunnerConfig) withDefaults() RunnerConfig {
	if c.Senders <= 0 {
		c.Senders = 16
	}
	if c.Poll <= 0 {
		c.Poll = 500 * time.Millisecond
	}
	if c.Lease <= 0 {
		c.Lease = 10 * time.Minute
	}
	if c.SendTimeout <= 0 {
		c.SendTimeout = 30 * time.Second
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 8
	}
	if c.RetryBase <= 0 {
		c.RetryBase = 30 * time.Second
	}
	return c
}

// DetailOutcomeUnknown settles a message whose sending instance stopped
// between handing it to the provider and recording the answer: it may or
// may not have gone out, and sending it again could send it twice.
const DetailOutcomeUnknown = "delivery outcome unknown: the sending instance stopped during the send"

// Runner sends queued messages. Every instance runs one; they share the
// queue through the claim (FOR UPDATE SKIP LOCKED), and a claimed message
// is stamped sending_at in the claim's own statement, before the provider
// is called, so no message is sent twice: not by two instances, not after
// a crash (a message stamped but never recorded is settled as failed with
// DetailOutcomeUnknown once its lease has passed).
type Runner struct {
	db         postgres.Pool
	provider   Provider
	outbox     *events.Outbox
	suppressor suppression.Suppressor
	cfg        RunnerConfig
	now        func() time.Time
	log        *slog.Logger
	wake       chan struct{}
}

func newRunner(d Deps) *Runner {
	return &Runner{db: d.DB, provider: d.Provider, outbox: d.Outbox, suppressor: suppression.New(d.Now).WithOutbox(d.Outbox), cfg: d.Runner.withDefaults(), now: d.Now, log: d.Log, wake: make(chan struct{}, 1)}
}

// Wake makes the runner look at the queue now.
func (rn *Runner) Wake() {
	select {
	case rn.wake <- struct{}{}:
	default:
	}
}

// Run sends until ctx ends. A stop claims nothing more; the sends in
// flight finish and are recorded (they are not cut short), so a clean
// stop leaves no message in doubt.
func (rn *Runner) Run(ctx context.Context) error {
	reap := time.NewTicker(time.Minute)
	defer reap.Stop()
	rn.reap(ctx)
	for ctx.Err() == nil {
		n, err := rn.Round(ctx)
		if err != nil && ctx.Err() == nil {
			rn.log.Error("transactional: claim failed", "err", err)
		}
		if n == rn.cfg.Senders && err == nil {
			// More may be due; the reaper still gets its turn.
			select {
			case <-reap.C:
				rn.reap(ctx)
			default:
			}
			continue
		}
		poll := time.NewTimer(rn.cfg.Poll)
		select {
		case <-ctx.Done():
		case <-rn.wake:
		case <-poll.C:
		case <-reap.C:
			rn.reap(ctx)
		}
		poll.Stop()
	}
	return nil
}

// claimed is a message taken for sending.
type claimed struct {
	id, bookID                          uuid.UUID
	email, name, subject, html, replyTo string
	attempts                            int
	suppressed                          *string
}

// outcome is what became of one claimed message.
type outcome struct {
	id        uuid.UUID
	status    Status
	detail    string
	messageID *string
	sentAt    *time.Time
	retryAt   *time.Time
	// badAddress: the provider refused the address itself, which is
	// suppressed.
	badAddress bool
}

// Round claims up to Senders due messages, sends them at once and records
// every outcome; it returns how many it claimed.
func (rn *Runner) Round(ctx context.Context) (int, error) {
	if ctx.Err() != nil {
		return 0, nil
	}
	now := rn.now()
	// The claim runs to its end whatever happens to ctx: a committed
	// claim that is not sent would wait for its lease.
	bg := context.WithoutCancel(ctx)
	rows, err := rn.db.Query(bg, `
		WITH due AS (
			SELECT id FROM transactional_messages
			WHERE status = 'queued' AND sending_at IS NULL AND next_attempt_at <= $1
			ORDER BY next_attempt_at LIMIT $2
			FOR UPDATE SKIP LOCKED
		)
		UPDATE transactional_messages m SET sending_at = $1, attempts = m.attempts + 1
		FROM due WHERE m.id = due.id
		RETURNING m.id, m.book_id, m.email, m.name, m.subject, COALESCE(m.body_html, ''), m.reply_to, m.attempts,
		          `+suppression.ReasonSQL("m.book_id", "lower(m.email)"),
		now, rn.cfg.Senders)
	if err != nil {
		return 0, err
	}
	batch, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (claimed, error) {
		var c claimed
		err := r.Scan(&c.id, &c.bookID, &c.email, &c.name, &c.subject, &c.html, &c.replyTo, &c.attempts, &c.suppressed)
		return c, err
	})
	if err != nil || len(batch) == 0 {
		return 0, err
	}
	outs := make([]outcome, len(batch))
	var wg sync.WaitGroup
	for i, c := range batch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = rn.send(bg, c)
		}()
	}
	wg.Wait()
	rn.record(bg, outs)
	return len(batch), nil
}

// send sends one claimed message, unless a suppression that stops it
// came after it was queued.
func (rn *Runner) send(ctx context.Context, c claimed) outcome {
	out := outcome{id: c.id}
	if c.suppressed != nil && *c.suppressed != string(suppression.ReasonUnsubscribe) {
		out.status, out.detail = StatusSuppressed, "address suppressed ("+*c.suppressed+")"
		return out
	}
	sendCtx, cancel := context.WithTimeout(ctx, rn.cfg.SendTimeout)
	id, err := rn.provider.Send(sendCtx, Email{
		BookID: c.bookID, MessageID: c.id, To: c.email, ToName: c.name, ReplyTo: c.replyTo, Subject: c.subject, HTML: c.html,
	})
	cancel()
	at := rn.now().UTC()
	var f *Failure
	switch {
	case err == nil:
		out.status, out.sentAt = StatusSent, &at
		if id != "" {
			out.messageID = &id
		}
	case errors.As(err, &f) && f.Permanent:
		out.status, out.detail, out.badAddress = StatusFailed, clip(f.Detail), f.BadAddress
	default:
		detail := err.Error()
		if errors.As(err, &f) {
			detail = f.Detail
		}
		if c.attempts >= rn.cfg.MaxAttempts {
			out.status, out.detail = StatusFailed, clip(detail)
			break
		}
		rn.log.Warn("transactional: send failed; will retry", "message_id", c.id, "attempt", c.attempts, "err", err)
		retry := at.Add(rn.backoff(c.attempts))
		out.status, out.detail, out.retryAt = StatusQueued, clip(detail), &retry
	}
	return out
}

// backoff is the wait after the attempts-th failed send.
func (rn *Runner) backoff(attempts int) time.Duration {
	d := rn.cfg.RetryBase
	for i := 1; i < attempts && d < 30*time.Minute; i++ {
		d *= 2
	}
	return min(d, 30*time.Minute)
}

// record writes the outcomes in one statement, with their email.sent and
// email.failed events and the suppression of addresses the provider
// refused, in one transaction; it retries a failing database a few times:
// the emails are out, and an unrecorded one would be settled as "outcome
// unknown" instead of its real result.
func (rn *Runner) record(ctx context.Context, outs []outcome) {
	n := len(outs)
	ids, statuses, details := make([]uuid.UUID, n), make([]string, n), make([]string, n)
	msgIDs, sentAts, retryAts := make([]*string, n), make([]*time.Time, n), make([]*time.Time, n)
	refused := map[uuid.UUID]bool{}
	for i, o := range outs {
		ids[i], statuses[i], details[i], msgIDs[i], sentAts[i], retryAts[i] = o.id, string(o.status), o.detail, o.messageID, o.sentAt, o.retryAt
		if o.badAddress {
			refused[o.id] = true
		}
	}
	var err error
	for attempt := range 5 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt*attempt) * 200 * time.Millisecond)
		}
		err = postgres.InTx(ctx, rn.db, func(tx *postgres.Tx) error {
			rows, _ := tx.Query(ctx, `
				UPDATE transactional_messages m SET
					status = r.status, detail = r.detail, provider_message_id = r.provider_message_id, sent_at = r.sent_at,
					next_attempt_at = r.retry_at,
					sending_at = CASE WHEN r.status = 'queued' THEN NULL ELSE m.sending_at END,
					body_html = CASE WHEN r.status = 'queued' THEN m.body_html END
				FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[])
				     AS r(id, status, detail, provider_message_id, sent_at, retry_at)
				WHERE m.id = r.id AND m.status = 'queued' AND m.sending_at IS NOT NULL
				RETURNING `+settledColumns,
				ids, statuses, details, msgIDs, sentAts, retryAts)
			settled, err := collectSettled(rows)
			if err != nil {
				return err
			}
			if err := rn.suppressRefused(ctx, tx, settled, refused); err != nil {
				return err
			}
			return rn.emit(ctx, tx, settled)
		})
		if err == nil {
			return
		}
	}
	rn.log.Error("transactional: outcomes not recorded", "messages", n, "err", err)
}

// suppressRefused suppresses the addresses the provider refused as
// unknown or invalid (SMTP 550, 551, 553): reason bounce, source
// provider, as a campaign's refused addresses are.
func (rn *Runner) suppressRefused(ctx context.Context, tx *postgres.Tx, settled []settledMessage, refused map[uuid.UUID]bool) error {
	if len(refused) == 0 {
		return nil
	}
	byBook := map[uuid.UUID][]string{}
	for _, m := range settled {
		if refused[m.id] {
			byBook[m.bookID] = append(byBook[m.bookID], m.email)
		}
	}
	for book, addresses := range byBook {
		if _, err := rn.suppressor.Suppress(ctx, tx, book, addresses, suppression.ReasonBounce, suppression.SourceProvider, nil); err != nil {
			return err
		}
	}
	return nil
}

// reap settles the sends whose instance died mid-send (past their lease)
// as failed: they may have gone out, so they are not sent again. Provider
// feedback that later names one of them (a delivery, an open) marks it
// sent after all (ApplyFeedback).
func (rn *Runner) reap(ctx context.Context) {
	var settled []settledMessage
	err := postgres.InTx(ctx, rn.db, func(tx *postgres.Tx) error {
		rows, _ := tx.Query(ctx, `
			UPDATE transactional_messages m SET status = 'failed', detail = $2, body_html = NULL, next_attempt_at = NULL
			WHERE m.status = 'queued' AND m.sending_at IS NOT NULL AND m.sending_at < $1
			RETURNING `+settledColumns,
			rn.now().Add(-rn.cfg.Lease), DetailOutcomeUnknown)
		var err error
		if settled, err = collectSettled(rows); err != nil {
			return err
		}
		return rn.emit(ctx, tx, settled)
	})
	switch {
	case err != nil && ctx.Err() == nil:
		rn.log.Error("transactional: settling stale sends failed", "err", err)
	case err == nil && len(settled) > 0:
		rn.log.Warn("transactional: sends of a stopped instance settled as outcome unknown", "messages", len(settled))
	}
}

func clip(s string) string {
	if len(s) <= maxDetailBytes {
		return s
	}
	s = s[:maxDetailBytes]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
