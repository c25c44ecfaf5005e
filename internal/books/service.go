package books

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/validate"
)

// Service holds the rules of books, labels and field definitions.
type Service struct {
	db     postgres.Pool
	outbox *events.Outbox
	now    func() time.Time
	st     store
}

// NewService wires the service; outbox takes the book.* events.
func NewService(db postgres.Pool, outbox *events.Outbox, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{db: db, outbox: outbox, now: now}
}

// ErrBookForbidden answers an X-Book-ID naming a book the caller's team
// does not own (or no book at all: the two are not told apart).
var ErrBookForbidden = apperr.Forbiddenf("The book in X-Book-ID does not belong to your team.")

// List returns the team's books.
func (s *Service) List(ctx context.Context, actor *auth.Actor, teamID uuid.UUID) ([]Book, error) {
	if err := actor.Require(ctx, teamID, auth.RoleViewer, apperr.NotFoundf("No team with this id.")); err != nil {
		return nil, err
	}
	return s.st.books(ctx, s.db, teamID)
}

// ContactCount is the number of contacts in a book the caller has
// already been given access to (Resolve).
func (s *Service) ContactCount(ctx context.Context, bookID uuid.UUID) (int64, error) {
	return s.st.contactCount(ctx, s.db, bookID)
}

// Get returns the resolved book with its contact count.
func (s *Service) Get(ctx context.Context, actor *auth.Actor, b Book) (Book, error) {
	n, err := s.ContactCount(ctx, b.ID)
	b.ContactCount = n
	return b, err
}

// Create adds a book to a team (member); emits book.created.
func (s *Service) Create(ctx context.Context, actor *auth.Actor, in CreateInput) (Book, error) {
	if in.TeamID == uuid.Nil {
		return Book{}, apperr.Invalidf("`team_id` is required.")
	}
	if err := actor.Require(ctx, in.TeamID, auth.RoleMember, apperr.NotFoundf("No team with this id.")); err != nil {
		return Book{}, err
	}
	b := Book{
		TeamID: in.TeamID, Name: strings.TrimSpace(in.Name), Color: DefaultColor, Icon: DefaultIcon,
		EnforceUniqueEmails: in.EnforceUniqueEmails, CreatedBy: actor.CreatedBy(),
	}
	if in.Color != nil {
		b.Color = *in.Color
	}
	if in.Icon != nil {
		b.Icon = *in.Icon
	}
	if err := validate.Struct(b); err != nil {
		return Book{}, err
	}
	// Two books created at once may race for a slug: try again on a clash.
	for attempt := 0; ; attempt++ {
		var out Book
		err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
			slug, err := s.st.freeSlug(ctx, tx, b.TeamID, Slugify(b.Name))
			if err != nil {
				return err
			}
			b.Slug = slug
			if out, err = s.st.insertBook(ctx, tx, b); err != nil {
				return err
			}
			if err := recordBook(ctx, tx, actor, "book.created", out); err != nil {
				return err
			}
			return s.outbox.Append(ctx, tx, s.now(), events.Event{Type: events.BookCreated, TeamID: out.TeamID, BookID: &out.ID, Data: out})
		})
		if postgres.IsUniqueViolation(err, "books_team_slug_key") && attempt < 5 {
			continue
		}
		return out, err
	}
}

// Update changes a book (member). The slug stays as created so links
// that use it keep working after a rename.
func (s *Service) Update(ctx context.Context, actor *auth.Actor, b Book, p Patch) (Book, error) {
	if err := require(ctx, actor, b, auth.RoleMember); err != nil {
		return Book{}, err
	}
	if !p.Name.Set && !p.Color.Set && !p.Icon.Set && !p.EnforceUniqueEmails.Set {
		return Book{}, apperr.Invalidf("Send at least one of name, color, icon, enforce_unique_emails.")
	}
	if p.Name.Null || p.Color.Null || p.Icon.Null || p.EnforceUniqueEmails.Null {
		return Book{}, apperr.Invalidf("Book fields cannot be null.")
	}
	p.Name.ApplyTo(&b.Name)
	b.Name = strings.TrimSpace(b.Name)
	p.Color.ApplyTo(&b.Color)
	p.Icon.ApplyTo(&b.Icon)
	p.EnforceUniqueEmails.ApplyTo(&b.EnforceUniqueEmails)
	if err := validate.Struct(b); err != nil {
		return Book{}, err
	}
	return s.st.updateBook(ctx, s.db, b)
}

