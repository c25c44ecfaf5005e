package segments

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Books is what the service needs of books: the labels and custom fields
// a rule may name (books.Service). Access to a book comes with the
// request's scope (access.Scope).
type Books interface {
	LabelsOf(ctx context.Context, bookID uuid.UUID) ([]books.Label, error)
	FieldsOf(ctx context.Context, bookID uuid.UUID) ([]books.Field, error)
}

// Campaigns is what the service needs of the book's campaigns: which ids
// a rule names are campaigns of the book, and which campaign's audience
// names a segment (campaigns.Catalog).
type Campaigns interface {
	InBook(ctx context.Context, db postgres.DB, bookID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]bool, error)
	AudienceOf(ctx context.Context, db postgres.DB, segmentID uuid.UUID) (campaign string, err error)
}

// Service holds the rules of segments. Viewers of a team read and preview
// them; members write them.
type Service struct {
	db        postgres.Pool
	books     Books
	campaigns Campaigns
	now       func() time.Time
	timeout   time.Duration
	st        store
}

// Deps are what the service works with.
type Deps struct {
	DB        postgres.Pool
	Books     Books
	Campaigns Campaigns
	Now       func() time.Time // nil: time.Now
	// Timeout bounds each statement that evaluates a rule (zero:
	// DefaultStatementTimeout).
	Timeout time.Duration
}

// NewService wires the service.
func NewService(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Timeout <= 0 {
		d.Timeout = DefaultStatementTimeout
	}
	return &Service{db: d.DB, books: d.Books, campaigns: d.Campaigns, now: d.Now, timeout: d.Timeout}
}

// List returns the book's segments sorted by name (viewer).
func (s *Service) List(ctx context.Context, sc access.Scope) ([]Segment, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return nil, err
	}
	return s.st.list(ctx, s.db, sc.Book.ID)
}

// Get returns a segment with how many contacts match it now (viewer). The
// scope's book (X-Book-ID, when sent) must be the segment's book.
func (s *Service) Get(ctx context.Context, sc access.Scope, id uuid.UUID) (Segment, error) {
	seg, err := s.segmentFor(ctx, s.db, sc, id, auth.RoleViewer, false)
	if err != nil {
		return Segment{}, err
	}
	p, err := s.compile(ctx, seg.BookID, seg.Rule, true, seg.Name)
	if err != nil {
		return Segment{}, err
	}
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		return p.Within(ctx, tx, func() error {
			n, err := s.st.count(ctx, tx, p)
			seg.ContactCount = &n
			return err
		})
	})
	return seg, err
}

// Create saves a segment in the book (member).
func (s *Service) Create(ctx context.Context, sc access.Scope, in Input) (Segment, error) {
	if err := sc.Require(ctx, auth.RoleMember); err != nil {
		return Segment{}, err
	}
	b := sc.Book
	if in.Name == nil {
		return Segment{}, apperr.Invalidf("`name` is required: 1 to %d characters, unique in the book.", MaxName)
	}
	if in.Rule == nil {
		return Segment{}, apperr.Invalidf("`rule` is required: a group such as {\"all\":[...]} or a condition.")
	}
	seg := Segment{BookID: b.ID, Rule: *in.Rule, CreatedBy: sc.Actor.CreatedBy(), CreatedAt: s.now().UTC()}
	if err := seg.apply(in); err != nil {
		return Segment{}, err
	}
	if _, err := s.compile(ctx, b.ID, seg.Rule, false, "`rule`"); err != nil {
		return Segment{}, err
	}
	return s.st.insert(ctx, s.db, seg)
}

// Update changes the name, description or rule of a segment (member).
func (s *Service) Update(ctx context.Context, sc access.Scope, id uuid.UUID, p Patch) (Segment, error) {
	if p.Name == nil && p.Description == nil && p.Rule == nil {
		return Segment{}, apperr.Invalidf("Send at least one field to change: name, description, rule.")
	}
	var out Segment
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		seg, err := s.segmentFor(ctx, tx, sc, id, auth.RoleMember, true)
		if err != nil {
			return err
		}
		if err := seg.apply(p); err != nil {
			return err
		}
		if p.Rule != nil {
			seg.Rule = *p.Rule
			if _, err := s.compile(ctx, seg.BookID, seg.Rule, false, "`rule`"); err != nil {
				return err
			}
		}
		out, err = s.st.update(ctx, tx, seg, s.now().UTC())
		return err
	})
	return out, err
}

// Delete removes a segment (member); one that a campaign's audience names
// is a conflict naming the campaign.
func (s *Service) Delete(ctx context.Context, sc access.Scope, id uuid.UUID) error {
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if _, err := s.segmentFor(ctx, tx, sc, id, auth.RoleMember, true); err != nil {
			return err
		}
		// A campaign that comes to name it meanwhile is caught by the
		// audience key when the row goes (store.remove).
		name, err := s.campaigns.AudienceOf(ctx, tx, id)
		if err != nil {
			return err
		}
		if name != "" {
			return apperr.New(apperr.Conflict, "The campaign %q uses this segment as its audience; give it another audience (or none) before deleting the segment.", name)
		}
		return s.st.remove(ctx, tx, id)
	})
}

