package contacts

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/enum"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Service holds the rules of contacts. Viewers of a team read its
// contacts; members (and API keys) write them.
type Service struct {
	db     postgres.Pool
	books  *books.Service
	outbox *events.Outbox
	marks  SuppressionMarks
	now    func() time.Time
	st     store
}

// SuppressionMarks keeps a contact's suppressed mark true to its addresses
// after a write changes them (package suppression holds the list and the
// rule: a contact is suppressed once every address it holds is).
type SuppressionMarks interface {
	Remark(ctx context.Context, db postgres.DB, bookID, contactID uuid.UUID) error
	QueueRemark(b *pgx.Batch, bookID, contactID uuid.UUID)
}

// Outbox is where the service writes its events, for the services that
// work on its contacts (imports) and write events of their own.
func (s *Service) Outbox() *events.Outbox {
	if s == nil {
		return nil
	}
	return s.outbox
}

// Deps are what the service works with.
type Deps struct {
	DB postgres.Pool
	// Books counts a book's contacts.
	Books *books.Service
	// Outbox takes the contact.* events.
	Outbox *events.Outbox
	Marks  SuppressionMarks
	Now    func() time.Time // nil: time.Now
}

// NewService wires the service.
func NewService(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{db: d.DB, books: d.Books, outbox: d.Outbox, marks: d.Marks, now: d.Now}
}

// Limits of the API.
const (
	// MaxBulkIDs bounds contact_ids of every bulk request.
	MaxBulkIDs = 10000
	// DefaultPageSize and MaxPageSize bound a list page.
	DefaultPageSize = 50
	MaxPageSize     = 200
	// maxQuery bounds the search text.
	maxQuery = 200
	// maxFieldValue bounds a custom field value.
	maxFieldValue = 10000
)

// Filter selects and orders a page of a book's contacts.
type Filter struct {
	Q       string     // case-insensitive substring of names, company, emails
	LabelID *uuid.UUID // only contacts carrying this label
	Starred *bool      // only (un)starred contacts
	Sort    string     // created_at, updated_at, name, each optionally prefixed by -; default -created_at
	Limit   int
	Offset  int
	Cursor  string // meta.next_cursor of a previous page: the page after it (Offset must be 0)
	// Segment, when set, keeps only the contacts a segment's rule selects.
	Segment Condition

	ids []uuid.UUID // only these contacts (a segment's members, materialised)
}

// Condition is a compiled rule that narrows a statement over a book's
// contacts (segments.Predicate): Where writes it for the contacts row
// alias with its parameters appended to args; statements that evaluate it
// run inside Within, which bounds them.
type Condition interface {
	Where(alias string, args []any) (string, []any)
	Within(ctx context.Context, tx postgres.DB, fn func() error) error
}

// Page is a page of a book's contacts.
type Page struct {
	Items []Contact
	Total int64 // how many match the filter in all
	// NextCursor continues the walk after this page in the same sort
	// (Filter.Cursor); empty on the last page.
	NextCursor string
}