// Delete removes a book and everything in it (admin); emits book.deleted.
func (s *Service) Delete(ctx context.Context, actor *auth.Actor, b Book) error {
	if err := require(ctx, actor, b, auth.RoleAdmin); err != nil {
		return err
	}
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.st.deleteBook(ctx, tx, b.ID); err != nil {
			return err
		}
		if err := recordBook(ctx, tx, actor, "book.deleted", b); err != nil {
			return err
		}
		return s.outbox.Append(ctx, tx, s.now(), events.Event{
			Type: events.BookDeleted, TeamID: b.TeamID, BookID: &b.ID, Data: map[string]uuid.UUID{"id": b.ID},
		})
	})
}

// Book loads a book without an actor: for the public flows (a sign-up
// form, a confirmation or preference link) whose authority is the form or
// the token. NOT_FOUND when it does not exist.
func (s *Service) Book(ctx context.Context, id uuid.UUID) (Book, error) {
	return s.st.book(ctx, s.db, id, false)
}

// PublicLabels lists the book's public labels (its topics) in their
// order, for the public pages.
func (s *Service) PublicLabels(ctx context.Context, bookID uuid.UUID) ([]Label, error) {
	all, err := s.st.labels(ctx, s.db, bookID)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, l := range all {
		if l.Public {
			out = append(out, l)
		}
	}
	return out, nil
}

// LabelIDs returns which of ids are labels of the book.
func (s *Service) LabelIDs(ctx context.Context, bookID uuid.UUID, ids []uuid.UUID) ([]uuid.UUID, error) {
	all, err := s.st.labels(ctx, s.db, bookID)
	if err != nil {
		return nil, err
	}
	var out []uuid.UUID
	for _, l := range all {
		for _, id := range ids {
			if l.ID == id {
				out = append(out, id)
				break
			}
		}
	}
	return out, nil
}

// Labels lists a book's labels in their order.
func (s *Service) Labels(ctx context.Context, actor *auth.Actor, b Book) ([]Label, error) {
	if err := require(ctx, actor, b, auth.RoleViewer); err != nil {
		return nil, err
	}
	return s.st.labels(ctx, s.db, b.ID)
}

// CreateLabel appends a label to the book (member).
func (s *Service) CreateLabel(ctx context.Context, actor *auth.Actor, b Book, in LabelInput) (Label, error) {
	if err := require(ctx, actor, b, auth.RoleMember); err != nil {
		return Label{}, err
	}
	l := Label{BookID: b.ID, Name: strings.TrimSpace(in.Name), Color: DefaultLabelColor, Public: in.Public, Description: strings.TrimSpace(in.Description)}
	if in.Color != nil {
		l.Color = *in.Color
	}
	if err := validate.Struct(l); err != nil {
		return Label{}, err
	}
	var out Label
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		var err error
		out, err = s.st.insertLabel(ctx, tx, l)
		return err
	})
	return out, err
}

