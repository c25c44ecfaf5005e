package contacts

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/postgres"
)

// bookFacts are what an import needs to know of its book.
type bookFacts struct {
	uniqueEmails bool
	labels       map[string]LabelRef // by lower-cased name
	fields       map[string]fieldDef // by key
}

type fieldDef struct {
	id  uuid.UUID
	typ string
}

// CustomFieldKeys returns the keys of the book's custom fields; an import
// checks its mapping against them before it is queued.
func (s *Service) CustomFieldKeys(ctx context.Context, bookID uuid.UUID) (map[string]bool, error) {
	rows, _ := s.db.Query(ctx, `SELECT key FROM field_keys WHERE book_id = $1`, bookID)
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		out[k] = true
	}
	return out, nil
}

// bookFacts loads what an import checks rows against.
func (store) bookFacts(ctx context.Context, db postgres.DB, bookID uuid.UUID) (bookFacts, error) {
	f := bookFacts{labels: map[string]LabelRef{}, fields: map[string]fieldDef{}}
	unique, ok, err := books.UniqueEmails(ctx, db, bookID)
	if err != nil {
		return f, err
	}
	if !ok {
		return f, apperr.NotFoundf("The book no longer exists.")
	}
	f.uniqueEmails = unique
	var l LabelRef
	rows, _ := db.Query(ctx, `SELECT id, name, color FROM label_refs WHERE book_id = $1 ORDER BY sort_order, name, id`, bookID)
	if _, err := pgx.ForEachRow(rows, []any{&l.ID, &l.Name, &l.Color}, func() error {
		if _, ok := f.labels[strings.ToLower(l.Name)]; !ok {
			f.labels[strings.ToLower(l.Name)] = l
		}
		return nil
	}); err != nil {
		return f, err
	}
	var (
		key string
		fd  fieldDef
	)
	rows, _ = db.Query(ctx, `SELECT key, id, type FROM field_keys WHERE book_id = $1`, bookID)
	if _, err := pgx.ForEachRow(rows, []any{&key, &fd.id, &fd.typ}, func() error {
		f.fields[key] = fd
		return nil
	}); err != nil {
		return f, err
	}
	return f, nil
}

// emailOwners maps each of addresses (lower-cased) held by a contact of the
// book to the oldest such contact.
func (store) emailOwners(ctx context.Context, db postgres.DB, bookID uuid.UUID, addresses []string) (map[string]uuid.UUID, error) {
	out := map[string]uuid.UUID{}
	if len(addresses) == 0 {
		return out, nil
	}
	var (
		a  string
		id uuid.UUID
	)
	rows, _ := db.Query(ctx, `
		SELECT DISTINCT ON (e.address_lower) e.address_lower, e.contact_id
		FROM contact_emails e JOIN contacts c ON c.id = e.contact_id
		WHERE e.book_id = $1 AND e.address_lower = ANY($2)
		ORDER BY e.address_lower, c.created_at, c.id`, postgres.PlanEachTime, bookID, addresses)
	_, err := pgx.ForEachRow(rows, []any{&a, &id}, func() error {
		out[a] = id
		return nil
	})
	return out, err
}
