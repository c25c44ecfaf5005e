package books

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
)

// store is the books SQL.
type store struct{}

// bookRowColumns is a book's own row; bookColumns adds its contact count,
// the sum of the counter slots the contacts triggers keep (migration
// 00008). The count costs a read of up to 64 rows spread over the counter
// table, so authorization lookups (every contact request) leave it out.
// The books table must not be aliased where bookColumns is used.
const (
	bookRowColumns = `id, team_id, name, slug, color, icon, enforce_unique_emails, created_by, created_at, updated_at`
	bookColumns    = bookRowColumns + `,
	(SELECT COALESCE(sum(k.n), 0)::bigint FROM book_contact_counts k WHERE k.book_id = books.id)`
)

// scanBook scans bookRowColumns, then the count when withCount.
func scanBook(row pgx.Row, withCount bool) (Book, error) {
	var b Book
	dest := []any{&b.ID, &b.TeamID, &b.Name, &b.Slug, &b.Color, &b.Icon, &b.EnforceUniqueEmails, &b.CreatedBy, &b.CreatedAt, &b.UpdatedAt}
	if withCount {
		dest = append(dest, &b.ContactCount)
	}
	err := row.Scan(dest...)
	return b, err
}

var errBookNotFound = apperr.NotFoundf("No book with this id.")

// book loads a book, with its contact count when withCount.
func (store) book(ctx context.Context, db postgres.DB, id uuid.UUID, withCount bool) (Book, error) {
	cols := bookRowColumns
	if withCount {
		cols = bookColumns
	}
	b, err := scanBook(db.QueryRow(ctx, `SELECT `+cols+` FROM books WHERE id = $1`, id), withCount)
	if errors.Is(err, pgx.ErrNoRows) {
		return Book{}, errBookNotFound
	}
	return b, err
}

// contactCount is the book's number of contacts.
func (store) contactCount(ctx context.Context, db postgres.DB, id uuid.UUID) (int64, error) {
	var n int64
	err := db.QueryRow(ctx, `SELECT COALESCE(sum(n), 0)::bigint FROM book_contact_counts WHERE book_id = $1`, id).Scan(&n)
	return n, err
}

func (store) books(ctx context.Context, db postgres.DB, teamID uuid.UUID) ([]Book, error) {
	rows, err := db.Query(ctx, `SELECT `+bookColumns+` FROM books WHERE team_id = $1 ORDER BY name, created_at`, teamID)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Book, error) { return scanBook(r, true) })
	return out, err
}

// freeSlug picks base, or base-2, base-3, ... whichever the team lacks.
func (store) freeSlug(ctx context.Context, db postgres.DB, teamID uuid.UUID, base string) (string, error) {
	var slug string
	err := db.QueryRow(ctx, `
		SELECT s FROM (
			SELECT $2::text AS s, 1 AS n
			UNION ALL
			SELECT $2 || '-' || g, g FROM generate_series(2, (SELECT count(*) + 2 FROM books WHERE team_id = $1)) g
		) c
		WHERE NOT EXISTS (SELECT 1 FROM books WHERE team_id = $1 AND slug = c.s)
		ORDER BY n LIMIT 1`, teamID, base).Scan(&slug)
	return slug, err
}

