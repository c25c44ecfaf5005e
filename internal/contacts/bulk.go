package contacts

import (
	"context"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/validate"
)

// The bulk operations: each acts on up to MaxBulkIDs contacts named by
// id, or on every member of a segment, in one transaction and set-based.

// BulkInput is the body of the bulk endpoints; each uses its part.
type BulkInput struct {
	ContactIDs []string `json:"contact_ids"`
	// SegmentID names a segment whose members the operation acts on, in
	// place of contact_ids; the caller resolves it into Segment.
	SegmentID         *string   `json:"segment_id"`
	Segment           Condition `json:"-"`
	LabelID           *string   `json:"label_id"`
	FieldDefinitionID *string   `json:"field_definition_id"`
	Value             *string   `json:"value"`
}

// BulkDelete deletes the book's contacts among contact_ids (member); ids
// outside the book are skipped. Emits contact.deleted per deleted contact.
func (s *Service) BulkDelete(ctx context.Context, sc access.Scope, in BulkInput) (int, error) {
	b, targets, err := s.bulkStart(ctx, sc, in)
	if err != nil {
		return 0, err
	}
	var n int
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		ids, err := s.resolve(ctx, tx, b.ID, targets)
		if err != nil {
			return err
		}
		gone, err := s.deleteContacts(ctx, tx, b.TeamID, b.ID, ids)
		if err != nil {
			return err
		}
		n = len(gone)
		if err := audit.Record(ctx, tx, audit.Entry{
			TeamID: b.TeamID, Actor: audit.From(sc.Actor), Action: "contacts.bulk_deleted", TargetType: "book", TargetID: b.ID.String(),
			Details: bulkDeleteDetails(in, gone),
		}); err != nil {
			return err
		}
		return s.outbox.Append(ctx, tx, s.now().UTC(), deletedEvents(b.TeamID, b.ID, gone)...)
	})
	return n, err
}

// auditedIDs is how many deleted contact ids an audit entry lists; a
// larger delete (a segment's members) records its count and segment only,
// so one entry never grows with the book.
const auditedIDs = 10_000

func bulkDeleteDetails(in BulkInput, gone []uuid.UUID) map[string]any {
	d := map[string]any{"deleted": len(gone)}
	if in.SegmentID != nil {
		d["segment_id"] = *in.SegmentID
	}
	if len(gone) <= auditedIDs {
		d["contact_ids"] = gone
	}
	return d
}

// BulkAddLabel tags the book's contacts among contact_ids (member); those
// already tagged are skipped and not counted.
func (s *Service) BulkAddLabel(ctx context.Context, sc access.Scope, in BulkInput) (int, error) {
	return s.bulkLabel(ctx, sc, in, s.st.addLabels, true)
}

// BulkRemoveLabel untags the book's contacts among contact_ids (member);
// it counts the contacts that had the label.
func (s *Service) BulkRemoveLabel(ctx context.Context, sc access.Scope, in BulkInput) (int, error) {
	return s.bulkLabel(ctx, sc, in, func(ctx context.Context, db postgres.DB, bookID, labelID uuid.UUID, ids []uuid.UUID, _ time.Time) ([]uuid.UUID, error) {
		return s.st.removeLabels(ctx, db, bookID, labelID, ids)
	}, false)
}

type labelChange func(ctx context.Context, db postgres.DB, bookID, labelID uuid.UUID, ids []uuid.UUID, now time.Time) ([]uuid.UUID, error)

// bulkLabel makes the change (adding the label, or removing it) to the
// contacts the input names.
func (s *Service) bulkLabel(ctx context.Context, sc access.Scope, in BulkInput, change labelChange, adding bool) (int, error) {
	b, targets, err := s.bulkStart(ctx, sc, in)
	if err != nil {
		return 0, err
	}
	labelID, err := requiredUUID("label_id", in.LabelID)
	if err != nil {
		return 0, err
	}
	var n int
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.labelOfBook(ctx, tx, b.TeamID, b.ID, labelID); err != nil {
			return err
		}
		ids, err := s.resolve(ctx, tx, b.ID, targets)
		if err != nil {
			return err
		}
		now := s.now().UTC()
		changed, err := change(ctx, tx, b.ID, labelID, ids, now)
		if err != nil {
			return err
		}
		n = len(changed)
		added, removed := pairsOf(changed, labelID), []labelPair(nil)
		if !adding {
			added, removed = nil, added
		}
		if err := s.emitTopicChanges(ctx, tx, b.TeamID, b.ID, added, removed, events.SubscribedAPI, now); err != nil {
			return err
		}
		return s.emitUpdated(ctx, tx, b.TeamID, b.ID, changed)
	})
	return n, err
}

