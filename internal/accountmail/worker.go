package accountmail

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Sender is the provider account emails go out with.
type Sender struct {
	Client    mailer.Sender
	APIKey    string // SYSTEM_MAILER_API_KEY; "" logs links instead of sending
	FromEmail string
	FromName  string
}

// WorkerConfig wires a Worker.
type WorkerConfig struct {
	Sender Sender
	// Poll is how often an idle worker looks for mail it was not woken
	// for: retries that fell due, mail queued by an instance that died.
	Poll time.Duration
	Now  func() time.Time
	Log  *slog.Logger
}

// Worker sends queued account emails.
type Worker struct {
	db   postgres.Pool
	cfg  WorkerConfig
	wake chan struct{}
}

// NewWorker returns a worker over db.
func NewWorker(db postgres.Pool, cfg WorkerConfig) *Worker {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 5 * time.Second
	}
	return &Worker{db: db, cfg: cfg, wake: make(chan struct{}, 1)}
}

// Wake makes the worker look for mail now; it never blocks.
func (w *Worker) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Delivery limits: a claimed message is leased for claimLease (a worker
// that dies mid-send leaves it to another after that), a transient failure
// is retried after retryBase doubling up to retryMax, and maxAttempts
// attempts (about an hour and a half in all) give up.
const (
	claimBatch  = 20
	claimLease  = 2 * time.Minute
	retryBase   = 30 * time.Second
	retryMax    = 30 * time.Minute
	maxAttempts = 8
	keepFailed  = 30 * 24 * time.Hour
)

// backoff is the wait after the attempts-th failed attempt.
func backoff(attempts int) time.Duration {
	d := retryBase
	for i := 1; i < attempts && d < retryMax; i++ {
		d *= 2
	}
	return min(d, retryMax)
}

// Run sends due mail until ctx ends.
func (w *Worker) Run(ctx context.Context) error {
	tick := time.NewTicker(w.cfg.Poll)
	defer tick.Stop()
	lastPrune := time.Time{}
	for {
		if err := w.drain(ctx); err != nil && ctx.Err() == nil {
			w.cfg.Log.Error("send account emails", "err", err)
		}
		if time.Since(lastPrune) > time.Hour {
			if err := pruneFailed(ctx, w.db, w.cfg.Now().Add(-keepFailed)); err != nil && ctx.Err() == nil {
				w.cfg.Log.Warn("prune failed account emails", "err", err)
			}
			lastPrune = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.wake:
		case <-tick.C:
		}
	}
}

// drain sends due mail until none is left.
func (w *Worker) drain(ctx context.Context) error {
	for ctx.Err() == nil {
		due, err := claim(ctx, w.db, w.cfg.Now(), claimBatch, claimLease)
		if err != nil || len(due) == 0 {
			return err
		}
		for _, m := range due {
			w.deliver(ctx, m)
		}
	}
	return nil
}

// deliver sends one claimed message and records the outcome. The outcome
// is written without ctx's cancellation, so a stop mid-send neither loses
// a sent message's deletion nor an attempt.
func (w *Worker) deliver(ctx context.Context, m queued) {
	log := w.cfg.Log.With("email_id", m.id, "kind", m.Kind, "to", m.To)
	done := context.WithoutCancel(ctx)
	if w.cfg.Sender.APIKey == "" {
		log.Warn("account email not sent: SYSTEM_MAILER_API_KEY is not set", "subject", m.Subject, "link", m.Link)
		w.record(done, log, remove(done, w.db, m.id))
		return
	}
	s := w.cfg.Sender
	_, err := s.Client.Send(ctx, mailer.Batch{
		APIKey: s.APIKey, FromEmail: s.FromEmail, FromName: s.FromName, HTML: m.HTML, Text: m.Text,
		Personalizations: []mailer.Personalization{{To: m.To, ToName: m.ToName, Subject: m.Subject}},
	})
	if err == nil {
		log.Info("account email sent")
		w.record(done, log, remove(done, w.db, m.id))
		return
	}
	var merr *mailer.Error
	permanent := errors.As(err, &merr) && merr.Permanent
	if ctx.Err() != nil && !permanent {
		// Stopping: the lease runs out and another attempt is made later.
		return
	}
	now := w.cfg.Now()
	if permanent || m.attempts >= maxAttempts {
		log.Error("account email failed for good", "attempts", m.attempts, "err", err)
		w.record(done, log, fail(done, w.db, m.id, now, err.Error()))
		return
	}
	retry := backoff(m.attempts)
	log.Warn("account email will be retried", "attempts", m.attempts, "retry_in", retry.String(), "err", err)
	w.record(done, log, reschedule(done, w.db, m.id, now.Add(retry), err.Error()))
}

func (w *Worker) record(ctx context.Context, log *slog.Logger, err error) {
	if err != nil {
		log.ErrorContext(ctx, "record account email outcome", "err", err)
	}
}
