package contacts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/postgres"
)

// store is the contacts SQL.
type store struct{}

// contactColumns is a contact's own row (aliased c).
const contactColumns = `c.id, c.book_id, c.first_name, c.last_name, c.company, c.job_title, c.notes, c.website, c.time_zone,
	c.emails, c.phones, c.addresses, c.dates, c.socials, c.relationships, c.photo_url, c.starred, c.birthday,
	c.created_by, c.created_at, c.updated_at`

// fullColumns adds the contact's labels and custom field values, aggregated
// in the same statement: one statement answers GET by id (the hottest
// read) or a page of 50. Large sets load them with attachments instead.
const fullColumns = contactColumns + `,
	(SELECT COALESCE(json_agg(json_build_object('id', l.id, 'name', l.name, 'color', l.color)
	                 ORDER BY l.sort_order, l.name, l.id), '[]')
	   FROM contact_labels cl JOIN label_refs l ON l.id = cl.label_id WHERE cl.contact_id = c.id),
	(SELECT COALESCE(json_object_agg(f.key, v.value), '{}')
	   FROM contact_field_values v JOIN field_keys f ON f.id = v.field_id WHERE v.contact_id = c.id)`

// scanContact scans contactColumns, then fullColumns' two aggregates when
// full, then extra.
func scanContact(row pgx.Row, full bool, extra ...any) (Contact, error) {
	var (
		c        Contact
		birthday pgtype.Date
		lists    [8][]byte // the JSON columns, decoded below
	)
	dest := []any{&c.ID, &c.BookID, &c.FirstName, &c.LastName, &c.Company, &c.JobTitle, &c.Notes, &c.Website, &c.TimeZone,
		&lists[0], &lists[1], &lists[2], &lists[3], &lists[4], &lists[5], &c.PhotoURL, &c.Starred, &birthday,
		&c.CreatedBy, &c.CreatedAt, &c.UpdatedAt}
	if full {
		dest = append(dest, &lists[6], &lists[7])
	}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return Contact{}, err
	}
	err := errors.Join(decodeJSON(lists[0], &c.Emails), decodeJSON(lists[1], &c.Phones), decodeJSON(lists[2], &c.Addresses),
		decodeJSON(lists[3], &c.Dates), decodeJSON(lists[4], &c.Socials), decodeJSON(lists[5], &c.Relationships),
		decodeJSON(lists[6], &c.Labels), decodeJSON(lists[7], &c.CustomFields))
	if err != nil {
		return Contact{}, fmt.Errorf("decode contact %s: %w", c.ID, err)
	}
	if birthday.Valid {
		s := birthday.Time.Format(time.DateOnly)
		c.Birthday = &s
	}
	c.normalize()
	return c, nil
}

// decodeJSON decodes a JSON column. Most array columns of most contacts are
// empty, and "[]" or "{}" skip the decoder (a third of the cost of loading
// the 10,000 contacts of a bulk event batch); normalize fills them in.
func decodeJSON(b []byte, dst any) error {
	if len(b) == 0 || string(b) == "[]" || string(b) == "{}" {
		return nil
	}
	return json.Unmarshal(b, dst)
}

// attachments are the labels and custom field values of a set of
// contacts, loaded with set-based statements whatever the number of
// contacts: for the 10,000 contacts of a bulk event batch this is several
// times cheaper than fullColumns' per-row aggregates.
type attachments struct {
	labelIDs map[uuid.UUID][]uuid.UUID // per contact, in label order
	labels   map[uuid.UUID]LabelRef    // the book's labels
	fields   map[uuid.UUID]map[string]string
}

