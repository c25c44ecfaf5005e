package accountmail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Sender is the provider account emails go out with.
type Sender struct {
	Client mailer.Sender
	APIKey string // SYSTEM_MAILER_API_KEY; "" logs links instead of sending
	// Account is the service's own SMTP relay or SES account
	// (SYSTEM_MAIL_PROVIDER); nil sends through SendGrid with APIKey.
	// Client must then be a mailer.Dispatcher.
	Account   *mailer.Account
	FromEmail string
	FromName  string
}

// configured reports whether account emails can be sent at all.
func (s Sender) configured() bool {
	if s.Account != nil && s.Account.Provider != "" && s.Account.Provider != mailer.ProviderSendGrid {
		return true
	}
	return s.APIKey != ""
}

// SendArgs is the job of one account email. At most one is queued or
// running per email.
type SendArgs struct {
	EmailID uuid.UUID `json:"email_id"`
}

// Kind names the job in river_job.
func (SendArgs) Kind() string { return "account_email" }

// InsertOpts makes the job unique per email while queued or running and
// gives it maxAttempts attempts.
func (SendArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: maxAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: jobs.QueuedStates}}
}

// RequeueArgs is the job that gives a job to every email left without one
// (Worker.requeue). A run due while the previous one is queued or running
// is skipped; one that fails is not retried, the next one does its work.
type RequeueArgs struct{}

// Kind names the job in river_job.
func (RequeueArgs) Kind() string { return "account_email_requeue" }

// InsertOpts makes the requeue unique while queued or running.
func (RequeueArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByState: jobs.QueuedStates}}
}

// Delivery limits: a transient failure is retried after retryBase doubling
// up to retryMax, and maxAttempts attempts (about an hour and a half in
// all) give up. requeueEvery is how often emails left without a job are
// looked for.
const (
	retryBase    = 30 * time.Second
	retryMax     = 30 * time.Minute
	maxAttempts  = 8
	requeueEvery = time.Hour
)

// backoff is the wait after the attempts-th failed attempt.
func backoff(attempts int) time.Duration {
	d := retryBase
	for i := 1; i < attempts && d < retryMax; i++ {
		d *= 2
	}
	return min(d, retryMax)
}

