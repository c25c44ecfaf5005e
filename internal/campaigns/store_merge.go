package campaigns

import (
	"context"
	"errors"

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

// firstContactRow is the merge data of a book's oldest contact.
type firstContactRow struct {
	id                                                                      uuid.UUID
	firstName, lastName, company, jobTitle, website, birthday, email, phone string
	custom                                                                  []byte
}

// mergeContact reads the merge data of the book's contact id, or of its
// oldest contact when id is nil; found is false when there is none.
func (store) mergeContact(ctx context.Context, db postgres.DB, bookID uuid.UUID, id *uuid.UUID) (firstContactRow, bool, error) {
	var r firstContactRow
	err := db.QueryRow(ctx, `
		SELECT ct.id, ct.first_name, ct.last_name, ct.company, ct.job_title, ct.website,
		       COALESCE(to_char(ct.birthday, 'YYYY-MM-DD'), ''), `+contactEmailSQL+`, `+contactPhoneSQL+`,
		       (SELECT jsonb_object_agg(fd.key, v.value) FROM contact_field_values v
		        JOIN field_keys fd ON fd.id = v.field_id WHERE v.contact_id = ct.id)
		FROM contacts ct WHERE ct.book_id = $1 AND ($2::uuid IS NULL OR ct.id = $2)
		ORDER BY ct.created_at, ct.id LIMIT 1`, bookID, id).
		Scan(&r.id, &r.firstName, &r.lastName, &r.company, &r.jobTitle, &r.website, &r.birthday, &r.email, &r.phone, &r.custom)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	return r, true, nil
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