// loadAttachments reads the attachments of the book's contacts among ids.
// Labels come as (contact, label) id pairs plus the book's labels once, so
// 10,000 tagged contacts do not carry 10,000 copies of each label's name
// and colour.
func loadAttachments(ctx context.Context, db postgres.DB, bookID uuid.UUID, ids []uuid.UUID) (*attachments, error) {
	a := &attachments{labelIDs: map[uuid.UUID][]uuid.UUID{}, labels: map[uuid.UUID]LabelRef{}, fields: map[uuid.UUID]map[string]string{}}
	var (
		cid, lid   uuid.UUID
		l          LabelRef
		key, value string
	)
	rows, _ := db.Query(ctx, `
		SELECT cl.contact_id, cl.label_id
		FROM contact_labels cl JOIN label_refs l ON l.id = cl.label_id
		WHERE cl.contact_id = ANY($1)
		ORDER BY l.sort_order, l.name, l.id`, postgres.PlanEachTime, ids)
	_, err := pgx.ForEachRow(rows, []any{&cid, &lid}, func() error {
		a.labelIDs[cid] = append(a.labelIDs[cid], lid)
		return nil
	})
	if err != nil {
		return nil, err
	}
	rows, _ = db.Query(ctx, `SELECT id, name, color FROM label_refs WHERE book_id = $1`, bookID)
	_, err = pgx.ForEachRow(rows, []any{&l.ID, &l.Name, &l.Color}, func() error {
		a.labels[l.ID] = l
		return nil
	})
	if err != nil {
		return nil, err
	}
	rows, _ = db.Query(ctx, `
		SELECT v.contact_id, f.key, v.value
		FROM contact_field_values v JOIN field_keys f ON f.id = v.field_id
		WHERE v.contact_id = ANY($1)`, postgres.PlanEachTime, ids)
	_, err = pgx.ForEachRow(rows, []any{&cid, &key, &value}, func() error {
		m := a.fields[cid]
		if m == nil {
			m = map[string]string{}
			a.fields[cid] = m
		}
		m[key] = value
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// apply puts the loaded labels and values into the contacts.
func (a *attachments) apply(cs []Contact) {
	for i := range cs {
		if lids := a.labelIDs[cs[i].ID]; lids != nil {
			ls := make([]LabelRef, 0, len(lids))
			for _, id := range lids {
				// Missing only if the label was deleted between the two
				// statements; its pairs went with it.
				if l, ok := a.labels[id]; ok {
					ls = append(ls, l)
				}
			}
			cs[i].Labels = ls
		}
		if fs := a.fields[cs[i].ID]; fs != nil {
			cs[i].CustomFields = fs
		}
	}
}

// dateParam turns a validated YYYY-MM-DD into a date parameter.
func dateParam(s *string) pgtype.Date {
	if s == nil {
		return pgtype.Date{}
	}
	t, err := time.Parse(time.DateOnly, *s)
	return pgtype.Date{Time: t, Valid: err == nil}
}

// duplicateEmailIndex is the unique index that refuses a duplicate email
// in a book that enforces unique emails.
const duplicateEmailIndex = "contact_emails_enforced_key"

var errContactNotFound = apperr.NotFoundf("No contact with this id.")

// insert queues the insert of a contact built in full by the service
// (id and timestamps included), so nothing needs to come back.
func (store) insert(b *pgx.Batch, c Contact) {
	b.Queue(`
		INSERT INTO contacts (id, book_id, first_name, last_name, company, job_title, notes, website, time_zone,
			emails, phones, addresses, dates, socials, relationships, starred, birthday, created_by, created_at, updated_at)
		VALUES (@id, @book_id, @first_name, @last_name, @company, @job_title, @notes, @website, @time_zone,
			@emails, @phones, @addresses, @dates, @socials, @relationships, @starred, @birthday, @created_by, @created_at, @created_at)`,
		pgx.StrictNamedArgs{
			"id": c.ID, "book_id": c.BookID, "first_name": c.FirstName, "last_name": c.LastName,
			"company": c.Company, "job_title": c.JobTitle, "notes": c.Notes, "website": c.Website, "time_zone": c.TimeZone,
			"emails": c.Emails, "phones": c.Phones, "addresses": c.Addresses, "dates": c.Dates,
			"socials": c.Socials, "relationships": c.Relationships, "starred": c.Starred,
			"birthday": dateParam(c.Birthday), "created_by": c.CreatedBy, "created_at": c.CreatedAt,
		})
}

// byID loads a contact with its labels and values, and the team owning
// its book, in one statement. forUpdate locks the row for the rest of the
// transaction (a patch reads, applies, writes).
func (store) byID(ctx context.Context, db postgres.DB, id uuid.UUID, forUpdate bool) (Contact, uuid.UUID, error) {
	lock := ""
	if forUpdate {
		lock = " FOR NO KEY UPDATE OF c"
	}
	var teamID uuid.UUID
	c, err := scanContact(db.QueryRow(ctx, `
		SELECT `+fullColumns+`, b.team_id FROM contacts c JOIN book_teams b ON b.book_id = c.book_id
		WHERE c.id = $1`+lock, id), true, &teamID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Contact{}, uuid.Nil, errContactNotFound
	}
	return c, teamID, err
}

// owner returns the book and team of a contact.
func (store) owner(ctx context.Context, db postgres.DB, id uuid.UUID) (bookID, teamID uuid.UUID, err error) {
	err = db.QueryRow(ctx, `SELECT c.book_id, b.team_id FROM contacts c JOIN book_teams b ON b.book_id = c.book_id WHERE c.id = $1`, id).
		Scan(&bookID, &teamID)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, uuid.Nil, errContactNotFound
	}
	return bookID, teamID, err
}

// byIDs loads the contacts of a book among ids, with their labels and
// values; the order is unspecified.
func (store) byIDs(ctx context.Context, db postgres.DB, bookID uuid.UUID, ids []uuid.UUID) ([]Contact, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.Query(ctx, `SELECT `+contactColumns+` FROM contacts c WHERE c.id = ANY($2) AND c.book_id = $1`,
		postgres.PlanEachTime, bookID, ids)
	if err != nil {
		return nil, err
	}
	// Sized up front: growing a slice of 10,000 contacts by doubling
	// copied and allocated more than the scan itself.
	cs, err := pgx.AppendRows(make([]Contact, 0, len(ids)), rows, func(r pgx.CollectableRow) (Contact, error) { return scanContact(r, false) })
	if err != nil {
		return nil, err
	}
	a, err := loadAttachments(ctx, db, bookID, ids)
	if err != nil {
		return nil, err
	}
	a.apply(cs)
	return cs, nil
}

func (store) update(ctx context.Context, db postgres.DB, c Contact, now time.Time) (Contact, error) {
	return scanContact(db.QueryRow(ctx, `
		UPDATE contacts c SET first_name = @first_name, last_name = @last_name, company = @company,
			job_title = @job_title, notes = @notes, website = @website, time_zone = @time_zone,
			emails = @emails, phones = @phones, addresses = @addresses, dates = @dates, socials = @socials,
			relationships = @relationships, starred = @starred, birthday = @birthday, updated_at = @now
		WHERE c.id = @id
		RETURNING `+contactColumns,
		pgx.StrictNamedArgs{
			"id": c.ID, "first_name": c.FirstName, "last_name": c.LastName, "company": c.Company,
			"job_title": c.JobTitle, "notes": c.Notes, "website": c.Website, "time_zone": c.TimeZone,
			"emails": c.Emails, "phones": c.Phones, "addresses": c.Addresses, "dates": c.Dates,
			"socials": c.Socials, "relationships": c.Relationships, "starred": c.Starred,
			"birthday": dateParam(c.Birthday), "now": now,
		}), false)
}

// existing returns which of ids (a contact's relationships, at most 50)
// are contacts of the book.
func (store) existing(ctx context.Context, db postgres.DB, bookID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	rows, err := db.Query(ctx, `SELECT c.id FROM contacts c WHERE c.id = ANY($2) AND c.book_id = $1`, bookID, ids)
	found, err := collectIDs(rows, err)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]bool, len(found))
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}

