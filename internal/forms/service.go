package forms

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
)

// SenderSource gives a book's sending settings (campaigns.Runner and
// campaigns.Service both do).
type SenderSource interface {
	BookSender(ctx context.Context, bookID uuid.UUID) (campaigns.BookSender, bool, error)
}

// Queue enqueues a job in the caller's transaction (the River client,
// jobs.Client).
type Queue interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Deps are what the service works with.
type Deps struct {
	DB         postgres.Pool
	Books      *books.Service
	Contacts   *contacts.Service
	Senders    SenderSource
	Suppressor suppression.Suppressor
	// Mail sends the confirmation emails through the provider.
	Mail mailer.Sender
	// Queue takes the confirmation email jobs, in the submission's
	// transaction.
	Queue Queue
	// PublicBaseURL makes the confirmation link absolute.
	PublicBaseURL string
	Now           func() time.Time
	Log           *slog.Logger
}

// Service holds the rules of forms, submissions and consents.
type Service struct {
	d  Deps
	st store
}

// NewService wires the service.
func NewService(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{d: d}
}

// List returns the scope's book's forms sorted by name (viewer).
func (s *Service) List(ctx context.Context, sc access.Scope) ([]Form, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return nil, err
	}
	return s.st.list(ctx, s.d.DB, sc.Book.ID)
}

// Get returns a form of the actor's team (viewer).
func (s *Service) Get(ctx context.Context, actor *auth.Actor, id uuid.UUID) (Form, error) {
	f, _, err := s.owned(ctx, actor, id, auth.RoleViewer)
	return f, err
}

// owned loads a form and checks the actor's role in its team; a form of
// another team is NOT_FOUND.
func (s *Service) owned(ctx context.Context, actor *auth.Actor, id uuid.UUID, min auth.Role) (Form, books.Book, error) {
	f, err := s.st.form(ctx, s.d.DB, id, false)
	if err != nil {
		return Form{}, books.Book{}, err
	}
	b, err := s.d.Books.Book(ctx, f.BookID)
	if err != nil {
		return Form{}, books.Book{}, err
	}
	return f, b, actor.Require(ctx, b.TeamID, min, errFormNotFound)
}

// Create adds a form to the scope's book (member).
func (s *Service) Create(ctx context.Context, sc access.Scope, in Input) (Form, error) {
	if err := sc.Require(ctx, auth.RoleMember); err != nil {
		return Form{}, err
	}
	bookID, actor := sc.Book.ID, sc.Actor
	now := s.d.Now().UTC().Truncate(time.Microsecond)
	f := Form{
		ID: uuid.New(), BookID: bookID, Name: in.Name, Fields: in.Fields, LabelIDs: in.LabelIDs, DoubleOptIn: true,
		ConsentText: in.ConsentText, SuccessMessage: in.SuccessMessage, RedirectURL: in.RedirectURL, Enabled: true,
		CreatedAt: now, UpdatedAt: now,
	}
	if in.DoubleOptIn != nil {
		f.DoubleOptIn = *in.DoubleOptIn
	}
	if in.Enabled != nil {
		f.Enabled = *in.Enabled
	}
	if err := s.check(ctx, &f); err != nil {
		return Form{}, err
	}
	return s.st.insert(ctx, s.d.DB, f, actor.CreatedBy())
}

// Update patches a form (member).
func (s *Service) Update(ctx context.Context, actor *auth.Actor, id uuid.UUID, p Patch) (Form, error) {
	if _, _, err := s.owned(ctx, actor, id, auth.RoleMember); err != nil {
		return Form{}, err
	}
	var out Form
	err := postgres.InTx(ctx, s.d.DB, func(tx *postgres.Tx) error {
		f, err := s.st.form(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if err := p.apply(&f); err != nil {
			return err
		}
		if err := s.check(ctx, &f); err != nil {
			return err
		}
		f.UpdatedAt = s.d.Now().UTC()
		out, err = s.st.update(ctx, tx, f)
		return err
	})
	return out, err
}

// Delete removes a form with its held submissions (member); the consents
// it collected stay, without their form.
func (s *Service) Delete(ctx context.Context, actor *auth.Actor, id uuid.UUID) error {
	if _, _, err := s.owned(ctx, actor, id, auth.RoleMember); err != nil {
		return err
	}
	return s.st.delete(ctx, s.d.DB, id)
}

// check normalizes and validates a form against its book: custom keys,
// labels of the book, and email settings for a double opt-in.
func (s *Service) check(ctx context.Context, f *Form) error {
	f.normalize()
	keys, err := s.d.Contacts.CustomFieldKeys(ctx, f.BookID)
	if err != nil {
		return err
	}
	if err := f.validate(keys); err != nil {
		return err
	}
	if len(f.LabelIDs) > 0 {
		known, err := s.d.Books.LabelIDs(ctx, f.BookID, f.LabelIDs)
		if err != nil {
			return err
		}
		for i, id := range f.LabelIDs {
			if !containsID(known, id) {
				return apperr.Invalidf("`label_ids[%d]` is not a label of this book.", i)
			}
		}
		f.LabelIDs = dedupe(f.LabelIDs)
	}
	if f.DoubleOptIn {
		if _, ok, err := s.d.Senders.BookSender(ctx, f.BookID); err != nil {
			return err
		} else if !ok {
			return apperr.Invalidf("`double_opt_in` needs the book's email settings (a sender email and a mailer API key) to send the confirmation email; save them first, or turn double_opt_in off.")
		}
	}
	return nil
}

// Consents lists the consent records of a contact, newest first (viewer).
func (s *Service) Consents(ctx context.Context, actor *auth.Actor, contactID uuid.UUID) ([]Consent, error) {
	if _, err := s.d.Contacts.Get(ctx, actor, contactID); err != nil {
		return nil, err
	}
	return s.st.consents(ctx, s.d.DB, contactID)
}

// PublicForm is a form as its hosted page shows it: the form and the
// book's topics when it asks for them.
type PublicForm struct {
	Form   Form
	Topics []books.Label
	// Custom holds the book's custom field definitions by form key
	// (custom.<key>): their names label the inputs, their types type them.
	Custom map[string]books.Field
}

// Hosted loads an enabled form for its hosted page; unknown or disabled:
// NOT_FOUND. BuiltinLabel names the built-in fields.
func (s *Service) Hosted(ctx context.Context, id uuid.UUID) (PublicForm, error) {
	f, err := s.st.form(ctx, s.d.DB, id, false)
	if err != nil {
		return PublicForm{}, err
	}
	if !f.Enabled {
		return PublicForm{}, errFormNotFound
	}
	out := PublicForm{Form: f, Custom: map[string]books.Field{}}
	defs, err := s.d.Books.FieldsOf(ctx, f.BookID)
	if err != nil {
		return PublicForm{}, err
	}
	for _, d := range defs {
		out.Custom[customPrefix+d.Key] = d
	}
	if f.has(KeyTopics) {
		if out.Topics, err = s.d.Books.PublicLabels(ctx, f.BookID); err != nil {
			return PublicForm{}, err
		}
	}
	return out, nil
}

// BuiltinLabel is the label the hosted page shows for a built-in field
// key, or "" for a custom one.
func BuiltinLabel(key string) string {
	for _, b := range builtinFields {
		if b.Key == key {
			return b.Label
		}
	}
	return ""
}

func containsID(ids []uuid.UUID, id uuid.UUID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func dedupe(ids []uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(ids))
	for _, id := range ids {
		if !containsID(out, id) {
			out = append(out, id)
		}
	}
	return out
}