// List returns a page of the book's contacts and how many match in all.
// Without filters the total is the book's maintained contact count, so a
// 100k-contact book is never counted row by row on a plain listing.
func (s *Service) List(ctx context.Context, sc access.Scope, f Filter) (Page, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return Page{}, err
	}
	b := sc.Book
	var err error
	f.Q = strings.TrimSpace(f.Q)
	if utf8.RuneCountInString(f.Q) > maxQuery {
		return Page{}, apperr.Invalidf("The query parameter q may be at most %d characters long.", maxQuery)
	}
	var after *position
	if f.Cursor != "" {
		if f.Offset > 0 {
			return Page{}, apperr.Invalidf("Send either cursor or offset, not both: a cursor already says where the page starts.")
		}
		p, err := decodeCursor(f.Cursor, f.Sort)
		if err != nil {
			return Page{}, err
		}
		f.Sort, after = p.sort, &p
	}
	if f.Sort == "" {
		f.Sort = "-created_at"
	}
	if _, err := enum.Parse(Sorts, "The query parameter sort", f.Sort); err != nil {
		return Page{}, err
	}
	if f.Limit <= 0 {
		f.Limit = DefaultPageSize
	}
	f.Limit = min(f.Limit, MaxPageSize)
	f.Offset = max(f.Offset, 0)

	// The total comes first: it lets a deep page be read from the nearer
	// end of the index. Unfiltered it is the book's counter.
	var (
		total int64
		pg    page
	)
	switch {
	case f.Segment != nil:
		// The rule is evaluated once, bounded as every evaluation of a
		// rule is; the count and the page then read its members by id.
		if f.ids, err = s.members(ctx, b.ID, f.Segment); err != nil {
			return Page{}, err
		}
		f.Segment = nil
		if f.Q == "" && f.LabelID == nil && f.Starred == nil {
			total = int64(len(f.ids))
		} else if total, err = s.st.count(ctx, s.db, b.ID, f); err != nil {
			return Page{}, err
		}
		pg, err = s.st.list(ctx, s.db, b.ID, f, after, total)
	case f.Q == "" && f.LabelID == nil && f.Starred == nil:
		if total, err = s.books.ContactCount(ctx, b.ID); err == nil {
			pg, err = s.st.list(ctx, s.db, b.ID, f, after, total)
		}
	default:
		if total, err = s.st.count(ctx, s.db, b.ID, f); err == nil {
			pg, err = s.st.list(ctx, s.db, b.ID, f, after, total)
		}
	}
	if err != nil {
		return Page{}, err
	}
	out := Page{Items: pg.items, Total: total}
	if pg.lastKey != nil {
		out.NextCursor = encodeCursor(f.Sort, pg.lastKey, pg.items[len(pg.items)-1].ID)
	}
	return out, nil
}

// Get returns a contact of the actor's team.
func (s *Service) Get(ctx context.Context, actor *auth.Actor, id uuid.UUID) (Contact, error) {
	c, teamID, err := s.st.byID(ctx, s.db, id, false)
	if err != nil {
		return Contact{}, err
	}
	return c, actor.Require(ctx, teamID, auth.RoleViewer, errContactNotFound)
}

// Create adds a contact to the scope's book (member); emits
// contact.created.
func (s *Service) Create(ctx context.Context, sc access.Scope, in CreateInput) (Contact, error) {
	if err := sc.Require(ctx, auth.RoleMember); err != nil {
		return Contact{}, err
	}
	related := len(relatedIDs(in.Relationships)) > 0
	teamID := sc.Book.TeamID
	c, err := in.contact(sc.Book.ID, sc.Actor.CreatedBy())
	if err != nil {
		return Contact{}, err
	}
	// The contact is complete before it is written (PostgreSQL keeps
	// microseconds), so its event is built without reading it back.
	c.ID = uuid.New()
	c.CreatedAt = s.now().UTC().Truncate(time.Microsecond)
	c.UpdatedAt = c.CreatedAt
	batch := &pgx.Batch{}
	s.st.insert(batch, c)
	if len(c.Emails) > 0 {
		s.marks.QueueRemark(batch, c.BookID, c.ID)
	}
	committed, err := s.outbox.Queue(batch, c.CreatedAt, contactEvent(events.ContactCreated, teamID, c))
	if err != nil {
		return Contact{}, err
	}
	if related {
		// The related contacts must be in the book: checked in the
		// transaction that inserts.
		err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
			if err := s.checkRelated(ctx, tx, c.BookID, c.Relationships); err != nil {
				return err
			}
			return tx.SendBatch(ctx, batch).Close()
		})
	} else {
		// One round trip: the insert and its event, in the implicit
		// transaction of the batch.
		err = s.db.SendBatch(ctx, batch).Close()
	}
	if err != nil {
		return Contact{}, s.writeErr(ctx, err, c)
	}
	committed()
	return c, nil
}

