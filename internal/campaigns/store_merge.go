package campaigns

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/postgres"
)

// mergeBook is what a book gives every email's merge: its name (the
// book_name merge field) and the custom field keys it defines (a
// {{custom.<key>}} of any other key stays visible as written).
type mergeBook struct {
	name       string
	customKeys []string
}

func (store) mergeBook(ctx context.Context, db postgres.DB, bookID uuid.UUID) (mergeBook, error) {
	var b mergeBook
	var err error
	b.name, b.customKeys, err = books.MergeFields(ctx, db, bookID)
	return b, err
}

// customField is a custom field definition of a book: its key and name.
type customField struct{ Key, Name string }

// customFields lists the book's custom field definitions by key.
func (store) customFields(ctx context.Context, db postgres.DB, bookID uuid.UUID) ([]customField, error) {
	rows, err := db.Query(ctx, `SELECT key, name FROM field_keys WHERE book_id = $1 ORDER BY key`, bookID)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (customField, error) {
		var f customField
		return f, r.Scan(&f.Key, &f.Name)
	})
	return out, err
}