// takenEmail names the first of addresses (lower-cased) that a contact of
// the book other than except already has, or "" when none does.
func (store) takenEmail(ctx context.Context, db postgres.DB, bookID, except uuid.UUID, addresses []string) (string, error) {
	var addr string
	err := db.QueryRow(ctx, `
		SELECT address_lower FROM contact_emails
		WHERE book_id = $1 AND address_lower = ANY($2) AND contact_id <> $3
		ORDER BY array_position($2, address_lower) LIMIT 1`, bookID, addresses, except).Scan(&addr)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return addr, err
}

// emailMatch is the contact holding an address.
type emailMatch struct {
	ContactID uuid.UUID
	Name      string
}

func (store) findEmail(ctx context.Context, db postgres.DB, bookID uuid.UUID, address string, exclude uuid.UUID) (*emailMatch, error) {
	var (
		m                    emailMatch
		first, last, company string
	)
	err := db.QueryRow(ctx, `
		SELECT c.id, c.first_name, c.last_name, c.company
		FROM contact_emails e JOIN contacts c ON c.id = e.contact_id
		WHERE e.book_id = $1 AND e.address_lower = lower($2) AND e.contact_id <> $3
		ORDER BY c.created_at, c.id LIMIT 1`, bookID, address, exclude).Scan(&m.ContactID, &first, &last, &company)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m.Name = Contact{FirstName: first, LastName: last, Company: company}.DisplayName()
	return &m, nil
}