func (store) insertBook(ctx context.Context, db postgres.DB, b Book) (Book, error) {
	out, err := scanBook(db.QueryRow(ctx, `
		INSERT INTO books (team_id, name, slug, color, icon, enforce_unique_emails, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+bookColumns,
		b.TeamID, b.Name, b.Slug, b.Color, b.Icon, b.EnforceUniqueEmails, b.CreatedBy), true)
	return out, err // the caller retries slug races
}

func (store) updateBook(ctx context.Context, db postgres.DB, b Book) (Book, error) {
	out, err := scanBook(db.QueryRow(ctx, `
		UPDATE books SET name = $2, color = $3, icon = $4, enforce_unique_emails = $5, updated_at = now()
		WHERE id = $1 RETURNING `+bookColumns, b.ID, b.Name, b.Color, b.Icon, b.EnforceUniqueEmails), true)
	if errors.Is(err, pgx.ErrNoRows) {
		return Book{}, errBookNotFound
	}
	// Turning enforce_unique_emails on marks the book's rows of
	// contact_emails enforced (a trigger, migration 00002); their unique
	// index refuses when contacts already share an address.
	if postgres.IsUniqueViolation(err, "contact_emails_enforced_key") {
		return Book{}, apperr.Wrap(err, apperr.DuplicateEmail,
			"Some contacts in this book share an email address; make their emails unique before requiring unique emails.")
	}
	return out, err
}

func (store) deleteBook(ctx context.Context, db postgres.DB, id uuid.UUID) error {
	_, err := db.Exec(ctx, `DELETE FROM books WHERE id = $1`, id)
	return err
}

const labelColumns = `id, book_id, name, color, sort_order, public, description, created_at, updated_at`

func scanLabel(row pgx.Row) (Label, error) {
	var l Label
	err := row.Scan(&l.ID, &l.BookID, &l.Name, &l.Color, &l.SortOrder, &l.Public, &l.Description, &l.CreatedAt, &l.UpdatedAt)
	return l, err
}

var errLabelNotFound = apperr.NotFoundf("No label with this id in the book.")

func (store) labels(ctx context.Context, db postgres.DB, bookID uuid.UUID) ([]Label, error) {
	rows, err := db.Query(ctx, `SELECT `+labelColumns+` FROM labels WHERE book_id = $1 ORDER BY sort_order, name`, bookID)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Label, error) { return scanLabel(r) })
	return out, err
}

func (store) label(ctx context.Context, db postgres.DB, bookID, id uuid.UUID) (Label, error) {
	l, err := scanLabel(db.QueryRow(ctx, `SELECT `+labelColumns+` FROM labels WHERE book_id = $1 AND id = $2`, bookID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Label{}, errLabelNotFound
	}
	return l, err
}

// insertLabel appends the label after the book's last one, or at
// MaxLabelSortOrder once the last one is there. The book row lock keeps two
// concurrent creates from taking the same position.
func (store) insertLabel(ctx context.Context, db postgres.DB, l Label) (Label, error) {
	if _, err := db.Exec(ctx, `SELECT 1 FROM books WHERE id = $1 FOR UPDATE`, l.BookID); err != nil {
		return Label{}, err
	}
	out, err := scanLabel(db.QueryRow(ctx, `
		INSERT INTO labels (book_id, name, color, sort_order, public, description)
		VALUES ($1, $2, $3, (SELECT LEAST(COALESCE(max(sort_order), -1), $4 - 1) + 1 FROM labels WHERE book_id = $1), $5, $6)
		RETURNING `+labelColumns, l.BookID, l.Name, l.Color, MaxLabelSortOrder, l.Public, l.Description))
	return out, err
}

func (store) updateLabel(ctx context.Context, db postgres.DB, l Label) (Label, error) {
	out, err := scanLabel(db.QueryRow(ctx, `
		UPDATE labels SET name = $3, color = $4, sort_order = $5, public = $6, description = $7, updated_at = now()
		WHERE book_id = $1 AND id = $2 RETURNING `+labelColumns, l.BookID, l.ID, l.Name, l.Color, l.SortOrder, l.Public, l.Description))
	if errors.Is(err, pgx.ErrNoRows) {
		return Label{}, errLabelNotFound
	}
	return out, err
}

func (store) deleteLabel(ctx context.Context, db postgres.DB, bookID, id uuid.UUID) error {
	tag, err := db.Exec(ctx, `DELETE FROM labels WHERE book_id = $1 AND id = $2`, bookID, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return errLabelNotFound
	}
	return nil
}

const fieldColumns = `id, book_id, key, name, type, created_at`

func scanField(row pgx.Row) (Field, error) {
	var f Field
	err := row.Scan(&f.ID, &f.BookID, &f.Key, &f.Name, &f.Type, &f.CreatedAt)
	return f, err
}

func (store) fields(ctx context.Context, db postgres.DB, bookID uuid.UUID) ([]Field, error) {
	rows, err := db.Query(ctx, `SELECT `+fieldColumns+` FROM field_definitions WHERE book_id = $1 ORDER BY created_at, key`, bookID)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Field, error) { return scanField(r) })
	return out, err
}

func (store) insertField(ctx context.Context, db postgres.DB, f Field) (Field, error) {
	out, err := scanField(db.QueryRow(ctx, `
		INSERT INTO field_definitions (book_id, key, name, type) VALUES ($1, $2, $3, $4)
		RETURNING `+fieldColumns, f.BookID, f.Key, f.Name, f.Type))
	if postgres.IsUniqueViolation(err, "field_definitions_book_key_key") {
		return Field{}, apperr.New(apperr.Conflict, "The book already has a field with the key %q.", f.Key)
	}
	return out, err
}

func (store) deleteField(ctx context.Context, db postgres.DB, bookID, id uuid.UUID) error {
	tag, err := db.Exec(ctx, `DELETE FROM field_definitions WHERE book_id = $1 AND id = $2`, bookID, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return apperr.NotFoundf("No field definition with this id in the book.")
	}
	return nil
}

// What other packages read of the books tables beyond the Service: only
// this file touches books, labels and field_definitions. A store of
// another package calls these functions, or, where it needs the data in
// a statement of its own, reads the read models of migration 00043
// (book_teams, label_refs, field_keys), which this package owns.

// Lock takes the book row's lock (FOR UPDATE) for the rest of the
// transaction: writers of the book's settings serialise on it.
func Lock(ctx context.Context, db postgres.DB, bookID uuid.UUID) error {
	_, err := db.Exec(ctx, `SELECT 1 FROM books WHERE id = $1 FOR UPDATE`, bookID)
	return err
}

// MergeFields returns what the book gives a campaign email's merge: its
// name and the keys of its custom fields, sorted.
func MergeFields(ctx context.Context, db postgres.DB, bookID uuid.UUID) (name string, customKeys []string, err error) {
	err = db.QueryRow(ctx, `
		SELECT b.name, ARRAY(SELECT f.key FROM field_definitions f WHERE f.book_id = b.id ORDER BY f.key)
		FROM books b WHERE b.id = $1`, bookID).Scan(&name, &customKeys)
	return name, customKeys, err
}

// LabelOwner returns the book and team of a label and holds the label
// (FOR KEY SHARE) for the transaction, so it cannot be deleted while
// contacts are being tagged with it. ok is false when there is no such
// label.
func LabelOwner(ctx context.Context, db postgres.DB, labelID uuid.UUID) (bookID, teamID uuid.UUID, ok bool, err error) {
	err = db.QueryRow(ctx, `
		SELECT l.book_id, b.team_id FROM labels l JOIN books b ON b.id = l.book_id
		WHERE l.id = $1 FOR KEY SHARE OF l`, labelID).Scan(&bookID, &teamID)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, uuid.Nil, false, nil
	}
	return bookID, teamID, err == nil, err
}

// PublicLabelsAmong returns which of ids are public labels (topics) of
// the book.
func PublicLabelsAmong(ctx context.Context, db postgres.DB, bookID uuid.UUID, ids []uuid.UUID) ([]uuid.UUID, error) {
	rows, _ := db.Query(ctx, `SELECT id FROM labels WHERE id = ANY($2::uuid[]) AND book_id = $1 AND public`, bookID, ids)
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}

// FieldTypeOf returns the type of a field definition of the book and holds
// the definition (FOR KEY SHARE) for the transaction, so values written
// meanwhile cannot outlive it. ok is false when the book has no such
// field.
func FieldTypeOf(ctx context.Context, db postgres.DB, bookID, fieldID uuid.UUID) (typ FieldType, ok bool, err error) {
	err = db.QueryRow(ctx, `SELECT type FROM field_definitions WHERE id = $1 AND book_id = $2 FOR KEY SHARE`, fieldID, bookID).Scan(&typ)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	return typ, err == nil, err
}

// UniqueEmails reports whether the book refuses two contacts sharing an
// email address; ok is false when there is no such book.
func UniqueEmails(ctx context.Context, db postgres.DB, bookID uuid.UUID) (enforced, ok bool, err error) {
	err = db.QueryRow(ctx, `SELECT enforce_unique_emails FROM books WHERE id = $1`, bookID).Scan(&enforced)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	return enforced, err == nil, err
}

// CreateLabels adds labels of the given names to the book, after its
// others in the order given, in one statement (an import creates the
// labels its rows name at once). It returns the id, name and color of
// each.
func CreateLabels(ctx context.Context, db postgres.DB, bookID uuid.UUID, names []string, now time.Time) ([]Label, error) {
	rows, _ := db.Query(ctx, `
		INSERT INTO labels (id, book_id, name, sort_order, created_at, updated_at)
		SELECT gen_random_uuid(), $1, n.name,
		       (SELECT COALESCE(max(sort_order), 0) FROM labels WHERE book_id = $1) + n.ord, $3, $3
		FROM unnest($2::text[]) WITH ORDINALITY AS n(name, ord)
		RETURNING id, name, color`, bookID, names, now)
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Label, error) {
		l := Label{BookID: bookID}
		return l, r.Scan(&l.ID, &l.Name, &l.Color)
	})
}

// CreateFields defines custom fields of the given keys and types (index
// for index) that the book lacks, each named by its key, in one statement
// (an import creates the fields its rows name at once). A key the book
// has, or that another writer defines meanwhile, is left as it is: the
// unique constraint on book and key decides, so concurrent imports and
// instances create each field once. It returns the id and type of every
// key given, as the book has them after the statement.
func CreateFields(ctx context.Context, db postgres.DB, bookID uuid.UUID, keys, types []string) ([]Field, error) {
	// Inserted in key order, so that two imports creating the same keys
	// wait on each other in the same order and never deadlock.
	_, err := db.Exec(ctx, `
		INSERT INTO field_definitions (book_id, key, name, type)
		SELECT $1, k.key, k.key, k.type FROM unnest($2::text[], $3::text[]) AS k(key, type) ORDER BY k.key
		ON CONFLICT ON CONSTRAINT field_definitions_book_key_key DO NOTHING`, bookID, keys, types)
	if err != nil {
		return nil, err
	}
	// A statement of its own: it sees the definitions that another
	// writer committed while the insert waited on them, which the
	// insert's snapshot does not.
	rows, _ := db.Query(ctx, `SELECT `+fieldColumns+` FROM field_definitions WHERE book_id = $1 AND key = ANY($2)`, bookID, keys)
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Field, error) { return scanField(r) })
}
