package transactional

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/enum"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
	"github.com/contactbook/contactbook/internal/validate"
)

// Composer renders a template of the book for one recipient with the
// campaign emails' merge fields (campaigns.Service).
type Composer interface {
	Compose(ctx context.Context, in campaigns.ComposeInput) (campaigns.Composed, error)
	// SendingMissing names what the book's email settings lack for
	// sending; empty when it can send.
	SendingMissing(ctx context.Context, bookID uuid.UUID) ([]string, error)
}

// Service accepts, lists and reads transactional emails.
type Service struct {
	db       postgres.Pool
	composer Composer
	wake     func()
	now      func() time.Time
	log      *slog.Logger
}

// Deps are what the service and the runner need.
type Deps struct {
	DB       postgres.Pool
	Composer Composer
	Provider Provider
	// Outbox takes the email.sent and email.failed events of the sends
	// (nil: none are written).
	Outbox *events.Outbox
	Now    func() time.Time
	Log    *slog.Logger
	// Runner tunes the sending loop; zero values take the defaults.
	Runner RunnerConfig
}

// New returns the service and the runner that sends what it queues; a
// message accepted by this instance wakes its runner at once, the other
// instances' runners find it at their next poll.
func New(d Deps) (*Service, *Runner) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	rn := newRunner(d)
	return &Service{db: d.DB, composer: d.Composer, wake: rn.Wake, now: d.Now, log: d.Log}, rn
}

var errNotFound = apperr.NotFoundf("Transactional email not found.")

// Send queues one email (member). A suppressed address (not by an
// unsubscribe) is answered too, with status suppressed and nothing to
// send; a book without a sender address or provider is CONFLICT.
func (s *Service) Send(ctx context.Context, sc access.Scope, in SendInput) (Message, error) {
	if err := sc.Require(ctx, auth.RoleMember); err != nil {
		return Message{}, err
	}
	ci, replyTo, name, err := checkSend(sc.Book.ID, in)
	if err != nil {
		return Message{}, err
	}
	missing, err := s.composer.SendingMissing(ctx, sc.Book.ID)
	if err != nil {
		return Message{}, err
	}
	if len(missing) > 0 {
		return Message{}, apperr.New(apperr.Conflict,
			"This book cannot send email yet: its email settings lack %s. Save them in the campaign settings first.",
			strings.Join(missing, " and "))
	}
	c, err := s.composer.Compose(ctx, ci)
	if err != nil {
		return Message{}, err
	}
	if name == "" {
		name = c.Name
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Message{}, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	m := Message{
		ID: id, BookID: sc.Book.ID, TemplateID: ci.TemplateID,
		To:      Recipient{ContactID: c.ContactID, Email: c.Email, Name: name},
		Subject: c.Subject, Status: StatusQueued, CreatedAt: now,
	}
	// The suppression is read and the message written in one statement:
	// a suppressed address gets a message that is settled at once.
	err = s.db.QueryRow(ctx, `
		WITH r AS (SELECT `+suppression.ReasonSQL("$2", "lower($5)")+` AS reason)
		INSERT INTO transactional_messages (id, book_id, template_id, contact_id, email, name, subject, body_html, reply_to,
		                                    status, detail, next_attempt_at, created_at)
		SELECT $1, $2, $3, $4, $5, $6, $7, CASE WHEN `+stopsSQL("r.reason")+` THEN NULL ELSE $8 END, $9,
		       CASE WHEN `+stopsSQL("r.reason")+` THEN 'suppressed' ELSE 'queued' END,
		       CASE WHEN `+stopsSQL("r.reason")+` THEN 'address suppressed (' || r.reason || ')' ELSE '' END,
		       CASE WHEN `+stopsSQL("r.reason")+` THEN NULL ELSE $10::timestamptz END, $10
		FROM r
		RETURNING status, detail`,
		m.ID, m.BookID, m.TemplateID, m.To.ContactID, m.To.Email, m.To.Name, m.Subject, c.HTML, replyTo, now,
	).Scan(&m.Status, &m.Detail)
	if err != nil {
		return Message{}, err
	}
	if m.Status == StatusQueued {
		s.wake()
	}
	return m, nil
}

// stopsSQL is whether a suppression reason (SQL expression, NULL for
// none) stops a transactional email: every reason but an unsubscribe,
// which only concerns marketing.
func stopsSQL(reason string) string {
	return `COALESCE(` + reason + ` <> '` + string(suppression.ReasonUnsubscribe) + `', false)`
}

// checkSend checks a send's body and says what to compose.
func checkSend(bookID uuid.UUID, in SendInput) (ci campaigns.ComposeInput, replyTo, name string, err error) {
	ci.BookID = bookID
	if in.TemplateID == nil {
		return ci, "", "", apperr.Invalidf("`template_id` is required: the email template of the book to send.")
	}
	ci.TemplateID = *in.TemplateID
	if in.To == nil {
		return ci, "", "", apperr.Invalidf("`to` is required: {\"contact_id\": ...} or {\"email\": ..., \"name\": ...}.")
	}
	switch {
	case in.To.ContactID != nil && in.To.Email != nil:
		return ci, "", "", apperr.Invalidf("`to` takes contact_id or email, not both.")
	case in.To.ContactID != nil:
		ci.ContactID = in.To.ContactID
	case in.To.Email != nil:
		ci.Email = strings.TrimSpace(*in.To.Email)
		if err := checkAddress("to.email", ci.Email); err != nil {
			return ci, "", "", err
		}
	default:
		return ci, "", "", apperr.Invalidf("`to` needs contact_id or email.")
	}
	if in.To.Name != nil {
		name = strings.TrimSpace(*in.To.Name)
		if len(name) > MaxNameLen || !validate.HeaderText(name) {
			return ci, "", "", apperr.Invalidf("`to.name` must be at most %d characters on one line.", MaxNameLen)
		}
	}
	if data := bytes.TrimSpace(in.Data); len(data) > 0 && string(data) != "null" {
		if data[0] != '{' {
			return ci, "", "", apperr.Invalidf("`data` must be a JSON object.")
		}
		if len(data) > MaxDataBytes {
			return ci, "", "", apperr.Invalidf("`data` may be at most %d KB of JSON.", MaxDataBytes>>10)
		}
		ci.Data = data
	}
	if in.ReplyTo != nil && strings.TrimSpace(*in.ReplyTo) != "" {
		replyTo = strings.TrimSpace(*in.ReplyTo)
		if err := checkAddress("reply_to", replyTo); err != nil {
			return ci, "", "", err
		}
	}
	if in.Subject != nil {
		subj := strings.TrimSpace(*in.Subject)
		if subj == "" || len(subj) > MaxSubjectLen {
			return ci, "", "", apperr.Invalidf("`subject` must be 1 to %d characters.", MaxSubjectLen)
		}
		ci.Subject = &subj
	}
	return ci, replyTo, name, nil
}

func checkAddress(field, addr string) error {
	v := struct {
		Addr string `validate:"required,email,max=254"`
	}{addr}
	if validate.Struct(v) != nil {
		return apperr.Invalidf("`%s` must be a valid email address.", field)
	}
	return nil
}

const messageColumns = `m.id, m.book_id, m.template_id, m.contact_id, m.email, m.name, m.subject, m.status, m.detail,
	m.provider_message_id, m.created_at, m.sent_at, m.delivered_at, m.opened_at, m.clicked_at, m.bounced_at`

func scanMessage(row pgx.Row) (Message, error) {
	var m Message
	err := row.Scan(&m.ID, &m.BookID, &m.TemplateID, &m.To.ContactID, &m.To.Email, &m.To.Name, &m.Subject, &m.Status, &m.Detail,
		&m.ProviderMessageID, &m.CreatedAt, &m.SentAt, &m.DeliveredAt, &m.OpenedAt, &m.ClickedAt, &m.BouncedAt)
	return m, err
}

// Get reads one message and the provider's reports of it (viewer of its
// book's team).
func (s *Service) Get(ctx context.Context, actor *auth.Actor, id uuid.UUID) (Detailed, error) {
	var teamID uuid.UUID
	var d Detailed
	row := s.db.QueryRow(ctx, `SELECT b.team_id, `+messageColumns+`
		FROM transactional_messages m JOIN book_teams b ON b.book_id = m.book_id WHERE m.id = $1`, id)
	err := row.Scan(&teamID, &d.ID, &d.BookID, &d.TemplateID, &d.To.ContactID, &d.To.Email, &d.To.Name, &d.Subject, &d.Status,
		&d.Detail, &d.ProviderMessageID, &d.CreatedAt, &d.SentAt, &d.DeliveredAt, &d.OpenedAt, &d.ClickedAt, &d.BouncedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Detailed{}, errNotFound
	}
	if err != nil {
		return Detailed{}, err
	}
	if err := actor.Require(ctx, teamID, auth.RoleViewer, errNotFound); err != nil {
		return Detailed{}, err
	}
	rows, err := s.db.Query(ctx, `SELECT kind, detail, occurred_at FROM transactional_events
		WHERE message_id = $1 ORDER BY occurred_at, provider_event_id LIMIT 1000`, id)
	if err != nil {
		return Detailed{}, err
	}
	d.Events, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) {
		var e Event
		err := r.Scan(&e.Kind, &e.Detail, &e.OccurredAt)
		return e, err
	})
	if d.Events == nil {
		d.Events = []Event{}
	}
	return d, err
}