// page is one page of a list: its contacts in order, and the sort key of
// the last one (for the next cursor) when more follow.
type page struct {
	items   []Contact
	lastKey any // time.Time or string; nil when the page is the last
}

// list reads a page in two steps inside one statement: the ids of the
// page first (from the book's index on the sort column, index-only where
// the visibility map allows, past the offset or after the cursor), then
// the page's rows with their labels and values. The per-row aggregates of
// fullColumns thus run for the page's rows only, never for the rows an
// offset skips. One row more than the limit tells whether a next page
// exists.
//
// total is how many contacts match. When the offset lies past the middle,
// the page is read from the other end of the index and turned round: a
// page near the end of a 100,000-contact book skips few rows instead of
// almost all of them.
func (store) list(ctx context.Context, db postgres.DB, bookID uuid.UUID, f Filter, after *position, total int64) (page, error) {
	o := sortOrders[f.Sort]
	limit, offset := f.Limit+1, f.Offset
	fromEnd := after == nil && int64(f.Offset) > total/2
	if fromEnd {
		if int64(f.Offset) >= total {
			return page{}, nil
		}
		end := min(int64(f.Offset+f.Limit), total)
		limit, offset = int(end)-f.Offset, int(total-end)
		o.desc = !o.desc
	}
	where, args := listWhere(bookID, f)
	if after != nil {
		args = append(args, after.key, after.id)
		where += " AND " + o.after(fmt.Sprintf("$%d", len(args)-1), fmt.Sprintf("$%d", len(args)))
	}
	args = append(args, limit, offset)
	rows, err := db.Query(ctx, fmt.Sprintf(`
		SELECT %s, p.key
		FROM (SELECT c.id, %s AS key FROM contacts c WHERE %s ORDER BY %s LIMIT $%d OFFSET $%d) p
		JOIN contacts c ON c.id = p.id
		ORDER BY %s`,
		fullColumns, o.column, where, o.orderBy(o.column, "c.id"), len(args)-1, len(args), o.orderBy("p.key", "p.id")), f.queryArgs(args)...)
	if err != nil {
		return page{}, err
	}
	var (
		out  page
		key  any
		keys []any
	)
	out.items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Contact, error) {
		c, err := scanContact(r, true, &key)
		keys = append(keys, key)
		return c, err
	})
	if err != nil {
		return page{}, err
	}
	switch {
	case fromEnd:
		slices.Reverse(out.items)
		slices.Reverse(keys)
		if n := len(out.items); n > 0 && int64(f.Offset+n) < total {
			out.lastKey = keys[n-1]
		}
	case len(out.items) > f.Limit:
		out.items, out.lastKey = out.items[:f.Limit], keys[f.Limit-1]
	}
	return out, nil
}

func (store) count(ctx context.Context, db postgres.DB, bookID uuid.UUID, f Filter) (int64, error) {
	where, args := listWhere(bookID, f)
	var n int64
	err := db.QueryRow(ctx, `SELECT count(*) FROM contacts c WHERE `+where, f.queryArgs(args)...).Scan(&n)
	return n, err
}

// labelOwner loads the book and team of a label and holds the label (FOR
// KEY SHARE) so it cannot be deleted while contacts are being tagged.
func (store) labelOwner(ctx context.Context, db postgres.DB, labelID uuid.UUID) (bookID, teamID uuid.UUID, err error) {
	bookID, teamID, ok, err := books.LabelOwner(ctx, db, labelID)
	if err == nil && !ok {
		return uuid.Nil, uuid.Nil, errLabelNotFound
	}
	return bookID, teamID, err
}

var errLabelNotFound = apperr.NotFoundf("No label with this id.")

// fieldType loads the type of a field definition of the book and holds it
// (FOR KEY SHARE) for the transaction.
func (store) fieldType(ctx context.Context, db postgres.DB, bookID, fieldID uuid.UUID) (books.FieldType, error) {
	typ, ok, err := books.FieldTypeOf(ctx, db, bookID, fieldID)
	if err == nil && !ok {
		return "", apperr.NotFoundf("No custom field definition with this id in the book.")
	}
	return typ, err
}