// BulkUpdateField sets a custom field on the book's contacts among
// contact_ids (member), creating or overwriting the value; an empty value
// removes it. It counts the contacts whose value changed.
func (s *Service) BulkUpdateField(ctx context.Context, sc access.Scope, in BulkInput) (int, error) {
	b, targets, err := s.bulkStart(ctx, sc, in)
	if err != nil {
		return 0, err
	}
	fieldID, err := requiredUUID("field_definition_id", in.FieldDefinitionID)
	if err != nil {
		return 0, err
	}
	if in.Value == nil {
		return 0, apperr.Invalidf("`value` is required: the string to store (an empty string removes the value).")
	}
	value := *in.Value
	var n int
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		typ, err := s.st.fieldType(ctx, tx, b.ID, fieldID)
		if err != nil {
			return err
		}
		if err := checkFieldValue(string(typ), value); err != nil {
			return err
		}
		ids, err := s.resolve(ctx, tx, b.ID, targets)
		if err != nil {
			return err
		}
		var changed []uuid.UUID
		if value == "" {
			changed, err = s.st.clearField(ctx, tx, b.ID, fieldID, ids)
		} else {
			changed, err = s.st.setField(ctx, tx, b.ID, fieldID, ids, value, s.now().UTC())
		}
		if err != nil {
			return err
		}
		n = len(changed)
		return s.emitUpdated(ctx, tx, b.TeamID, b.ID, changed)
	})
	return n, err
}

// bulkTargets are the contacts a bulk request names: its contact_ids,
// or the members of a segment as they are when the operation runs.
type bulkTargets struct {
	ids     []uuid.UUID
	segment Condition
}

// bulkStart checks the role (member) and reads the contacts of a bulk
// body: exactly one of contact_ids (1 to MaxBulkIDs) and a segment (no
// limit).
func (s *Service) bulkStart(ctx context.Context, sc access.Scope, in BulkInput) (books.Book, bulkTargets, error) {
	if err := sc.Require(ctx, auth.RoleMember); err != nil {
		return books.Book{}, bulkTargets{}, err
	}
	if in.Segment != nil {
		if len(in.ContactIDs) > 0 {
			return books.Book{}, bulkTargets{}, apperr.Invalidf("`segment_id` replaces contact_ids: send one of the two, not both.")
		}
		return sc.Book, bulkTargets{segment: in.Segment}, nil
	}
	ids, err := parseIDs(in.ContactIDs)
	return sc.Book, bulkTargets{ids: ids}, err
}

// members returns the ids of the book's contacts that a segment's rule
// selects now, read in a transaction of their own.
func (s *Service) members(ctx context.Context, bookID uuid.UUID, cond Condition) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		return cond.Within(ctx, tx, func() (err error) {
			ids, err = s.st.memberIDs(ctx, tx, bookID, cond)
			return err
		})
	})
	if ids == nil {
		// No member is an empty set, not "no filter" (Filter.ids).
		ids = []uuid.UUID{}
	}
	return ids, err
}

// resolve returns the ids of the targets: a segment's members are read
// in the operation's transaction, so it acts on exactly the contacts that
// match at that moment, whatever their number, set-based.
func (s *Service) resolve(ctx context.Context, tx *postgres.Tx, bookID uuid.UUID, t bulkTargets) ([]uuid.UUID, error) {
	if t.segment == nil {
		return t.ids, nil
	}
	var ids []uuid.UUID
	err := t.segment.Within(ctx, tx, func() (err error) {
		ids, err = s.st.memberIDs(ctx, tx, bookID, t.segment)
		return err
	})
	return ids, err
}

// parseIDs checks contact_ids: 1 to MaxBulkIDs UUIDs; repeats count once.
func parseIDs(raw []string) ([]uuid.UUID, error) {
	if len(raw) == 0 {
		return nil, apperr.Invalidf("`contact_ids` is required: send 1 to %d contact ids, or segment_id instead.", MaxBulkIDs)
	}
	if len(raw) > MaxBulkIDs {
		return nil, apperr.Invalidf("`contact_ids` may hold at most %d ids; split the request.", MaxBulkIDs)
	}
	ids := make([]uuid.UUID, 0, len(raw))
	seen := make(map[uuid.UUID]struct{}, len(raw))
	for i, r := range raw {
		id, err := uuid.Parse(r)
		if err != nil {
			return nil, apperr.Invalidf("`contact_ids[%d]` is not a valid UUID.", i)
		}
		if _, dup := seen[id]; !dup {
			seen[id] = struct{}{}
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func requiredUUID(field string, raw *string) (uuid.UUID, error) {
	if raw == nil || strings.TrimSpace(*raw) == "" {
		return uuid.Nil, apperr.Invalidf("`%s` is required.", field)
	}
	id, err := uuid.Parse(strings.TrimSpace(*raw))
	if err != nil {
		return uuid.Nil, apperr.Invalidf("`%s` must be a UUID.", field)
	}
	return id, nil
}

// checkFieldValue checks a value against its field's type.
func checkFieldValue(typ, v string) error {
	if utf8.RuneCountInString(v) > maxFieldValue {
		return apperr.Invalidf("`value` must be at most %d characters long.", maxFieldValue)
	}
	if v == "" {
		return nil
	}
	switch typ {
	case "number":
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return apperr.Invalidf("`value` must be a number for this field.")
		}
	case "date":
		if !validate.Date(v) {
			return apperr.Invalidf("`value` must be a date of the form YYYY-MM-DD that exists for this field.")
		}
	case "url":
		u, err := url.Parse(v)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || len(v) > 2048 {
			return apperr.Invalidf("`value` must be a valid http(s) URL for this field.")
		}
	}
	return nil
}