// Compile checks a rule against the book (viewer) and compiles it; it is
// what a preview evaluates.
func (s *Service) Compile(ctx context.Context, sc access.Scope, r Rule) (*Predicate, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return nil, err
	}
	return s.compile(ctx, sc.Book.ID, r, false, "`rule`")
}

// Members compiles the rule of a segment of the book (viewer), for the
// statements that act on its members: a segment of another book is not
// found.
func (s *Service) Members(ctx context.Context, sc access.Scope, segmentID uuid.UUID) (*Predicate, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return nil, err
	}
	b := sc.Book
	seg, _, err := s.st.byID(ctx, s.db, segmentID, false)
	if err != nil || seg.BookID != b.ID {
		return nil, errNotInBook(err)
	}
	return s.compile(ctx, b.ID, seg.Rule, true, fmt.Sprintf("The segment %q", seg.Name))
}

// Audience is a segment as a campaign's audience: its name and its rule,
// compiled for the book.
type Audience struct {
	Name      string
	Predicate *Predicate
}

// AudienceOf compiles a segment of the book for a campaign's pass,
// without an actor: the campaign was allowed to name it when it was set.
func (s *Service) AudienceOf(ctx context.Context, db postgres.DB, bookID, segmentID uuid.UUID) (Audience, error) {
	seg, _, err := s.st.byID(ctx, db, segmentID, false)
	if err != nil || seg.BookID != bookID {
		return Audience{}, errNotInBook(err)
	}
	p, err := s.compile(ctx, bookID, seg.Rule, true, fmt.Sprintf("The segment %q", seg.Name))
	return Audience{Name: seg.Name, Predicate: p}, err
}

// InBook reports whether a segment belongs to the book (a campaign's
// audience must).
func (s *Service) InBook(ctx context.Context, db postgres.DB, bookID, segmentID uuid.UUID) (bool, error) {
	seg, _, err := s.st.byID(ctx, db, segmentID, false)
	if apperr.Is(err, apperr.NotFound) {
		return false, nil
	}
	return err == nil && seg.BookID == bookID, err
}

func errNotInBook(err error) error {
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		return err
	}
	return apperr.NotFoundf("No segment with this id in the book.")
}

// segmentFor loads a segment addressed by id: NOT_FOUND outside the
// caller's team or outside the scope's book (X-Book-ID, when sent), then
// the role.
func (s *Service) segmentFor(ctx context.Context, db postgres.DB, sc access.Scope, id uuid.UUID, min auth.Role, lock bool) (Segment, error) {
	seg, teamID, err := s.st.byID(ctx, db, id, lock)
	if err != nil {
		return Segment{}, err
	}
	if sc.InBook() && sc.Book.ID != seg.BookID {
		return Segment{}, errSegmentNotFound
	}
	if err := sc.Actor.Require(ctx, teamID, auth.RoleViewer, errSegmentNotFound); err != nil {
		return Segment{}, err
	}
	return seg, sc.Actor.Require(ctx, teamID, min, errSegmentNotFound)
}

// apply sets the name and description of a segment from an input.
func (seg *Segment) apply(in Input) error {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" || utf8.RuneCountInString(name) > MaxName {
			return apperr.Invalidf("`name` must be 1 to %d characters long.", MaxName)
		}
		seg.Name = name
	}
	if in.Description != nil {
		if utf8.RuneCountInString(*in.Description) > MaxDescription {
			return apperr.Invalidf("`description` may be at most %d characters long.", MaxDescription)
		}
		seg.Description = *in.Description
	}
	return nil
}

// compile loads what the rule names from the book and compiles it.
// lenient is for saved rules (see compiler); what names the rule in the
// error of a statement it makes too slow.
func (s *Service) compile(ctx context.Context, bookID uuid.UUID, r Rule, lenient bool, what string) (*Predicate, error) {
	cat := &catalog{bookID: bookID, fields: map[string]customField{}, labels: map[uuid.UUID]bool{}}
	labelRefs, campaignRefs := map[uuid.UUID]bool{}, map[uuid.UUID]bool{}
	references(r, labelRefs, campaignRefs)
	fields, err := s.books.FieldsOf(ctx, bookID)
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		cat.fields[f.Key] = customField{id: f.ID, typ: string(f.Type)}
	}
	if len(labelRefs) > 0 {
		labels, err := s.books.LabelsOf(ctx, bookID)
		if err != nil {
			return nil, err
		}
		for _, l := range labels {
			cat.labels[l.ID] = labelRefs[l.ID]
		}
	}
	cat.campaigns = map[uuid.UUID]bool{}
	if len(campaignRefs) > 0 {
		ids := make([]uuid.UUID, 0, len(campaignRefs))
		for id := range campaignRefs {
			ids = append(ids, id)
		}
		if cat.campaigns, err = s.campaigns.InBook(ctx, s.db, bookID, ids); err != nil {
			return nil, err
		}
	}
	c := compiler{cat: cat, now: s.now().UTC(), lenient: lenient}
	root, err := c.compile(r)
	if err != nil {
		return nil, err
	}
	return &Predicate{root: root, bookID: bookID, timeout: s.timeout, what: what}, nil
}
