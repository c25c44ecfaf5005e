package contacts

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/validate"
)

// Address book clients (CardDAV) see a book's contacts as cards: each
// named by a resource name, versioned by a number every change of the
// contact renews (triggers of migration 00058 take it, so every path that
// writes a contact, bulk ones included, renews it set-based), and carrying
// the vCard properties the client last sent. The vCard form itself is
// package vcards'; this package keeps the contact and the opaque
// properties.

// CardSuffix ends every resource name.
const CardSuffix = ".vcf"

// Card is a contact as an address book client sees it.
type Card struct {
	Contact Contact
	// Name is the resource name: the one the client chose, else the
	// contact's id + ".vcf".
	Name string
	// Version changes with every change of the contact (the ETag).
	Version int64
	// Props are the vCard properties the client last sent (JSON), nil
	// for a contact no client wrote.
	Props json.RawMessage
}

// CardRef names a card and its version.
type CardRef struct {
	ID      uuid.UUID
	Name    string
	Version int64
}

// CardChanges is what changed in a book since a sync token.
type CardChanges struct {
	Changed []CardRef
	// Deleted are the resource names of contacts deleted since.
	Deleted []string
	// Token is the book's sync token now.
	Token int64
}

// ErrSyncToken is a sync token the book cannot answer for: not one it
// gave, or older than the kept record of deletions.
var ErrSyncToken = apperr.New(apperr.InvalidInput, "The sync token is unknown or has expired; sync the address book again from the start.")

// ErrCardVersion is a conditional write whose condition failed: the card
// exists (If-None-Match: *), or its version is not the one named
// (If-Match).
var ErrCardVersion = apperr.New(apperr.Conflict, "The contact has changed since you read it (or already exists); read it again.")

// CardInput is a card a client writes: the contact as the card maps it,
// its label names and custom values, and what to keep of it.
type CardInput struct {
	// Name is the resource name written to.
	Name string
	// Contact holds the mapped fields (the book and id are the service's).
	Contact    Contact
	Labels     []string
	Custom     map[string]string
	FieldTypes map[string]string
	Props      json.RawMessage
	// IfMatch, when set, is the version the client read; IfNoneMatch
	// asks that no card of the name exist.
	IfMatch     *int64
	IfNoneMatch bool
	// MustExist asks that a card of the name exist (If-Match: *).
	MustExist bool
}

// CardToken is the book's sync token: the newest version among its
// contacts and deletions (viewer).
func (s *Service) CardToken(ctx context.Context, sc access.Scope) (int64, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return 0, err
	}
	var token int64
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.st.lockSync(ctx, tx, sc.Book.ID); err != nil {
			return err
		}
		var err error
		token, _, err = s.st.cardHorizon(ctx, tx, sc.Book.ID)
		return err
	})
	return token, err
}

// CardRefs lists every card of the book and the book's sync token, as of
// one moment (viewer).
func (s *Service) CardRefs(ctx context.Context, sc access.Scope) ([]CardRef, int64, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return nil, 0, err
	}
	var (
		refs  []CardRef
		token int64
	)
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.st.lockSync(ctx, tx, sc.Book.ID); err != nil {
			return err
		}
		var err error
		if token, _, err = s.st.cardHorizon(ctx, tx, sc.Book.ID); err != nil {
			return err
		}
		refs, err = s.st.cardRefs(ctx, tx, sc.Book.ID, nil)
		return err
	})
	return refs, token, err
}

// Cards loads the book's cards of the names given, in no order; a name
// that names nothing is left out (viewer). All when names is nil.
func (s *Service) Cards(ctx context.Context, sc access.Scope, names []string) ([]Card, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return nil, err
	}
	if names != nil && len(names) == 0 {
		return nil, nil
	}
	return s.st.cards(ctx, s.db, sc.Book.ID, names)
}

