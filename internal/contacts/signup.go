package contacts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// The operations below serve people acting on their own data without an
// account: a confirmed sign-up, the topics of the preference page, and
// erasure. Their callers have established the authority (a form, a token,
// an admin) and pass the book and team; every write emits its event like
// the API's.

// Signup is what a confirmed sign-up brings to a book.
type Signup struct {
	Email string
	// Values are the form's contact fields that were filled in: FirstName,
	// LastName, Company, JobTitle, and Phones (at most one).
	Values Contact
	// Custom holds custom field values by key.
	Custom map[string]string
	// LabelIDs are labels of the book to add (form labels and topics).
	LabelIDs []uuid.UUID
}

// CheckSignup checks a sign-up's values as a contact would be checked, and
// its custom keys and values against the book's fields, without writing.
// An error names the form field.
func (s *Service) CheckSignup(ctx context.Context, bookID uuid.UUID, in Signup) error {
	c := in.Values
	c.Emails = []Email{{Address: in.Email, Label: "personal", Primary: true}}
	if c.FirstName == "" && c.LastName == "" && c.Company == "" {
		c.FirstName = "x" // the name rule is the sign-up's to settle (see Subscribe)
	}
	c.normalize()
	if err := c.validate(); err != nil {
		return err
	}
	if len(in.Custom) == 0 {
		return nil
	}
	facts, err := s.st.bookFacts(ctx, s.db, bookID)
	if err != nil {
		return err
	}
	for key, v := range in.Custom {
		f, ok := facts.fields[key]
		if !ok {
			return apperr.Invalidf("`custom.%s` is not a field of this book.", key)
		}
		if err := checkFieldValue(f.typ, v); err != nil {
			return apperr.Invalidf("`custom.%s` %s", key, strings.TrimPrefix(errMessage(err), "`value` "))
		}
	}
	return nil
}

// Subscribe writes a confirmed sign-up in tx: when a contact of the book
// holds the address (the oldest such), it is patched with the sign-up's
// non-empty values; otherwise a contact is created, named by the address's
// local part when the form asked for no name (a contact needs one). The
// labels are added, and contact.created or contact.updated is emitted.
// Sign-ups of one address in one book are serialised, so two at once make
// one contact.
func (s *Service) Subscribe(ctx context.Context, tx *postgres.Tx, teamID, bookID uuid.UUID, in Signup) (contactID uuid.UUID, created bool, err error) {
	addr := strings.ToLower(strings.TrimSpace(in.Email))
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "signup:"+bookID.String()+":"+addr); err != nil {
		return uuid.Nil, false, err
	}
	owners, err := s.st.emailOwners(ctx, tx, bookID, []string{addr})
	if err != nil {
		return uuid.Nil, false, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	if id, ok := owners[addr]; ok {
		cur, _, err := s.st.byID(ctx, tx, id, true)
		if err != nil {
			return uuid.Nil, false, err
		}
		mergeImported(&cur, in.Values)
		cur.normalize()
		if err := cur.validate(); err != nil {
			return uuid.Nil, false, err
		}
		cur.UpdatedAt = now
		if err := s.st.updateImported(ctx, tx, []*Contact{&cur}); err != nil {
			return uuid.Nil, false, s.importErr(err)
		}
		contactID = id
	} else {
		c := in.Values
		c.Emails = []Email{{Address: addr, Label: "personal", Primary: true}}
		if c.FirstName == "" && c.LastName == "" && c.Company == "" {
			c.FirstName, _, _ = strings.Cut(addr, "@")
		}
		c.normalize()
		if err := c.validate(); err != nil {
			return uuid.Nil, false, err
		}
		c.ID, c.BookID, c.CreatedAt, c.UpdatedAt = uuid.New(), bookID, now, now
		if err := s.st.copyContacts(ctx, tx, []*Contact{&c}); err != nil {
			return uuid.Nil, false, s.importErr(err)
		}
		contactID, created = c.ID, true
	}
	if err := s.applySignupExtras(ctx, tx, bookID, contactID, in, now); err != nil {
		return uuid.Nil, false, err
	}
	typ := events.ContactUpdated
	if created {
		typ = events.ContactCreated
	}
	return contactID, created, s.emitWhole(ctx, tx, typ, teamID, bookID, []uuid.UUID{contactID}, now)
}

// applySignupExtras adds a sign-up's labels and custom values.
func (s *Service) applySignupExtras(ctx context.Context, tx *postgres.Tx, bookID, contactID uuid.UUID, in Signup, now time.Time) error {
	if len(in.LabelIDs) > 0 {
		ids := make([]uuid.UUID, len(in.LabelIDs))
		for i := range ids {
			ids[i] = contactID
		}
		if err := s.st.tagPairs(ctx, tx, ids, in.LabelIDs, now); err != nil {
			return err
		}
	}
	if len(in.Custom) == 0 {
		return nil
	}
	facts, err := s.st.bookFacts(ctx, tx, bookID)
	if err != nil {
		return err
	}
	var cids, fids []uuid.UUID
	var vals []string
	for key, v := range in.Custom {
		f, ok := facts.fields[key]
		if !ok || v == "" {
			continue // the field was deleted since the submission
		}
		cids, fids, vals = append(cids, contactID), append(fids, f.id), append(vals, v)
	}
	return s.st.setValues(ctx, tx, cids, fids, vals, now)
}

