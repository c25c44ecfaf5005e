package campaigns

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/mailmerge"
	"github.com/contactbook/contactbook/internal/ratelimit"
)

// TestPrefix starts the subject of every test email.
const TestPrefix = "[TEST] "

// TestSendsPerHour is how many test emails a book may send in an hour:
// enough to check a template, too few to make a mailing list of it.
const TestSendsPerHour = 20

// throttledError is a RATE_LIMITED answer that says when to come back.
type throttledError struct {
	err   *apperr.Error
	after time.Duration
}

func (e *throttledError) Error() string { return e.err.Error() }

// RetryAfter is how long the client should wait (the Retry-After header).
func (e *throttledError) RetryAfter() time.Duration { return e.after.Round(time.Second) }

func (e *throttledError) Unwrap() error { return e.err }

// testRecipientAllowed refuses a test email to anyone but a member of the
// book's team or a contact of the book: a test send carries the book's
// sender and provider key, and must not become a way to mail strangers.
func (s *Service) testRecipientAllowed(ctx context.Context, sc access.Scope, to string) error {
	member, err := accounts.IsMemberEmail(ctx, s.db, sc.Book.TeamID, to)
	if err != nil || member {
		return err
	}
	contact, err := contacts.HasAddress(ctx, s.db, sc.Book.ID, to)
	if err != nil || contact {
		return err
	}
	return apperr.Invalidf("`email` must be the address of a member of the team or of a contact of the book: test emails go to people you know.")
}

// SendTestInput names the recipient of a test email.
type SendTestInput struct {
	Email string `json:"email"`
}

// SendTest sends one rendering of a template to an address (member). The
// merge data come from the book's first contact (the oldest); custom
// fields the template uses without data for that contact show
// mailmerge.PlaceholderURL, so the author sees where they land. The
// unsubscribe link of a test email leads to the invalid-link page: no
// token is issued for it.
func (s *Service) SendTest(ctx context.Context, sc access.Scope, templateID uuid.UUID, in SendTestInput) error {
	if err := s.bookFor(ctx, sc, auth.RoleMember); err != nil {
		return err
	}
	to := strings.TrimSpace(in.Email)
	if err := validateEmail("email", to); err != nil {
		return err
	}
	if err := s.testRecipientAllowed(ctx, sc, to); err != nil {
		return err
	}
	t, err := s.st.template(ctx, s.db, sc.Book.ID, templateID)
	if err != nil {
		return err
	}
	settings, ok, err := s.loadSettings(ctx, s.db, sc.Book.ID)
	if err != nil {
		return err
	}
	if !ok || !settings.canSend() || settings.SenderEmail == "" {
		if settings.prov.Provider == ProviderSMTP || settings.prov.Provider == ProviderSES {
			return apperr.Invalidf("Email settings are not configured for this book: save a sender email and the %s provider's settings first.", settings.prov.Provider)
		}
		return apperr.Invalidf("Email settings are not configured for this book: save a sender email and a mailer API key in the campaign settings first.")
	}
	book, err := s.st.mergeBook(ctx, s.db, sc.Book.ID)
	if err != nil {
		return err
	}
	tpl := mailmerge.Compile(t.Subject, t.BodyHTML, book.customKeys)
	v, err := s.firstContactValues(ctx, sc.Book.ID, book.name)
	if err != nil {
		return err
	}
	for _, key := range tpl.CustomKeys() {
		if v.Custom[key] == "" {
			v.Custom[key] = mailmerge.PlaceholderURL(key)
		}
	}
	v.UnsubscribeURL = s.links.unsubscribePageURL("test-email")
	subject, html := tpl.Render(v, footerOf(settings.Settings))
	if err := ctx.Err(); err != nil {
		return err // the request is gone: nobody waits for this email
	}
	// Counted last, once the email is ready to go: a refused request costs
	// no test send.
	wait, err := ratelimit.Take(ctx, s.db, "send-test:book:"+sc.Book.ID.String(), TestSendsPerHour, time.Hour, s.now())
	if err != nil {
		return err
	}
	if wait > 0 {
		return &throttledError{err: apperr.New(apperr.RateLimited, "At most %d test emails per book and hour; wait (see Retry-After) and try again.", TestSendsPerHour), after: wait}
	}
	_, err = s.mail.Send(ctx, mailer.Batch{
		Account: settings.account(sc.Book.ID), APIKey: settings.apiKey, FromEmail: settings.SenderEmail, FromName: settings.SenderName,
		ReplyTo: settings.ReplyToEmail, HTML: html,
		Personalizations: []mailer.Personalization{{To: to, Subject: TestPrefix + subject}},
	})
	var me *mailer.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &me) && me.Permanent:
		return apperr.Invalidf("The email provider refused the test email: %s", me.Message)
	default:
		return apperr.Wrap(err, apperr.Unavailable, "The email provider could not be reached; try again in a moment.")
	}
}

// firstContactValues are the merge values of the book's oldest contact
// (only book_name when the book is empty).
func (s *Service) firstContactValues(ctx context.Context, bookID uuid.UUID, bookName string) (mailmerge.Values, error) {
	v, _, err := s.contactValues(ctx, bookID, nil, bookName)
	return v, err
}

// contactValues are the merge values of the book's contact id, or of its
// oldest when id is nil, and that contact's id (only book_name and
// uuid.Nil when there is none).
func (s *Service) contactValues(ctx context.Context, bookID uuid.UUID, id *uuid.UUID, bookName string) (mailmerge.Values, uuid.UUID, error) {
	first, found, err := contacts.MergeRecordOf(ctx, s.db, bookID, id)
	v := mailmerge.Values{Fields: map[string]string{"book_name": bookName}, Custom: map[string]string{}}
	if err != nil || !found {
		return v, uuid.Nil, err
	}
	for k, val := range map[string]string{
		"first_name": first.FirstName, "last_name": first.LastName, "full_name": strings.TrimSpace(first.FirstName + " " + first.LastName),
		"company": first.Company, "job_title": first.JobTitle, "email": first.Email, "phone": first.Phone, "website": first.Website, "birthday": first.Birthday,
	} {
		v.Fields[k] = val
	}
	if len(first.Custom) > 0 {
		if err := json.Unmarshal(first.Custom, &v.Custom); err != nil {
			return v, first.ID, err
		}
	}
	return v, first.ID, nil
}