// addLabels tags the book's contacts among ids; it returns the contacts
// that did not have the label yet. The contacts are locked FOR KEY SHARE as
// a foreign key would lock them.
func (store) addLabels(ctx context.Context, db postgres.DB, bookID, labelID uuid.UUID, ids []uuid.UUID, now time.Time) ([]uuid.UUID, error) {
	return collectIDs(db.Query(ctx, `
		INSERT INTO contact_labels (contact_id, label_id, created_at)
		SELECT c.id, $2, $4 FROM contacts c WHERE c.id = ANY($3) AND c.book_id = $1 FOR KEY SHARE
		ON CONFLICT DO NOTHING
		RETURNING contact_id`, postgres.PlanEachTime, bookID, labelID, ids, now))
}

// removeLabels untags the book's contacts among ids; it returns those that
// had the label.
func (store) removeLabels(ctx context.Context, db postgres.DB, bookID, labelID uuid.UUID, ids []uuid.UUID) ([]uuid.UUID, error) {
	return collectIDs(db.Query(ctx, `
		DELETE FROM contact_labels cl USING contacts c
		WHERE cl.contact_id = ANY($3) AND cl.label_id = $2 AND c.id = cl.contact_id AND c.book_id = $1
		RETURNING cl.contact_id`, postgres.PlanEachTime, bookID, labelID, ids))
}

// setField writes value into the field of the book's contacts among ids,
// creating or overwriting; it returns the contacts whose value changed.
func (store) setField(ctx context.Context, db postgres.DB, bookID, fieldID uuid.UUID, ids []uuid.UUID, value string, now time.Time) ([]uuid.UUID, error) {
	return collectIDs(db.Query(ctx, `
		INSERT INTO contact_field_values AS v (contact_id, field_id, value, updated_at)
		SELECT c.id, $2, $4, $5 FROM contacts c WHERE c.id = ANY($3) AND c.book_id = $1 FOR KEY SHARE
		ON CONFLICT (contact_id, field_id) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
			WHERE v.value IS DISTINCT FROM EXCLUDED.value
		RETURNING v.contact_id`, postgres.PlanEachTime, bookID, fieldID, ids, value, now))
}

// clearField removes the field's value from the book's contacts among ids;
// it returns those that had one.
func (store) clearField(ctx context.Context, db postgres.DB, bookID, fieldID uuid.UUID, ids []uuid.UUID) ([]uuid.UUID, error) {
	return collectIDs(db.Query(ctx, `
		DELETE FROM contact_field_values v USING contacts c
		WHERE v.contact_id = ANY($3) AND v.field_id = $2 AND c.id = v.contact_id AND c.book_id = $1
		RETURNING v.contact_id`, postgres.PlanEachTime, bookID, fieldID, ids))
}

// deleteMany deletes the book's contacts among ids and returns which went.
// Their labels, values, email rows and interactions go with them (trigger),
// campaign enrolments by their foreign keys.
func (store) deleteMany(ctx context.Context, db postgres.DB, bookID uuid.UUID, ids []uuid.UUID) ([]uuid.UUID, error) {
	return collectIDs(db.Query(ctx, `
		DELETE FROM contacts WHERE id = ANY($2) AND book_id = $1 RETURNING id`, postgres.PlanEachTime, bookID, ids))
}

func collectIDs(rows pgx.Rows, err error) ([]uuid.UUID, error) {
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (uuid.UUID, error) {
		var id uuid.UUID
		err := r.Scan(&id)
		return id, err
	})
	return ids, err
}

// Addresses lists every email address the contact holds, lower-cased and
// sorted (none for an unknown contact): what another package reads of a
// contact's emails outside a statement of its own.
func Addresses(ctx context.Context, db postgres.DB, contactID uuid.UUID) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT address_lower FROM contact_emails WHERE contact_id = $1 ORDER BY address_lower`, contactID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Owner returns the book of a contact and the team owning that book; ok
// is false when there is no such contact.
func Owner(ctx context.Context, db postgres.DB, contactID uuid.UUID) (bookID, teamID uuid.UUID, ok bool, err error) {
	bookID, teamID, err = store{}.owner(ctx, db, contactID)
	if errors.Is(err, errContactNotFound) {
		return uuid.Nil, uuid.Nil, false, nil
	}
	return bookID, teamID, err == nil, err
}

// primaryAddress is the contact's primary email address as written ("" for
// none): the first address, or the one marked primary among several.
func (st store) primaryAddress(ctx context.Context, db postgres.DB, id uuid.UUID) (string, error) {
	m, err := st.primaryAddresses(ctx, db, []uuid.UUID{id})
	return m[id], err
}