// UpdateLabel changes a label (member).
func (s *Service) UpdateLabel(ctx context.Context, actor *auth.Actor, b Book, labelID uuid.UUID, p LabelPatch) (Label, error) {
	if err := require(ctx, actor, b, auth.RoleMember); err != nil {
		return Label{}, err
	}
	if !p.Name.Set && !p.Color.Set && !p.SortOrder.Set && !p.Public.Set && !p.Description.Set {
		return Label{}, apperr.Invalidf("Send at least one of name, color, sort_order, public, description.")
	}
	if p.Name.Null || p.Color.Null || p.SortOrder.Null || p.Public.Null || p.Description.Null {
		return Label{}, apperr.Invalidf("Label fields cannot be null.")
	}
	l, err := s.st.label(ctx, s.db, b.ID, labelID)
	if err != nil {
		return Label{}, err
	}
	p.Name.ApplyTo(&l.Name)
	l.Name = strings.TrimSpace(l.Name)
	p.Color.ApplyTo(&l.Color)
	p.SortOrder.ApplyTo(&l.SortOrder)
	p.Public.ApplyTo(&l.Public)
	p.Description.ApplyTo(&l.Description)
	l.Description = strings.TrimSpace(l.Description)
	if err := validate.Struct(l); err != nil {
		return Label{}, err
	}
	return s.st.updateLabel(ctx, s.db, l)
}

// DeleteLabel removes a label from the book and its contacts (member).
func (s *Service) DeleteLabel(ctx context.Context, actor *auth.Actor, b Book, labelID uuid.UUID) error {
	if err := require(ctx, actor, b, auth.RoleMember); err != nil {
		return err
	}
	return s.st.deleteLabel(ctx, s.db, b.ID, labelID)
}

// Fields lists a book's custom field definitions.
func (s *Service) Fields(ctx context.Context, actor *auth.Actor, b Book) ([]Field, error) {
	if err := require(ctx, actor, b, auth.RoleViewer); err != nil {
		return nil, err
	}
	return s.st.fields(ctx, s.db, b.ID)
}

// LabelsOf and FieldsOf return the labels and custom field definitions
// of a book the caller has already been given access to (Access): what
// the rules of a segment may name, checked when a rule is compiled.
func (s *Service) LabelsOf(ctx context.Context, bookID uuid.UUID) ([]Label, error) {
	return s.st.labels(ctx, s.db, bookID)
}

// FieldsOf: see LabelsOf.
func (s *Service) FieldsOf(ctx context.Context, bookID uuid.UUID) ([]Field, error) {
	return s.st.fields(ctx, s.db, bookID)
}

// FieldInput is a new custom field definition.
type FieldInput struct {
	Key  string    `json:"key"`
	Name string    `json:"name"`
	Type FieldType `json:"type"`
}

// CreateField defines a custom field in the book (member).
func (s *Service) CreateField(ctx context.Context, actor *auth.Actor, b Book, in FieldInput) (Field, error) {
	if err := require(ctx, actor, b, auth.RoleMember); err != nil {
		return Field{}, err
	}
	f := Field{BookID: b.ID, Key: in.Key, Name: strings.TrimSpace(in.Name), Type: in.Type}
	if err := validate.Struct(f); err != nil {
		return Field{}, err
	}
	return s.st.insertField(ctx, s.db, f)
}

// DeleteField removes a definition and every contact's value of it (member).
func (s *Service) DeleteField(ctx context.Context, actor *auth.Actor, b Book, fieldID uuid.UUID) error {
	if err := require(ctx, actor, b, auth.RoleMember); err != nil {
		return err
	}
	return s.st.deleteField(ctx, s.db, b.ID, fieldID)
}

// recordBook writes the team's audit entry of a change to book b in tx.
func recordBook(ctx context.Context, tx postgres.DB, actor *auth.Actor, action string, b Book) error {
	return audit.Record(ctx, tx, audit.Entry{
		TeamID: b.TeamID, Actor: audit.From(actor), Action: action, TargetType: "book", TargetID: b.ID.String(),
		Details: map[string]any{"name": b.Name, "slug": b.Slug},
	})
}

// require checks that the actor holds at least min in the book's team.
// The actor's membership was proven when the book was resolved, and its
// role memoised then, so this costs no query.
func require(ctx context.Context, actor *auth.Actor, b Book, min auth.Role) error {
	return actor.Require(ctx, b.TeamID, min, errBookNotFound)
}
