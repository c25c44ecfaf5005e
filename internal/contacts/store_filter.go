package contacts

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/postgres"
)

// listWhere is the WHERE clause and arguments of a list request.
func listWhere(bookID uuid.UUID, f Filter) (string, []any) {
	args := []any{bookID}
	where := []string{"c.book_id = $1"}
	if f.Q != "" {
		args = append(args, "%"+escapeLike(f.Q)+"%")
		where = append(where, fmt.Sprintf("c.search ILIKE $%d", len(args)))
	}
	if f.LabelID != nil {
		args = append(args, *f.LabelID)
		where = append(where, fmt.Sprintf("EXISTS (SELECT 1 FROM contact_labels cl WHERE cl.contact_id = c.id AND cl.label_id = $%d)", len(args)))
	}
	if f.Starred != nil {
		args = append(args, *f.Starred)
		where = append(where, fmt.Sprintf("c.starred = $%d", len(args)))
	}
	if f.ids != nil {
		args = append(args, f.ids)
		where = append(where, fmt.Sprintf("c.id = ANY($%d)", len(args)))
	}
	if f.Segment != nil {
		var cond string
		cond, args = f.Segment.Where("c", args)
		where = append(where, cond)
	}
	return strings.Join(where, " AND "), args
}

// escapeLike makes q match literally inside a LIKE pattern.
func escapeLike(q string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q)
}

// queryArgs are the arguments of a list statement: a filter holding a
// segment's members (up to a whole book's ids) is planned for its array
// (postgres.PlanEachTime).
func (f Filter) queryArgs(args []any) []any {
	if f.ids == nil {
		return args
	}
	return append([]any{postgres.PlanEachTime}, args...)
}

// memberIDs returns the ids of the book's contacts that satisfy the
// condition (a segment's rule).
func (store) memberIDs(ctx context.Context, db postgres.DB, bookID uuid.UUID, cond Condition) ([]uuid.UUID, error) {
	where, args := cond.Where("c", []any{bookID})
	return collectIDs(db.Query(ctx, `SELECT c.id FROM contacts c WHERE c.book_id = $1 AND `+where, args...))
}
