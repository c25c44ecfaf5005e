package campaigns

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/mailmerge"
	"github.com/contactbook/contactbook/internal/postgres"
)

// TestPrefix starts the subject of every test email.
const TestPrefix = "[TEST] "

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
func (s *Service) SendTest(ctx context.Context, actor *auth.Actor, bookID, templateID uuid.UUID, in SendTestInput) error {
	if _, err := s.bookFor(ctx, actor, bookID, auth.RoleMember); err != nil {
		return err
	}
	to := strings.TrimSpace(in.Email)
	if err := validateEmail("email", to); err != nil {
		return err
	}
	t, err := s.st.template(ctx, s.db, bookID, templateID)
	if err != nil {
		return err
	}
	settings, ok, err := s.loadSettings(ctx, s.db, bookID)
	if err != nil {
		return err
	}
	if !ok || settings.apiKey == "" || settings.SenderEmail == "" {
		return apperr.Invalidf("Email settings are not configured for this book: save a sender email and a mailer API key in the campaign settings first.")
	}
	book, err := s.st.mergeBook(ctx, s.db, bookID)
	if err != nil {
		return err
	}
	tpl := mailmerge.Compile(t.Subject, t.BodyHTML, book.customKeys)
	v, err := s.firstContactValues(ctx, bookID, book.name)
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
	_, err = s.sender.Send(ctx, mailer.Batch{
		APIKey: settings.apiKey, FromEmail: settings.SenderEmail, FromName: settings.SenderName,
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
	var first, last, company, job, website, birthday, email, phone string
	var custom []byte
	err := s.db.QueryRow(ctx, `
		SELECT ct.first_name, ct.last_name, ct.company, ct.job_title, ct.website,
		       COALESCE(to_char(ct.birthday, 'YYYY-MM-DD'), ''), `+contactEmailSQL+`, `+contactPhoneSQL+`,
		       (SELECT jsonb_object_agg(fd.key, v.value) FROM contact_field_values v
		        JOIN field_definitions fd ON fd.id = v.field_id WHERE v.contact_id = ct.id)
		FROM contacts ct WHERE ct.book_id = $1 ORDER BY ct.created_at, ct.id LIMIT 1`, bookID).
		Scan(&first, &last, &company, &job, &website, &birthday, &email, &phone, &custom)
	v := mailmerge.Values{Fields: map[string]string{"book_name": bookName}, Custom: map[string]string{}}
	if errors.Is(err, pgx.ErrNoRows) {
		return v, nil
	}
	if err != nil {
		return v, postgres.Translate(err)
	}
	for k, val := range map[string]string{
		"first_name": first, "last_name": last, "full_name": strings.TrimSpace(first + " " + last),
		"company": company, "job_title": job, "email": email, "phone": phone, "website": website, "birthday": birthday,
	} {
		v.Fields[k] = val
	}
	if len(custom) > 0 {
		if err := json.Unmarshal(custom, &v.Custom); err != nil {
			return v, err
		}
	}
	return v, nil
}
