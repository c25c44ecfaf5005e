package forms

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/web"
)

// ConfirmationArgs is the job of one confirmation email, queued once, in
// the transaction that holds the submission (so it needs no uniqueness
// check of its own).
type ConfirmationArgs struct {
	SubmissionID uuid.UUID `json:"submission_id"`
}

// Kind names the job in river_job.
func (ConfirmationArgs) Kind() string { return "form_confirmation" }

// InsertOpts retries a failed send with backoff, for about a day.
func (ConfirmationArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 12}
}

// PruneArgs is the hourly deletion of expired submissions.
type PruneArgs struct{}

// Kind names the job in river_job.
func (PruneArgs) Kind() string { return "form_prune" }

// InsertOpts runs one prune at a time and never retries (the next hour's
// does the work).
func (PruneArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByState: jobs.QueuedStates}}
}

// Jobs registers the confirmation email's worker and the prune's, and
// returns the prune's hourly periodic job (the service is a jobs.Source).
func (s *Service) Jobs(w *river.Workers) ([]*river.PeriodicJob, error) {
	if err := river.AddWorkerSafely(w, &confirmationWorker{s: s}); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(w, &pruneWorker{s: s}); err != nil {
		return nil, err
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
		func() (river.JobArgs, *river.InsertOpts) { return PruneArgs{}, nil },
		&river.PeriodicJobOpts{ID: "form_prune"})}, nil
}

type confirmationWorker struct {
	river.WorkerDefaults[ConfirmationArgs]
	s *Service
}

// Work sends the email once the submission still waits for it. A provider
// refusal ends the job; a transient failure is retried.
func (w *confirmationWorker) Work(ctx context.Context, job *river.Job[ConfirmationArgs]) error {
	err := w.s.SendConfirmation(ctx, job.Args.SubmissionID)
	var me *mailer.Error
	switch {
	case err == nil:
		return nil
	case apperr.Is(err, apperr.NotFound), errors.Is(err, errOutcomeUnknown), errors.As(err, &me) && me.Permanent:
		w.s.d.Log.WarnContext(ctx, "forms: confirmation email not sent", "submission_id", job.Args.SubmissionID, "err", err)
		return river.JobCancel(err)
	}
	return err
}

// SendConfirmation sends the confirmation email of a held submission, at
// most once: a fresh token is made, its hash stored with a "sending" stamp
// that commits before the provider is called, then the email goes out
// through the book's email settings and the submission is marked sent. A
// submission already sent, confirmed or gone is left alone; one found
// stamped (an attempt died between the provider and the mark) is not sent
// again; one the provider refused for now is unstamped for the retry.
func (s *Service) SendConfirmation(ctx context.Context, id uuid.UUID) error {
	h, err := s.st.heldByID(ctx, s.d.DB, id)
	if err != nil {
		return err
	}
	if h.SentAt != nil || h.ConfirmedAt != nil || !h.ExpiresAt.After(s.d.Now()) {
		return nil
	}
	f, err := s.st.form(ctx, s.d.DB, h.FormID, false)
	if err != nil {
		return err
	}
	sender, ok, err := s.d.Senders.BookSender(ctx, h.BookID)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.NotFoundf("The book's email settings were removed; the confirmation email cannot be sent.")
	}
	token, hash, err := newToken()
	if err != nil {
		return err
	}
	html, text, err := web.RenderConfirmationEmail(web.ConfirmationEmail{
		Email: h.Email, FormName: f.Name, ConfirmURL: s.confirmURL(token),
		CompanyName: sender.CompanyName, PostalAddress: sender.PostalAddress,
	})
	if err != nil {
		return err
	}
	subject := "Confirm your subscription"
	if sender.CompanyName != "" {
		subject += " to " + sender.CompanyName
	}
	if ok, err := s.st.beginSend(ctx, s.d.DB, id, hash, s.d.Now().UTC()); err != nil || !ok {
		return err
	}
	// The send and its record outlive a shutdown's cancellation: the
	// provider's request timeout bounds the send.
	done := context.WithoutCancel(ctx)
	_, err = s.d.Mail.Send(done, mailer.Batch{
		APIKey: sender.APIKey, Account: sender.Account, FromEmail: sender.FromEmail, FromName: sender.FromName, ReplyTo: sender.ReplyTo,
		HTML: html, Text: text, Tracking: &mailer.Tracking{},
		Personalizations: []mailer.Personalization{{To: h.Email, Subject: headerSafe(subject)}},
	})
	var me *mailer.Error
	switch {
	case err == nil:
		return s.st.markSent(done, s.d.DB, id, s.d.Now().UTC())
	case errors.As(err, &me) && me.Permanent:
		return fmt.Errorf("send confirmation email: %w", err)
	}
	if uerr := s.st.unstamp(done, s.d.DB, id); uerr != nil {
		return uerr
	}
	return fmt.Errorf("send confirmation email: %w", err)
}

// confirmURL is the absolute link of a token's confirmation page.
func (s *Service) confirmURL(token string) string {
	return strings.TrimRight(s.d.PublicBaseURL, "/") + "/api/forms/confirm?token=" + url.QueryEscape(token)
}

// headerSafe keeps a subject on one line.
func headerSafe(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

type pruneWorker struct {
	river.WorkerDefaults[PruneArgs]
	s *Service
}

func (w *pruneWorker) Work(ctx context.Context, _ *river.Job[PruneArgs]) error {
	n, err := w.s.Prune(ctx)
	if err == nil && n > 0 {
		w.s.d.Log.InfoContext(ctx, "forms: deleted expired submissions", "count", n)
	}
	return err
}

// Prune deletes the submissions whose 7 days have passed, confirmed or
// not, and the post counts no limit reads any more.
func (s *Service) Prune(ctx context.Context) (int64, error) {
	return s.st.prune(ctx, s.d.DB, s.d.Now())
}