// Update applies a patch (member); emits contact.updated with the result.
// The row is locked from read to write so concurrent patches of different
// fields both land.
func (s *Service) Update(ctx context.Context, actor *auth.Actor, id uuid.UUID, p Patch) (Contact, error) {
	var c, out Contact
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		var (
			teamID uuid.UUID
			err    error
		)
		if c, teamID, err = s.st.byID(ctx, tx, id, true); err != nil {
			return err
		}
		if err := actor.Require(ctx, teamID, auth.RoleMember, errContactNotFound); err != nil {
			return err
		}
		if p.PhotoURL != nil {
			return apperr.Invalidf("`photo_url` cannot be set through the API; remove it from the body.")
		}
		if p.empty() {
			return apperr.Invalidf("Send at least one field to change: first_name, last_name, company, job_title, notes, website, time_zone, birthday, starred, emails, phones, addresses, dates, socials, relationships.")
		}
		if p.Starred.Null {
			return apperr.Invalidf("`starred` must be true or false, not null.")
		}
		p.apply(&c)
		c.normalize()
		if err := c.validate(); err != nil {
			return err
		}
		if p.Relationships.Set {
			if err := s.checkRelated(ctx, tx, c.BookID, c.Relationships); err != nil {
				return err
			}
		}
		now := s.now().UTC()
		if out, err = s.st.update(ctx, tx, c, now); err != nil {
			return err
		}
		if p.Emails.Set {
			if err := s.marks.Remark(ctx, tx, c.BookID, c.ID); err != nil {
				return err
			}
		}
		out.Labels, out.CustomFields = c.Labels, c.CustomFields // a patch changes neither
		return s.outbox.Append(ctx, tx, now, contactEvent(events.ContactUpdated, teamID, out))
	})
	return out, s.writeErr(ctx, err, c)
}

// Delete removes a contact (member); emits contact.deleted.
func (s *Service) Delete(ctx context.Context, actor *auth.Actor, id uuid.UUID) error {
	bookID, teamID, err := s.owner(ctx, actor, id, auth.RoleMember)
	if err != nil {
		return err
	}
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		gone, err := s.deleteContacts(ctx, tx, teamID, bookID, []uuid.UUID{id})
		if err != nil {
			return err
		}
		if len(gone) == 0 {
			return errContactNotFound // deleted meanwhile
		}
		return s.outbox.Append(ctx, tx, s.now().UTC(), deletedEvents(teamID, bookID, gone)...)
	})
}

// owner loads the book and team of a contact and checks the actor's role.
func (s *Service) owner(ctx context.Context, actor *auth.Actor, id uuid.UUID, min auth.Role) (bookID, teamID uuid.UUID, err error) {
	bookID, teamID, err = s.st.owner(ctx, s.db, id)
	if err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	return bookID, teamID, actor.Require(ctx, teamID, min, errContactNotFound)
}

// AddLabel tags a contact with a label of its book (member). It reports
// whether the label was new; adding a label twice succeeds silently.
func (s *Service) AddLabel(ctx context.Context, actor *auth.Actor, contactID, labelID uuid.UUID) (bool, error) {
	bookID, teamID, err := s.owner(ctx, actor, contactID, auth.RoleMember)
	if err != nil {
		return false, err
	}
	var added bool
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.labelOfBook(ctx, tx, teamID, bookID, labelID); err != nil {
			return err
		}
		now := s.now().UTC()
		ids, err := s.st.addLabels(ctx, tx, bookID, labelID, []uuid.UUID{contactID}, now)
		if err != nil {
			return err
		}
		added = len(ids) > 0
		if err := s.emitTopicChanges(ctx, tx, teamID, bookID, pairsOf(ids, labelID), nil, events.SubscribedAPI, now); err != nil {
			return err
		}
		return s.emitUpdated(ctx, tx, teamID, bookID, ids)
	})
	return added, err
}