// CardChanges lists what changed in the book after token: cards changed
// or created, and names deleted (viewer). A token the book did not give,
// or older than the deletions it still knows of, is ErrSyncToken.
func (s *Service) CardChanges(ctx context.Context, sc access.Scope, token int64) (CardChanges, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return CardChanges{}, err
	}
	var out CardChanges
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.st.lockSync(ctx, tx, sc.Book.ID); err != nil {
			return err
		}
		now, horizon, err := s.st.cardHorizon(ctx, tx, sc.Book.ID)
		if err != nil {
			return err
		}
		if token < horizon || token > now {
			return ErrSyncToken
		}
		out.Token = now
		if token == now {
			return nil
		}
		if out.Changed, err = s.st.cardRefs(ctx, tx, sc.Book.ID, &token); err != nil {
			return err
		}
		live := make(map[string]bool, len(out.Changed))
		for _, c := range out.Changed {
			live[c.Name] = true
		}
		gone, err := s.st.tombstones(ctx, tx, sc.Book.ID, token)
		for _, name := range gone {
			// A name deleted and written again is a change, not a deletion.
			if !live[name] {
				out.Deleted = append(out.Deleted, name)
			}
		}
		return err
	})
	return out, err
}

// PutCard creates or replaces the card of a resource name (member). A
// replaced contact takes every mapped field from the card (what the card
// leaves out is cleared), its labels become the card's (created when the
// book lacks them), and its custom values the card's; its relationships,
// which no card carries, stay. It behaves as the
// API does: contact.created or contact.updated is emitted in the same
// transaction, the suppression mark follows the addresses.
func (s *Service) PutCard(ctx context.Context, sc access.Scope, in CardInput) (CardRef, bool, error) {
	if err := sc.Require(ctx, auth.RoleMember); err != nil {
		return CardRef{}, false, err
	}
	c := in.Contact
	c.BookID = sc.Book.ID
	c.Relationships = nil // a card names no contact of the book (a replace keeps the contact's)
	c.normalize()
	if err := c.validate(); err != nil {
		return CardRef{}, false, err
	}
	custom := map[string]string{}
	for k, v := range in.Custom {
		if v != "" && validate.FieldKey(k) {
			custom[k] = v
		}
	}
	var (
		ref     CardRef
		created bool
	)
	now := s.now().UTC()
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		cur, found, err := s.st.cardByName(ctx, tx, sc.Book.ID, in.Name)
		if err != nil {
			return err
		}
		if (found && in.IfNoneMatch) || (!found && in.MustExist) || (in.IfMatch != nil && (!found || cur.Version != *in.IfMatch)) {
			return ErrCardVersion
		}
		created = !found
		if created {
			c.ID = uuid.New()
			c.CreatedBy = sc.Actor.CreatedBy()
			c.CreatedAt = now
			name := in.Name
			if name == c.ID.String()+CardSuffix {
				name = "" // the default name needs no column
			}
			if err := s.st.insertCard(ctx, tx, c, name, in.Props); err != nil {
				return s.writeErr(ctx, err, c)
			}
		} else {
			// Relationships name other contacts and no card carries them:
			// a replace keeps them.
			was, _, err := s.st.byID(ctx, tx, cur.ID, false)
			if err != nil {
				return err
			}
			c.ID, c.Relationships = cur.ID, was.Relationships
			if _, err := s.st.update(ctx, tx, c, now); err != nil {
				return s.writeErr(ctx, err, c)
			}
			if err := s.st.setCardProps(ctx, tx, c.ID, in.Props); err != nil {
				return err
			}
		}
		if err := s.setCardLabels(ctx, tx, sc.Book.ID, c.ID, in.Labels, now); err != nil {
			return err
		}
		if err := s.setCardCustom(ctx, tx, sc.Book.ID, c.ID, custom, in.FieldTypes, now); err != nil {
			return err
		}
		if err := s.marks.Remark(ctx, tx, c.BookID, c.ID); err != nil {
			return err
		}
		out, _, err := s.st.byID(ctx, tx, c.ID, false)
		if err != nil {
			return err
		}
		typ := events.ContactUpdated
		if created {
			typ = events.ContactCreated
		}
		if err := s.outbox.Append(ctx, tx, now, contactEvent(typ, sc.Book.TeamID, out)); err != nil {
			return err
		}
		ref, _, err = s.st.cardByName(ctx, tx, sc.Book.ID, in.Name)
		return err
	})
	return ref, created, err
}