// ManyQueue enqueues jobs on their own (the River client, jobs.Client).
type ManyQueue interface {
	InsertMany(ctx context.Context, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// Worker sends account emails: it works the account_email jobs and the
// periodic account_email_requeue.
type Worker struct {
	river.WorkerDefaults[SendArgs]
	db     postgres.Pool
	queue  ManyQueue
	sender Sender
	now    func() time.Time
	log    *slog.Logger
}

// WorkerDeps are what the worker works with.
type WorkerDeps struct {
	DB postgres.Pool
	// Queue takes the requeue's jobs.
	Queue  ManyQueue
	Sender Sender
	Now    func() time.Time // nil: time.Now
	Log    *slog.Logger     // nil: discarded
}

// NewWorker returns the worker.
func NewWorker(d WorkerDeps) *Worker {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Worker{db: d.DB, queue: d.Queue, sender: d.Sender, now: d.Now, log: d.Log}
}

// Jobs registers the send and requeue workers; the requeue runs every
// hour and when the leader starts, so emails queued before an upgrade are
// sent at once.
func (w *Worker) Jobs(rw *river.Workers) ([]*river.PeriodicJob, error) {
	if err := river.AddWorkerSafely[SendArgs](rw, w); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(rw, &requeueWorker{w: w}); err != nil {
		return nil, err
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(requeueEvery),
		func() (river.JobArgs, *river.InsertOpts) { return RequeueArgs{}, nil },
		&river.PeriodicJobOpts{ID: "account_email_requeue", RunOnStart: true})}, nil
}

// NextRetry waits backoff(attempt) after a failed attempt.
func (w *Worker) NextRetry(job *river.Job[SendArgs]) time.Time {
	return time.Now().Add(backoff(job.Attempt))
}

// Work sends one email. Its row is stamped (committed) before the provider
// is called, so an attempt after a crash mid-send does not send it again;
// the send is not cut short by a stop, so a clean stop leaves no such
// doubt. A transient provider error clears the stamp and the job is
// retried with backoff; a permanent one, or the last attempt, gives up.
// The row goes once the email is sent or given up: its body holds a live
// token.
func (w *Worker) Work(ctx context.Context, job *river.Job[SendArgs]) error {
	id := job.Args.EmailID
	log := w.log.With("email_id", id, "job_id", job.ID, "attempt", job.Attempt)
	m, err := begin(ctx, w.db, id, w.now())
	switch {
	case errors.Is(err, errGone):
		return nil
	case errors.Is(err, errOutcomeUnknown):
		log.Error("account email not sent again", "err", err)
		return river.JobCancel(err)
	case err != nil:
		return err
	}
	log = log.With("kind", m.Kind, "to", m.To)
	done := context.WithoutCancel(ctx)
	if !w.sender.configured() {
		log.Warn("account email not sent: SYSTEM_MAILER_API_KEY is not set", "subject", m.Subject, "link", m.Link)
		w.record(done, log, remove(done, w.db, id))
		return nil
	}
	s := w.sender
	// The provider's request timeout (mailer.RequestTimeout) bounds the send.
	_, err = s.Client.Send(done, mailer.Batch{
		APIKey: s.APIKey, Account: s.Account, FromEmail: s.FromEmail, FromName: s.FromName, HTML: m.HTML, Text: m.Text,
		Personalizations: []mailer.Personalization{{To: m.To, ToName: m.ToName, Subject: m.Subject}},
	})
	if err == nil {
		log.Info("account email sent")
		w.record(done, log, remove(done, w.db, id))
		return nil
	}
	var merr *mailer.Error
	if errors.As(err, &merr) && merr.Permanent {
		log.Error("account email refused by the provider", "err", err)
		w.record(done, log, remove(done, w.db, id))
		return river.JobCancel(err)
	}
	if job.Attempt >= job.MaxAttempts {
		log.Error("account email failed for good", "err", err)
		w.record(done, log, remove(done, w.db, id))
		return err
	}
	log.Warn("account email will be retried", "retry_in", backoff(job.Attempt).String(), "err", err)
	w.record(done, log, unstamp(done, w.db, id))
	return err
}

func (w *Worker) record(ctx context.Context, log *slog.Logger, err error) {
	if err != nil {
		log.ErrorContext(ctx, "record account email outcome", "err", err)
	}
}

// requeue gives a job to every email of the table that has none queued or
// running: the emails queued before account emails were jobs, and those
// whose job River gave up while its instance was dead. The jobs are unique
// per email, so an email whose job is queued or running gets no second
// one; a job whose email has gone meanwhile finds nothing to send.
func (w *Worker) requeue(ctx context.Context) error {
	ids, err := queuedIDs(ctx, w.db)
	if err != nil || len(ids) == 0 {
		return err
	}
	params := make([]river.InsertManyParams, len(ids))
	for i, id := range ids {
		params[i] = river.InsertManyParams{Args: SendArgs{EmailID: id}}
	}
	res, err := w.queue.InsertMany(ctx, params)
	if err != nil {
		return fmt.Errorf("requeue account emails: %w", err)
	}
	queued := 0
	for _, r := range res {
		if !r.UniqueSkippedAsDuplicate {
			queued++
		}
	}
	if queued > 0 {
		w.log.Info("account emails without a job requeued", "emails", queued)
	}
	return nil
}

type requeueWorker struct {
	river.WorkerDefaults[RequeueArgs]
	w *Worker
}

func (r *requeueWorker) Work(ctx context.Context, _ *river.Job[RequeueArgs]) error {
	return r.w.requeue(ctx)
}