// RemoveLabel untags a contact (member); removing a label the contact
// lacks (or an unknown label) succeeds silently.
func (s *Service) RemoveLabel(ctx context.Context, actor *auth.Actor, contactID, labelID uuid.UUID) error {
	bookID, teamID, err := s.owner(ctx, actor, contactID, auth.RoleMember)
	if err != nil {
		return err
	}
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		ids, err := s.st.removeLabels(ctx, tx, bookID, labelID, []uuid.UUID{contactID})
		if err != nil {
			return err
		}
		if err := s.emitTopicChanges(ctx, tx, teamID, bookID, nil, pairsOf(ids, labelID), events.SubscribedAPI, s.now().UTC()); err != nil {
			return err
		}
		return s.emitUpdated(ctx, tx, teamID, bookID, ids)
	})
}

// labelOfBook checks that the label exists in the team (else NOT_FOUND,
// revealing nothing of other teams) and belongs to the book (else
// INVALID_INPUT), and holds it for the transaction.
func (s *Service) labelOfBook(ctx context.Context, tx *postgres.Tx, teamID, bookID, labelID uuid.UUID) error {
	lBook, lTeam, err := s.st.labelOwner(ctx, tx, labelID)
	if err != nil {
		return err
	}
	if lTeam != teamID {
		return errLabelNotFound
	}
	if lBook != bookID {
		return apperr.Invalidf("The label belongs to another book; contacts can only carry labels of their own book.")
	}
	return nil
}

// emitUpdated writes one contact.updated per changed contact, with its
// new representation, loaded set-based and appended in one insert. Label
// and custom value changes leave the contact row (and its updated_at)
// alone: rewriting 10,000 rows and all their index entries for a bulk
// label would cost more than the change itself.
func (s *Service) emitUpdated(ctx context.Context, tx *postgres.Tx, teamID, bookID uuid.UUID, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	// Without a webhook for them the events are not written (events.Outbox),
	// so the contacts need not be loaded either.
	if wanted, err := s.outbox.Wanted(ctx, tx, teamID, events.ContactUpdated); err != nil || !wanted {
		return err
	}
	changed, err := s.st.byIDs(ctx, tx, bookID, ids)
	if err != nil {
		return err
	}
	evs := make([]events.Event, len(changed))
	for i, c := range changed {
		evs[i] = contactEvent(events.ContactUpdated, teamID, c)
	}
	return s.outbox.Append(ctx, tx, s.now().UTC(), evs...)
}

// EmailCheck answers whether an address is taken in a book.
type EmailCheck struct {
	Exists    bool       `json:"exists"`
	Enforced  bool       `json:"enforced"`
	ContactID *uuid.UUID `json:"contact_id,omitempty"`
	Name      *string    `json:"name,omitempty"`
}

// CheckEmail tells whether a contact of the book other than exclude has
// the address, compared case-insensitively (viewer).
func (s *Service) CheckEmail(ctx context.Context, sc access.Scope, email string, exclude *uuid.UUID) (EmailCheck, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return EmailCheck{}, err
	}
	b := sc.Book
	email = strings.TrimSpace(email)
	if email == "" {
		return EmailCheck{}, apperr.Invalidf("The query parameter email is required.")
	}
	if len(email) > 254 {
		return EmailCheck{}, apperr.Invalidf("The query parameter email may be at most 254 characters long.")
	}
	var except uuid.UUID
	if exclude != nil {
		except = *exclude
	}
	m, err := s.st.findEmail(ctx, s.db, b.ID, email, except)
	if err != nil {
		return EmailCheck{}, err
	}
	out := EmailCheck{Exists: m != nil, Enforced: b.EnforceUniqueEmails}
	if m != nil {
		out.ContactID, out.Name = &m.ContactID, &m.Name
	}
	return out, nil
}

// relatedIDs are the contact ids the relationships name.
func relatedIDs(rels []Relationship) []uuid.UUID {
	var ids []uuid.UUID
	for _, r := range rels {
		if r.ContactID != nil {
			ids = append(ids, uuid.UUID(*r.ContactID))
		}
	}
	return ids
}

