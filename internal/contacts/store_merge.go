package contacts

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
)

// MergeRecord is what a campaign email's merge tags read of one contact:
// its fields as text (birthday as YYYY-MM-DD, "" when unset), its
// primary email and phone (else the first), and its custom values as a
// JSON object by field key (nil when it has none).
type MergeRecord struct {
	ID                                                                      uuid.UUID
	FirstName, LastName, Company, JobTitle, Website, Birthday, Email, Phone string
	Custom                                                                  []byte
}

// MergeRecordOf reads the merge data of the book's contact id, or of its
// oldest contact when id is nil (what a test send previews); found is
// false when there is none.
func MergeRecordOf(ctx context.Context, db postgres.DB, bookID uuid.UUID, id *uuid.UUID) (r MergeRecord, found bool, err error) {
	err = db.QueryRow(ctx, `
		SELECT ct.id, ct.first_name, ct.last_name, ct.company, ct.job_title, ct.website,
		       COALESCE(to_char(ct.birthday, 'YYYY-MM-DD'), ''),
		       COALESCE(CASE WHEN jsonb_array_length(ct.emails) < 2 THEN ct.emails -> 0 ->> 'address'
		           ELSE COALESCE(jsonb_path_query_first(ct.emails, '$[*] ? (@.primary == true).address') #>> '{}', ct.emails -> 0 ->> 'address') END, ''),
		       COALESCE(CASE WHEN jsonb_array_length(ct.phones) < 2 THEN ct.phones -> 0 ->> 'number'
		           ELSE COALESCE(jsonb_path_query_first(ct.phones, '$[*] ? (@.primary == true).number') #>> '{}', ct.phones -> 0 ->> 'number') END, ''),
		       (SELECT jsonb_object_agg(fd.key, v.value) FROM contact_field_values v
		        JOIN field_keys fd ON fd.id = v.field_id WHERE v.contact_id = ct.id)
		FROM contacts ct WHERE ct.book_id = $1 AND ($2::uuid IS NULL OR ct.id = $2)
		ORDER BY ct.created_at, ct.id LIMIT 1`, bookID, id).
		Scan(&r.ID, &r.FirstName, &r.LastName, &r.Company, &r.JobTitle, &r.Website, &r.Birthday, &r.Email, &r.Phone, &r.Custom)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	return r, true, nil
}

// HasAddress reports whether a contact of the book has the address
// (any of its emails, compared case-insensitively).
func HasAddress(ctx context.Context, db postgres.DB, bookID uuid.UUID, address string) (bool, error) {
	var ok bool
	err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM contact_emails WHERE book_id = $1 AND address_lower = lower($2))`, bookID, address).Scan(&ok)
	return ok, err
}

// ByAddress returns the book's contact holding the address (compared
// case-insensitively; the oldest when several do); found is false when
// none does. Transactional emails and product events name contacts by
// address.
func ByAddress(ctx context.Context, db postgres.DB, bookID uuid.UUID, address string) (id uuid.UUID, found bool, err error) {
	m, err := store{}.findEmail(ctx, db, bookID, address, uuid.Nil)
	if err != nil || m == nil {
		return uuid.Nil, false, err
	}
	return m.ContactID, true, nil
}