// DeleteCard deletes the card of a resource name (member), when its
// version is ifMatch if that is set; emits contact.deleted.
func (s *Service) DeleteCard(ctx context.Context, sc access.Scope, name string, ifMatch *int64) error {
	if err := sc.Require(ctx, auth.RoleMember); err != nil {
		return err
	}
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		cur, found, err := s.st.cardByName(ctx, tx, sc.Book.ID, name)
		if err != nil {
			return err
		}
		if !found {
			if ifMatch != nil {
				return ErrCardVersion
			}
			return errContactNotFound
		}
		if ifMatch != nil && cur.Version != *ifMatch {
			return ErrCardVersion
		}
		gone, err := s.st.deleteMany(ctx, tx, sc.Book.ID, []uuid.UUID{cur.ID})
		if err != nil {
			return err
		}
		return s.outbox.Append(ctx, tx, s.now().UTC(), deletedEvents(sc.Book.TeamID, sc.Book.ID, gone)...)
	})
}

// setCardLabels makes the contact's labels the named ones (by name,
// case-insensitively), creating those the book lacks.
func (s *Service) setCardLabels(ctx context.Context, tx postgres.DB, bookID, contactID uuid.UUID, names []string, now time.Time) error {
	facts, err := s.st.bookFacts(ctx, tx, bookID)
	if err != nil {
		return err
	}
	var ids []uuid.UUID
	var missing []string
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		k := strings.ToLower(n)
		if n == "" || seen[k] {
			continue
		}
		seen[k] = true
		if l, ok := facts.labels[k]; ok {
			ids = append(ids, l.ID)
		} else {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		made, err := s.st.createLabels(ctx, tx, bookID, missing, now)
		if err != nil {
			return err
		}
		for _, l := range made {
			ids = append(ids, l.ID)
		}
	}
	return s.st.replaceLabels(ctx, tx, contactID, ids, now)
}

// setCardCustom makes the contact's custom values the given ones,
// creating the fields the book lacks (typed as the card says).
func (s *Service) setCardCustom(ctx context.Context, tx postgres.DB, bookID, contactID uuid.UUID, custom, types map[string]string, now time.Time) error {
	facts, err := s.st.bookFacts(ctx, tx, bookID)
	if err != nil {
		return err
	}
	var missing, missingTypes []string
	for _, k := range sortedKeys(custom) {
		if _, ok := facts.fields[k]; !ok {
			missing, missingTypes = append(missing, k), append(missingTypes, fieldType(types[k]))
		}
	}
	if len(missing) > 0 {
		made, err := books.CreateFields(ctx, tx, bookID, missing, missingTypes)
		if err != nil {
			return err
		}
		for _, f := range made {
			facts.fields[f.Key] = fieldDef{id: f.ID, typ: string(f.Type)}
		}
	}
	var fieldIDs []uuid.UUID
	var values []string
	for _, k := range sortedKeys(custom) {
		f := facts.fields[k]
		if err := checkFieldValue(f.typ, custom[k]); err != nil {
			return apperr.Invalidf("The custom value %s does not fit its field: %s", k, strings.TrimPrefix(err.Error(), "`value` "))
		}
		fieldIDs, values = append(fieldIDs, f.id), append(values, custom[k])
	}
	return s.st.replaceValues(ctx, tx, contactID, fieldIDs, values, now)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ContactIDOfCard reads the contact id of a default resource name
// ("<id>.vcf").
func ContactIDOfCard(name string) (uuid.UUID, bool) {
	id, err := uuid.Parse(strings.TrimSuffix(name, CardSuffix))
	return id, err == nil && strings.HasSuffix(name, CardSuffix)
}
