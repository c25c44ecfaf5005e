package contacts

import (
	"context"
	"strings"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Extent is what a file of contacts needs to know before its first
// contact: the most emails, phones, addresses, dates and profiles that one
// of its contacts carries (a CSV gives each a numbered column), and the
// book's custom fields, by key.
type Extent struct {
	Emails, Phones, Addresses, Dates, Socials int
	Fields                                    []FieldRef
}

// FieldRef is a custom field of the book as a file names it.
type FieldRef struct {
	Key  string
	Type string
}

// Each calls start with the extent of the contacts of the book that the
// filter selects (viewer), then fn with each of them, oldest first, read
// through one cursor so that memory stays flat whatever the book's size.
// The extent and the contacts are read in one snapshot: a contact written
// meanwhile can neither outgrow the columns the extent gave nor carry a
// custom field it did not list. The filter's paging and sort are ignored.
func (s *Service) Each(ctx context.Context, sc access.Scope, f Filter, start func(Extent) error, fn func(Contact) error) error {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return err
	}
	b := sc.Book
	f.Q = strings.TrimSpace(f.Q)
	if len([]rune(f.Q)) > maxQuery {
		return apperr.Invalidf("The query parameter q may be at most %d characters long.", maxQuery)
	}
	if f.Segment != nil {
		// The members first, under the bound of rule evaluation; the file
		// then streams at the client's pace, which no timeout may cut.
		ids, err := s.members(ctx, b.ID, f.Segment)
		if err != nil {
			return err
		}
		f.ids, f.Segment = ids, nil
	}
	where, args := listWhere(b.ID, f)
	args = append([]any{postgres.PlanEachTime}, args...)
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		// One snapshot for the whole file; the contacts are read as they
		// arrive. A read-only transaction at this level never fails to
		// serialise.
		if _, err := tx.Exec(ctx, `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`); err != nil {
			return err
		}
		var (
			e           Extent
			keys, types []string
		)
		err := tx.QueryRow(ctx, `
			SELECT COALESCE(max(jsonb_array_length(c.emails)), 0), COALESCE(max(jsonb_array_length(c.phones)), 0),
			       COALESCE(max(jsonb_array_length(c.addresses)), 0), COALESCE(max(jsonb_array_length(c.dates)), 0),
			       COALESCE(max(jsonb_array_length(c.socials)), 0),
			       ARRAY(SELECT key FROM field_keys WHERE book_id = $1 ORDER BY key),
			       ARRAY(SELECT type FROM field_keys WHERE book_id = $1 ORDER BY key)
			FROM contacts c WHERE `+where, args...).Scan(&e.Emails, &e.Phones, &e.Addresses, &e.Dates, &e.Socials, &keys, &types)
		if err != nil {
			return err
		}
		e.Fields = make([]FieldRef, len(keys))
		for i := range keys {
			e.Fields[i] = FieldRef{Key: keys[i], Type: types[i]}
		}
		if err := start(e); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+fullColumns+` FROM contacts c WHERE `+where+` ORDER BY c.created_at, c.id`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c, err := scanContact(rows, true)
			if err != nil {
				return err
			}
			if err := fn(c); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}