// emitWhole writes one event of typ per contact with its whole current
// representation, when a webhook of the team wants it.
func (s *Service) emitWhole(ctx context.Context, tx *postgres.Tx, typ string, teamID, bookID uuid.UUID, ids []uuid.UUID, now time.Time) error {
	if wanted, err := s.outbox.Wanted(ctx, tx, teamID, typ); err != nil || !wanted {
		return err
	}
	cs, err := s.st.byIDs(ctx, tx, bookID, ids)
	if err != nil {
		return err
	}
	evs := make([]events.Event, len(cs))
	for i, c := range cs {
		evs[i] = contactEvent(typ, teamID, c)
	}
	return s.outbox.Append(ctx, tx, now, evs...)
}

// SetTopics makes the contact's labels among public match wanted: labels
// of public in wanted are added, the others of public removed; labels
// outside public are left alone. It emits contact.updated when something
// changed.
func (s *Service) SetTopics(ctx context.Context, teamID, bookID, contactID uuid.UUID, public, wanted []uuid.UUID) error {
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		// The contact is held for the transaction, as a foreign key would.
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM contacts WHERE id = $1 AND book_id = $2 FOR KEY SHARE`, contactID, bookID).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return errContactNotFound
		}
		if err != nil {
			return err
		}
		var add, remove []uuid.UUID
		for _, id := range public {
			if slices.Contains(wanted, id) {
				add = append(add, id)
			} else {
				remove = append(remove, id)
			}
		}
		now := s.now().UTC()
		rows, _ := tx.Query(ctx, `
			INSERT INTO contact_labels (contact_id, label_id, created_at)
			SELECT $1, l, $3 FROM unnest($2::uuid[]) AS l ON CONFLICT DO NOTHING RETURNING label_id`, contactID, add, now)
		added, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		if err != nil {
			return err
		}
		rows, _ = tx.Query(ctx, `DELETE FROM contact_labels WHERE contact_id = $1 AND label_id = ANY($2::uuid[]) RETURNING label_id`, contactID, remove)
		removed, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		if err != nil {
			return err
		}
		if len(added)+len(removed) == 0 {
			return nil
		}
		if err := s.emitTopics(ctx, tx, teamID, bookID, contactID, added, removed, now); err != nil {
			return err
		}
		return s.emitWhole(ctx, tx, events.ContactUpdated, teamID, bookID, []uuid.UUID{contactID}, now)
	})
}

// emitTopics writes, when wanted, contact.subscribed for the topics turned
// on (one event naming them all) and contact.unsubscribed of scope topic
// for each topic turned off, from the preference page.
func (s *Service) emitTopics(ctx context.Context, tx *postgres.Tx, teamID, bookID, contactID uuid.UUID, added, removed []uuid.UUID, now time.Time) error {
	wanted, err := s.outbox.WantedOf(ctx, tx, teamID, events.ContactSubscribed, events.ContactUnsubscribed)
	if err != nil || len(wanted) == 0 {
		return err
	}
	address, err := s.st.primaryAddress(ctx, tx, contactID)
	if err != nil {
		return err
	}
	book := bookID
	var evs []events.Event
	if len(added) > 0 && wanted[events.ContactSubscribed] {
		evs = append(evs, events.Event{Type: events.ContactSubscribed, TeamID: teamID, BookID: &book, Data: events.SubscribedData{
			ContactID: contactID, Address: address, LabelIDs: added, Source: events.SubscribedPreferencePage, OccurredAt: now,
			// FormID and ConsentID stay null: no form, no consent record.
		}})
	}
	if wanted[events.ContactUnsubscribed] {
		for _, id := range removed {
			evs = append(evs, events.Event{Type: events.ContactUnsubscribed, TeamID: teamID, BookID: &book, Data: events.UnsubscribedData{
				ContactID: contactID, Address: address, Scope: events.ScopeTopic, LabelID: &id,
				Source: events.UnsubscribedPreferencePage, OccurredAt: now,
			}})
		}
	}
	return s.outbox.Append(ctx, tx, now, evs...)
}

// LabelIDsOf returns the ids of the labels the contact carries.
func (s *Service) LabelIDsOf(ctx context.Context, contactID uuid.UUID) ([]uuid.UUID, error) {
	rows, err := s.db.Query(ctx, `SELECT label_id FROM contact_labels WHERE contact_id = $1`, contactID)
	return collectIDs(rows, err)
}

// Addresses returns the contact's email addresses, lower-cased.
func (s *Service) Addresses(ctx context.Context, db postgres.DB, contactID uuid.UUID) ([]string, error) {
	rows, _ := db.Query(ctx, `SELECT address_lower FROM contact_emails WHERE contact_id = $1 ORDER BY address_lower`, contactID)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, err
}

// Erase deletes the contact in tx (its labels, values, addresses,
// interactions, campaign participations and delivery history go with it)
// and emits contact.deleted. It returns the addresses the contact held, so
// that the caller can erase what else names them.
func (s *Service) Erase(ctx context.Context, tx *postgres.Tx, teamID, bookID, contactID uuid.UUID) ([]string, error) {
	addrs, err := s.Addresses(ctx, tx, contactID)
	if err != nil {
		return nil, err
	}
	gone, err := s.deleteContacts(ctx, tx, teamID, bookID, []uuid.UUID{contactID})
	if err != nil {
		return nil, err
	}
	if len(gone) == 0 {
		return nil, errContactNotFound
	}
	if err := s.outbox.Append(ctx, tx, s.now().UTC(), deletedEvents(teamID, bookID, gone)...); err != nil {
		return nil, fmt.Errorf("erase contact: %w", err)
	}
	return addrs, nil
}
