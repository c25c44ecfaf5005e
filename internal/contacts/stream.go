package contacts

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Each calls fn with every contact of the book that the filter selects
// (viewer), oldest first, read through one cursor so that memory stays
// flat whatever the book's size. The filter's paging and sort are
// ignored.
func (s *Service) Each(ctx context.Context, sc books.Scope, f Filter, fn func(Contact) error) error {
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
	// One statement: one snapshot for the whole file, its rows read as
	// they arrive.
	rows, err := s.db.Query(ctx, `SELECT `+fullColumns+` FROM contacts c WHERE `+where+` ORDER BY c.created_at, c.id`,
		append([]any{postgres.PlanEachTime}, args...)...)
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
}

// DateLabels returns the labels of the dates the book's contacts carry,
// sorted: an export gives each its column.
func (s *Service) DateLabels(ctx context.Context, bookID uuid.UUID) ([]string, error) {
	rows, _ := s.db.Query(ctx, `
		SELECT DISTINCT d->>'label' FROM contacts c, jsonb_array_elements(c.dates) d
		WHERE c.book_id = $1 AND c.dates <> '[]' ORDER BY 1`, bookID)
	labels, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return labels, err
}