// checkRelated checks that every relationship's contact_id is a contact of
// the book.
func (s *Service) checkRelated(ctx context.Context, db postgres.DB, bookID uuid.UUID, rels []Relationship) error {
	ids := relatedIDs(rels)
	if len(ids) == 0 {
		return nil
	}
	found, err := s.st.existing(ctx, db, bookID, ids)
	if err != nil {
		return err
	}
	for i, r := range rels {
		if r.ContactID != nil && !found[uuid.UUID(*r.ContactID)] {
			return apperr.Invalidf("`relationships[%d].contact_id` is not a contact of this book.", i)
		}
	}
	return nil
}

// writeErr turns the unique-email index refusing a write into 409
// DUPLICATE_EMAIL naming the address; other errors pass classified.
func (s *Service) writeErr(ctx context.Context, err error, c Contact) error {
	if postgres.IsForeignKeyViolation(err) {
		// The book was deleted between the access check and the insert
		// (migration 00008 raises this): answer as for a missing book.
		return apperr.Wrap(err, apperr.Forbidden, "%s", books.ErrBookForbidden.Message)
	}
	if !postgres.IsUniqueViolation(err, duplicateEmailIndex) {
		return err
	}
	addrs := make([]string, len(c.Emails))
	for i, e := range c.Emails {
		addrs[i] = strings.ToLower(e.Address)
	}
	// The failed transaction is gone; ask again which address clashed.
	taken, qerr := s.st.takenEmail(ctx, s.db, c.BookID, c.ID, addrs)
	if qerr != nil || taken == "" {
		return apperr.Wrap(err, apperr.DuplicateEmail, "Another contact in this book already has one of these email addresses, and the book requires unique emails.")
	}
	return apperr.Wrap(err, apperr.DuplicateEmail, "Another contact in this book already has the email address %s, and the book requires unique emails.", taken)
}

func contactEvent(typ string, teamID uuid.UUID, c Contact) events.Event {
	bookID := c.BookID
	return events.Event{Type: typ, TeamID: teamID, BookID: &bookID, Data: c}
}

// deletedData is the payload of contact.deleted.
type deletedData struct {
	ID uuid.UUID `json:"id"`
}

// deleteContacts deletes the book's contacts among ids and returns which
// went. Their active campaign participations go with them: when a
// webhook of the team subscribes to participant.removed, each is written
// as removed with reason contact_deleted (asked once for the batch).
func (s *Service) deleteContacts(ctx context.Context, tx *postgres.Tx, teamID, bookID uuid.UUID, ids []uuid.UUID) ([]uuid.UUID, error) {
	want, err := s.outbox.Wanted(ctx, tx, teamID, events.ParticipantRemoved)
	if err != nil {
		return nil, err
	}
	var ending []events.ParticipantData
	if want {
		rows, _ := tx.Query(ctx, `SELECT id, campaign_id, contact_id FROM campaign_active_participants WHERE contact_id = ANY($1::uuid[])`, ids)
		var d events.ParticipantData
		if _, err := pgx.ForEachRow(rows, []any{&d.ParticipantID, &d.CampaignID, &d.ContactID}, func() error {
			ending = append(ending, d)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	gone, err := s.st.deleteMany(ctx, tx, bookID, ids)
	if err != nil || len(ending) == 0 {
		return gone, err
	}
	now := s.now().UTC()
	reason := events.RemovedContactDeleted
	book := bookID
	went := make(map[uuid.UUID]bool, len(gone))
	for _, id := range gone {
		went[id] = true
	}
	evs := make([]events.Event, 0, len(ending))
	for _, d := range ending {
		if went[d.ContactID] {
			d.Status, d.Reason, d.OccurredAt = "removed", &reason, now
			evs = append(evs, events.Event{Type: events.ParticipantRemoved, TeamID: teamID, BookID: &book, Data: d})
		}
	}
	return gone, s.outbox.Append(ctx, tx, now, evs...)
}

func deletedEvents(teamID, bookID uuid.UUID, ids []uuid.UUID) []events.Event {
	evs := make([]events.Event, len(ids))
	for i, id := range ids {
		evs[i] = events.Event{Type: events.ContactDeleted, TeamID: teamID, BookID: &bookID, Data: deletedData{ID: id}}
	}
	return evs
}