var errBadCursor = apperr.Invalidf("`cursor` is not valid: send back meta.next_cursor of the previous page as it was given.")

// List pages the book's messages, newest first (viewer); next is the
// cursor of the following page, "" on the last.
func (s *Service) List(ctx context.Context, sc access.Scope, f Filter) (items []Message, next string, err error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return nil, "", err
	}
	if f.Status != "" {
		if _, err := enum.Parse(Statuses, "The query parameter status", string(f.Status)); err != nil {
			return nil, "", err
		}
	}
	limit := f.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	if limit < 1 || limit > MaxLimit {
		return nil, "", apperr.Invalidf("`limit` must be from 1 to %d.", MaxLimit)
	}
	var before *uuid.UUID
	if f.Cursor != "" {
		id, err := uuid.Parse(f.Cursor)
		if err != nil {
			return nil, "", errBadCursor
		}
		before = &id
	}
	args := pgx.NamedArgs{"book": sc.Book.ID, "limit": limit + 1}
	where := `m.book_id = @book`
	if f.Status != "" {
		where += ` AND m.status = @status`
		args["status"] = string(f.Status)
	}
	if f.TemplateID != nil {
		where += ` AND m.template_id = @template`
		args["template"] = *f.TemplateID
	}
	if before != nil {
		where += ` AND m.id < @before`
		args["before"] = *before
	}
	rows, err := s.db.Query(ctx, `SELECT `+messageColumns+` FROM transactional_messages m WHERE `+where+`
		ORDER BY m.id DESC LIMIT @limit`, args)
	if err != nil {
		return nil, "", err
	}
	items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Message, error) { return scanMessage(r) })
	if err != nil {
		return nil, "", err
	}
	if len(items) > limit {
		items = items[:limit]
		next = items[limit-1].ID.String()
	}
	return items, next, nil
}
