package forms_test

import (
	"context"
	"net/url"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/forms"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
	"github.com/contactbook/contactbook/internal/suppression"
)

// The double opt-in and consent rules, tested on the service over its own
// database: the confirmation job is taken by a queue the test works by
// hand, and the email goes to a recorder. The pages and answers are
// tested over HTTP in internal/httpapi.

// queue holds the confirmation jobs of the submissions.
type queue struct {
	mu   sync.Mutex
	jobs []uuid.UUID
}

func (q *queue) InsertTx(_ context.Context, _ pgx.Tx, args river.JobArgs, _ *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.jobs = append(q.jobs, args.(forms.ConfirmationArgs).SubmissionID)
	return &rivertype.JobInsertResult{Job: &rivertype.JobRow{}}, nil
}

// outbox records the emails sent.
type outbox struct {
	mu   sync.Mutex
	sent []mailer.Batch
}

func (o *outbox) Send(_ context.Context, b mailer.Batch) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent = append(o.sent, b)
	return "msg", nil
}

// sender is a book's complete email settings.
type sender struct{}

func (sender) BookSender(context.Context, uuid.UUID) (campaigns.BookSender, bool, error) {
	return campaigns.BookSender{APIKey: "SG.x", FromEmail: "news@acme.example", FromName: "Acme", CompanyName: "Acme Inc.", PostalAddress: "1 Main St"}, true, nil
}

type formsEnv struct {
	t     *testing.T
	ctx   context.Context
	db    *pgtest.Database
	svc   *forms.Service
	queue *queue
	mail  *outbox
	now   time.Time
	scope access.Scope
}

func newFormsEnv(t *testing.T) *formsEnv {
	t.Helper()
	db := pgtest.Setup(t)
	e := &formsEnv{t: t, ctx: context.Background(), db: db, queue: &queue{}, mail: &outbox{}, now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	now := func() time.Time { return e.now }
	outboxEvents := events.NewOutbox(func() {})
	bks := books.NewService(db.DB, outboxEvents, now)
	marks := suppression.New(now).WithOutbox(outboxEvents)
	cs := contacts.NewService(contacts.Deps{DB: db.DB, Books: bks, Outbox: outboxEvents, Marks: marks, Now: now})
	e.svc = forms.NewService(forms.Deps{
		DB: db.DB, Books: bks, Contacts: cs, Senders: sender{}, Suppressor: marks, Mail: e.mail, Queue: e.queue,
		PublicBaseURL: "https://contacts.example.com", Now: now,
	})
	var team, user uuid.UUID
	if err := db.Pool.QueryRow(e.ctx, `
		WITH t AS (INSERT INTO teams (name) VALUES ('Acme') RETURNING id),
		     u AS (INSERT INTO users (email, name, password_hash) VALUES ('o@example.com', 'O', 'x') RETURNING id),
		     m AS (INSERT INTO team_members (team_id, user_id, role) SELECT t.id, u.id, 'owner' FROM t, u RETURNING team_id, user_id)
		SELECT team_id, user_id FROM m`).Scan(&team, &user); err != nil {
		t.Fatal(err)
	}
	owner := auth.UserActor(user, accounts.NewService(accounts.Deps{DB: db.DB, Now: now}))
	b, err := bks.Create(e.ctx, owner, books.CreateInput{TeamID: team, Name: "Customers"})
	if err != nil {
		t.Fatal(err)
	}
	e.scope = access.InBook(owner, b)
	return e
}

func (e *formsEnv) form(double bool) forms.Form {
	e.t.Helper()
	f, err := e.svc.Create(e.ctx, e.scope, forms.Input{Name: "Newsletter", DoubleOptIn: &double, ConsentText: "I agree."})
	if err != nil {
		e.t.Fatal(err)
	}
	return f
}

func (e *formsEnv) submit(f forms.Form, email string) error {
	_, err := e.svc.Submit(e.ctx, f.ID, forms.SubmitInput{Email: email, Consent: "true"}, forms.Origin{IP: "203.0.113.7", UserAgent: "test"})
	return err
}

var tokenIn = regexp.MustCompile(`/api/forms/confirm\?token=([A-Za-z0-9_%-]+)`)

// send works the queued confirmation jobs and returns the token of the
// last email sent.
func (e *formsEnv) send() string {
	e.t.Helper()
	e.queue.mu.Lock()
	jobs := e.queue.jobs
	e.queue.jobs = nil
	e.queue.mu.Unlock()
	for _, id := range jobs {
		if err := e.svc.SendConfirmation(e.ctx, id); err != nil {
			e.t.Fatalf("send confirmation: %v", err)
		}
	}
	e.mail.mu.Lock()
	defer e.mail.mu.Unlock()
	if len(e.mail.sent) == 0 {
		e.t.Fatal("no confirmation email sent")
	}
	m := tokenIn.FindStringSubmatch(e.mail.sent[len(e.mail.sent)-1].HTML)
	if m == nil {
		e.t.Fatal("no link in the confirmation email")
	}
	tok, err := url.QueryUnescape(m[1])
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

func (e *formsEnv) count(sql string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.db.Pool.QueryRow(e.ctx, sql, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func TestDoubleOptInRules(t *testing.T) {
	t.Parallel()
	e := newFormsEnv(t)
	f := e.form(true)
	book := e.scope.Book.ID
	if err := e.submit(f, "Ada@Example.com"); err != nil {
		t.Fatal(err)
	}
	// Held until confirmed: no contact, no consent.
	if n := e.count(`SELECT count(*) FROM contacts WHERE book_id = $1`, book); n != 0 {
		t.Fatalf("%d contacts before the confirmation", n)
	}
	tok := e.send()
	if page, err := e.svc.CheckToken(e.ctx, tok); err != nil {
		t.Fatalf("check token: %+v (%v)", page, err)
	}
	if n := e.count(`SELECT count(*) FROM contacts WHERE book_id = $1`, book); n != 0 {
		t.Fatal("checking the token created a contact")
	}

	// Two confirmations at once: one contact, one consent.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { _, errs[i] = e.svc.Confirm(e.ctx, tok) })
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("two confirmations: %v, %v; want one to succeed", errs[0], errs[1])
	}
	for _, err := range errs {
		if err != nil && !apperr.Is(err, apperr.NotFound) {
			t.Fatalf("the second confirmation: %v", err)
		}
	}
	if n := e.count(`SELECT count(*) FROM contacts WHERE book_id = $1 AND emails->0->>'address' = 'ada@example.com'`, book); n != 1 {
		t.Fatalf("contacts after confirming = %d, want 1", n)
	}
	if n := e.count(`SELECT count(*) FROM consents WHERE form_id = $1 AND method = 'double' AND text = 'I agree.' AND ip IS NOT NULL`, f.ID); n != 1 {
		t.Fatalf("double opt-in consents = %d, want 1", n)
	}
	// Used: the token is gone for both steps.
	_, err := e.svc.CheckToken(e.ctx, tok)
	if !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("check of a used token: %v", err)
	}
	_, err = e.svc.Confirm(e.ctx, tok)
	if !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("confirm of a used token: %v", err)
	}
}

func TestConfirmationExpires(t *testing.T) {
	t.Parallel()
	e := newFormsEnv(t)
	f := e.form(true)
	if err := e.submit(f, "late@example.com"); err != nil {
		t.Fatal(err)
	}
	tok := e.send()
	e.now = e.now.Add(7*24*time.Hour + time.Second)
	if _, err := e.svc.Confirm(e.ctx, tok); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("confirm after seven days: %v", err)
	}
	if n := e.count(`SELECT count(*) FROM contacts`); n != 0 {
		t.Fatalf("%d contacts from an expired confirmation", n)
	}
	if _, err := e.svc.Prune(e.ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.count(`SELECT count(*) FROM form_submissions`); n != 0 {
		t.Fatalf("%d expired submissions kept", n)
	}
}

func TestSingleOptInRecordsConsentAtOnce(t *testing.T) {
	t.Parallel()
	e := newFormsEnv(t)
	f := e.form(false)
	if err := e.submit(f, "bob@example.com"); err != nil {
		t.Fatal(err)
	}
	if len(e.queue.jobs) != 0 {
		t.Fatalf("a single opt-in form queued %d confirmations", len(e.queue.jobs))
	}
	if n := e.count(`SELECT count(*) FROM contacts WHERE emails->0->>'address' = 'bob@example.com'`); n != 1 {
		t.Fatalf("contacts = %d, want 1", n)
	}
	if n := e.count(`SELECT count(*) FROM consents WHERE form_id = $1 AND method = 'single'`, f.ID); n != 1 {
		t.Fatalf("single opt-in consents = %d, want 1", n)
	}
}
