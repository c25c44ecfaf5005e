package contacts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Import modes: what a row whose address belongs to a contact of the book
// does.
const (
	ModeSkip   = "skip"
	ModeUpdate = "update"
	ModeCreate = "create"
)

// ImportRow is one record of an imported file: the contact it describes
// (only the non-empty fields set), the label names and custom values it
// carries, and which file column each field came from (to name the column
// of a row error).
type ImportRow struct {
	Row     int
	Contact Contact
	Labels  []string
	Custom  map[string]string
	// Columns maps a contact field ("emails", "first_name", "custom.tier",
	// "labels") to the file column (or vCard property) it was read from.
	Columns map[string]string
	// Problem, when set, fails the row before anything else is looked at
	// (a value the reader could not take, such as a malformed date).
	Problem *RowError
}

// RowError says why a row failed.
type RowError struct {
	Row     int    `json:"row"`
	Column  string `json:"column"`
	Message string `json:"message"`
}

// ImportOptions are the choices of an import.
type ImportOptions struct {
	Mode         string
	CreateLabels bool
	DryRun       bool
	CreatedBy    *uuid.UUID
}

// ImportResult counts what a batch did (or, dry, would do).
type ImportResult struct {
	Created, Updated, Skipped, Failed int
	Errors                            []RowError
}

// ImportSeen carries, across the batches of one dry run, the addresses
// that earlier batches would have created: a dry run commits nothing, so
// the database cannot tell a later batch about them.
type ImportSeen map[string]struct{}

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
	rows, _ := s.db.Query(ctx, `SELECT key FROM field_definitions WHERE book_id = $1`, bookID)
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

// ImportBatch writes (or, dry, evaluates) a batch of imported rows into the
// book inside tx, set-based: one COPY for the new contacts, one UPDATE for
// the patched ones, one insert each for their labels and custom values,
// and their contact.created / contact.updated events through the outbox
// like every other write. seen is only read and filled in a dry run.
func (s *Service) ImportBatch(ctx context.Context, tx *postgres.Tx, teamID, bookID uuid.UUID, rows []ImportRow, opt ImportOptions, seen ImportSeen) (ImportResult, error) {
	var res ImportResult
	facts, err := s.st.bookFacts(ctx, tx, bookID)
	if err != nil {
		return res, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	fail := func(r ImportRow, column, msg string) {
		res.Failed++
		res.Errors = append(res.Errors, RowError{Row: r.Row, Column: column, Message: msg})
	}

	// Every address of the batch, to find the contacts already holding one.
	var addrs []string
	for i := range rows {
		for _, e := range rows[i].Contact.Emails {
			addrs = append(addrs, strings.ToLower(strings.TrimSpace(e.Address)))
		}
	}
	owners, err := s.st.emailOwners(ctx, tx, bookID, addrs)
	if err != nil {
		return res, err
	}

	var (
		createdIdx = map[string]int{} // address -> index in createdP
		patched    = map[uuid.UUID]*Contact{}
		patchOrder []uuid.UUID
		newLabels  = map[string]string{} // lower name -> name, to create
	)
	// labelsOf resolves a row's label names; unknown names are created when
	// asked, else they fail the row.
	labelsOf := func(r ImportRow) ([]string, string) {
		var out []string
		for _, name := range r.Labels {
			key := strings.ToLower(name)
			if _, ok := facts.labels[key]; !ok {
				if !opt.CreateLabels {
					return nil, fmt.Sprintf("The label %q does not exist in this book; create it first or import with create_labels=true.", name)
				}
				if _, ok := newLabels[key]; !ok {
					newLabels[key] = name
				}
			}
			out = append(out, key)
		}
		return out, ""
	}
	type pendingLabels struct {
		contact *Contact
		keys    []string
	}
	var (
		toLabel  []pendingLabels
		custom   = map[*Contact]map[string]string{}
		createdP []*Contact
		pending  = map[*Contact][]importPatch{}
	)

rowsLoop:
	for _, r := range rows {
		if r.Problem != nil {
			fail(r, r.Problem.Column, r.Problem.Message)
			continue
		}
		c := r.Contact
		c.normalize()
		for key, v := range r.Custom {
			f, ok := facts.fields[key]
			if !ok {
				fail(r, r.Columns["custom."+key], fmt.Sprintf("No custom field with the key %q in this book.", key))
				continue rowsLoop
			}
			if err := checkFieldValue(f.typ, v); err != nil {
				fail(r, r.Columns["custom."+key], strings.Replace(errMessage(err), "`value`", "The value", 1))
				continue rowsLoop
			}
		}
		labelKeys, problem := labelsOf(r)
		if problem != "" {
			fail(r, r.Columns["labels"], problem)
			continue
		}
		// The duplicate: the first address of the row that a contact of
		// the book (or an earlier row of the import) holds.
		var (
			dupID      uuid.UUID
			dupCreated = -1
			dupAddr    string
		)
		for _, e := range c.Emails {
			a := strings.ToLower(e.Address)
			if id, ok := owners[a]; ok {
				dupID, dupAddr = id, a
				break
			}
			if i, ok := createdIdx[a]; ok {
				dupCreated, dupAddr = i, a
				break
			}
			if _, ok := seen[a]; ok && opt.DryRun {
				dupAddr = a
				break
			}
		}
		switch {
		case dupAddr != "" && opt.Mode == ModeSkip:
			res.Skipped++
			continue
		case dupAddr != "" && opt.Mode == ModeUpdate:
			if dupID == uuid.Nil && dupCreated < 0 {
				// A dry run's earlier batch would have created it.
				res.Updated++
				continue
			}
			var target *Contact
			if dupCreated >= 0 {
				target = createdP[dupCreated]
			} else if target = patched[dupID]; target == nil {
				target = &Contact{ID: dupID}
				patched[dupID] = target
				patchOrder = append(patchOrder, dupID)
			}
			// Counted as updated; a patch that turns out invalid moves
			// to failed when applied.
			res.Updated++
			// The patch is applied once the existing contacts are loaded;
			// keep it with the target.
			pending[target] = append(pending[target], importPatch{row: r, contact: c, labels: labelKeys})
			continue
		case dupAddr != "" && opt.Mode == ModeCreate && facts.uniqueEmails:
			fail(r, r.Columns["emails"], fmt.Sprintf("Another contact in this book already has the email address %s, and the book requires unique emails.", dupAddr))
			continue
		}
		if err := c.validate(); err != nil {
			fail(r, columnOf(r, err), errMessage(err))
			continue
		}
		c.ID, c.BookID, c.CreatedBy, c.CreatedAt, c.UpdatedAt = uuid.New(), bookID, opt.CreatedBy, now, now
		cp := &c
		createdP = append(createdP, cp)
		for _, e := range c.Emails {
			a := strings.ToLower(e.Address)
			if _, ok := createdIdx[a]; !ok {
				createdIdx[a] = len(createdP) - 1
			}
		}
		if len(labelKeys) > 0 {
			toLabel = append(toLabel, pendingLabels{contact: cp, keys: labelKeys})
		}
		if len(r.Custom) > 0 {
			custom[cp] = r.Custom
		}
	}

	// apply patches cur with the rows' values in turn; a row whose patch
	// would make the contact invalid fails alone.
	apply := func(target *Contact, cur Contact) (Contact, bool) {
		changed := false
		for _, p := range pending[target] {
			next := cur
			next.Emails, next.Phones = append([]Email(nil), cur.Emails...), append([]Phone(nil), cur.Phones...)
			next.Addresses, next.Dates, next.Socials = append([]Address(nil), cur.Addresses...), append([]Date(nil), cur.Dates...), append([]Social(nil), cur.Socials...)
			mergeImported(&next, p.contact)
			next.normalize()
			if err := next.validate(); err != nil {
				res.Updated--
				fail(p.row, columnOf(p.row, err), errMessage(err))
				continue
			}
			cur, changed = next, true
			if len(p.labels) > 0 {
				toLabel = append(toLabel, pendingLabels{contact: target, keys: p.labels})
			}
			if len(p.row.Custom) > 0 {
				if custom[target] == nil {
					custom[target] = map[string]string{}
				}
				for k, v := range p.row.Custom {
					custom[target][k] = v
				}
			}
		}
		return cur, changed
	}

	// Rows that patch a contact created earlier in this batch apply now.
	for _, cp := range createdP {
		if len(pending[cp]) > 0 {
			*cp, _ = apply(cp, *cp)
		}
	}

	// The existing contacts to patch, loaded whole.
	var updated []*Contact
	if len(patchOrder) > 0 {
		existing, err := s.st.byIDs(ctx, tx, bookID, patchOrder)
		if err != nil {
			return res, err
		}
		byID := make(map[uuid.UUID]Contact, len(existing))
		for _, c := range existing {
			byID[c.ID] = c
		}
		for _, id := range patchOrder {
			target := patched[id]
			cur, ok := byID[id]
			if !ok {
				// Deleted meanwhile: its rows have nothing to update.
				res.Updated -= len(pending[target])
				res.Skipped += len(pending[target])
				continue
			}
			cur, changed := apply(target, cur)
			if !changed {
				continue
			}
			cur.UpdatedAt = now
			*target = cur
			updated = append(updated, target)
		}
	}
	res.Created = len(createdP)
	if opt.DryRun {
		for _, cp := range createdP {
			for _, e := range cp.Emails {
				seen[strings.ToLower(e.Address)] = struct{}{}
			}
		}
		return res, nil
	}

	// Labels first: the new ones are created, then every label is known.
	if len(newLabels) > 0 {
		made, err := s.st.createLabels(ctx, tx, bookID, newLabels, now)
		if err != nil {
			return res, err
		}
		for _, l := range made {
			facts.labels[strings.ToLower(l.Name)] = l
		}
	}
	if err := s.st.copyContacts(ctx, tx, createdP); err != nil {
		return res, s.importErr(err)
	}
	if err := s.st.updateImported(ctx, tx, updated); err != nil {
		return res, s.importErr(err)
	}
	var pairs [2][]uuid.UUID
	for _, pl := range toLabel {
		for _, k := range pl.keys {
			l := facts.labels[k]
			pairs[0], pairs[1] = append(pairs[0], pl.contact.ID), append(pairs[1], l.ID)
			if !hasLabel(pl.contact.Labels, l.ID) {
				pl.contact.Labels = append(pl.contact.Labels, l)
			}
		}
	}
	if err := s.st.tagPairs(ctx, tx, pairs[0], pairs[1], now); err != nil {
		return res, err
	}
	var vals struct {
		contacts, fields []uuid.UUID
		values           []string
	}
	for cp, m := range custom {
		if cp.CustomFields == nil {
			cp.CustomFields = map[string]string{}
		}
		for k, v := range m {
			if v == "" {
				continue
			}
			vals.contacts, vals.fields, vals.values = append(vals.contacts, cp.ID), append(vals.fields, facts.fields[k].id), append(vals.values, v)
			cp.CustomFields[k] = v
		}
	}
	if err := s.st.setValues(ctx, tx, vals.contacts, vals.fields, vals.values, now); err != nil {
		return res, err
	}

	// The events, each with the contact as the API now returns it.
	evs := make([]events.Event, 0, len(createdP)+len(updated))
	if wanted, err := s.outbox.Wanted(ctx, tx, teamID, events.ContactCreated); err != nil {
		return res, err
	} else if wanted {
		for _, cp := range createdP {
			evs = append(evs, contactEvent(events.ContactCreated, teamID, *cp))
		}
	}
	if wanted, err := s.outbox.Wanted(ctx, tx, teamID, events.ContactUpdated); err != nil {
		return res, err
	} else if wanted {
		for _, cp := range updated {
			evs = append(evs, contactEvent(events.ContactUpdated, teamID, *cp))
		}
	}
	return res, s.outbox.Append(ctx, tx, now, evs...)
}

// importPatch is a row that updates a contact, applied once the contact is
// loaded.
type importPatch struct {
	row     ImportRow
	contact Contact
	labels  []string
}

func hasLabel(ls []LabelRef, id uuid.UUID) bool {
	for _, l := range ls {
		if l.ID == id {
			return true
		}
	}
	return false
}

// mergeImported patches dst with the non-empty values of src: scalar
// fields replace, emails and phones not yet present are added, an
// address, date or social replaces the one of the same label.
func mergeImported(dst *Contact, src Contact) {
	set := func(d *string, v string) {
		if v != "" {
			*d = v
		}
	}
	set(&dst.FirstName, src.FirstName)
	set(&dst.LastName, src.LastName)
	set(&dst.Company, src.Company)
	set(&dst.JobTitle, src.JobTitle)
	set(&dst.Notes, src.Notes)
	set(&dst.Website, src.Website)
	if src.TimeZone != nil {
		dst.TimeZone = src.TimeZone
	}
	if src.Birthday != nil {
		dst.Birthday = src.Birthday
	}
	if src.Starred {
		dst.Starred = true
	}
	for _, e := range src.Emails {
		if !slicesContainsFold(dst.Emails, func(x Email) string { return x.Address }, e.Address) {
			e.Primary = e.Primary && !anyPrimary(dst.Emails)
			dst.Emails = append(dst.Emails, e)
		}
	}
	for _, p := range src.Phones {
		if !slicesContainsFold(dst.Phones, func(x Phone) string { return x.Number }, p.Number) {
			p.Primary = false
			dst.Phones = append(dst.Phones, p)
		}
	}
	dst.Addresses = replaceByLabel(dst.Addresses, src.Addresses, func(a Address) string { return a.Label })
	dst.Dates = replaceByLabel(dst.Dates, src.Dates, func(d Date) string { return d.Label })
	dst.Socials = replaceByLabel(dst.Socials, src.Socials, func(s Social) string { return s.Label })
}

func anyPrimary(es []Email) bool {
	for _, e := range es {
		if e.Primary {
			return true
		}
	}
	return false
}

func slicesContainsFold[T any](s []T, key func(T) string, v string) bool {
	for _, x := range s {
		if strings.EqualFold(strings.TrimSpace(key(x)), strings.TrimSpace(v)) {
			return true
		}
	}
	return false
}

func replaceByLabel[T any](dst, src []T, label func(T) string) []T {
	for _, s := range src {
		replaced := false
		for i := range dst {
			if label(dst[i]) == label(s) {
				dst[i], replaced = s, true
				break
			}
		}
		if !replaced {
			dst = append(dst, s)
		}
	}
	return dst
}

// fieldInMessage finds the field an error message names (`emails[0].address`).
var fieldInMessage = regexp.MustCompile("`([a-z_]+)")

// columnOf names the file column of the field a validation error is about.
func columnOf(r ImportRow, err error) string {
	if errors.Is(err, errNoName) {
		return ""
	}
	if m := fieldInMessage.FindStringSubmatch(errMessage(err)); m != nil {
		return r.Columns[m[1]]
	}
	return ""
}

// errMessage is the message of a validation error as a person reads it.
func errMessage(err error) string {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		if errors.Is(err, errNoName) {
			return "The row has none of first name, last name or company; a contact needs at least one."
		}
		return ae.Message
	}
	return err.Error()
}

// importErr classifies a failed write of a batch: the unique-email index
// refusing an address another writer took meanwhile fails the batch with
// a message that says so (the batch is retried and then sees the owner).
func (s *Service) importErr(err error) error {
	if postgres.IsUniqueViolation(err, duplicateEmailIndex) {
		return apperr.Wrap(err, apperr.DuplicateEmail, "Another contact in this book took one of the imported email addresses meanwhile, and the book requires unique emails.")
	}
	return err
}

// bookFacts loads what an import checks rows against.
func (store) bookFacts(ctx context.Context, db postgres.DB, bookID uuid.UUID) (bookFacts, error) {
	f := bookFacts{labels: map[string]LabelRef{}, fields: map[string]fieldDef{}}
	if err := db.QueryRow(ctx, `SELECT enforce_unique_emails FROM books WHERE id = $1`, bookID).Scan(&f.uniqueEmails); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return f, apperr.NotFoundf("The book no longer exists.")
		}
		return f, err
	}
	var l LabelRef
	rows, _ := db.Query(ctx, `SELECT id, name, color FROM labels WHERE book_id = $1 ORDER BY sort_order, name, id`, bookID)
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
	rows, _ = db.Query(ctx, `SELECT key, id, type FROM field_definitions WHERE book_id = $1`, bookID)
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

// createLabels adds the named labels to the book, after its others.
func (store) createLabels(ctx context.Context, db postgres.DB, bookID uuid.UUID, names map[string]string, now time.Time) ([]LabelRef, error) {
	list := make([]string, 0, len(names))
	for _, n := range names {
		list = append(list, n)
	}
	rows, _ := db.Query(ctx, `
		INSERT INTO labels (id, book_id, name, sort_order, created_at, updated_at)
		SELECT gen_random_uuid(), $1, n.name,
		       (SELECT COALESCE(max(sort_order), 0) FROM labels WHERE book_id = $1) + n.ord, $3, $3
		FROM unnest($2::text[]) WITH ORDINALITY AS n(name, ord)
		RETURNING id, name, color`, bookID, list, now)
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (LabelRef, error) {
		var l LabelRef
		return l, r.Scan(&l.ID, &l.Name, &l.Color)
	})
}

// copyContacts inserts new contacts with COPY.
func (store) copyContacts(ctx context.Context, db postgres.DB, cs []*Contact) error {
	if len(cs) == 0 {
		return nil
	}
	_, err := db.CopyFrom(ctx, pgx.Identifier{"contacts"},
		[]string{"id", "book_id", "first_name", "last_name", "company", "job_title", "notes", "website",
			"time_zone", "emails", "phones", "addresses", "dates", "socials", "relationships", "starred", "birthday", "created_by", "created_at", "updated_at"},
		pgx.CopyFromSlice(len(cs), func(i int) ([]any, error) {
			c := cs[i]
			return []any{c.ID, c.BookID, c.FirstName, c.LastName, c.Company, c.JobTitle, c.Notes, c.Website,
				c.TimeZone, c.Emails, c.Phones, c.Addresses, c.Dates, c.Socials, c.Relationships, c.Starred, dateParam(c.Birthday),
				c.CreatedBy, c.CreatedAt, c.UpdatedAt}, nil
		}))
	return err
}

// updateImported writes patched contacts in one statement.
func (store) updateImported(ctx context.Context, db postgres.DB, cs []*Contact) error {
	if len(cs) == 0 {
		return nil
	}
	n := len(cs)
	var (
		ids                                         = make([]uuid.UUID, n)
		first, last, company, title, notes, website = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		emails, phones, addrs, dates, socials       = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		starred                                     = make([]bool, n)
		zones                                       = make([]*string, n)
		birthdays                                   = make([]pgtype.Date, n)
	)
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for i, c := range cs {
		ids[i], first[i], last[i], company[i], title[i], notes[i], website[i] = c.ID, c.FirstName, c.LastName, c.Company, c.JobTitle, c.Notes, c.Website
		emails[i], phones[i], addrs[i], dates[i], socials[i] = js(c.Emails), js(c.Phones), js(c.Addresses), js(c.Dates), js(c.Socials)
		starred[i], birthdays[i], zones[i] = c.Starred, dateParam(c.Birthday), c.TimeZone
	}
	_, err := db.Exec(ctx, `
		UPDATE contacts c SET first_name = u.first_name, last_name = u.last_name, company = u.company,
			job_title = u.job_title, notes = u.notes, website = u.website, emails = u.emails, phones = u.phones,
			addresses = u.addresses, dates = u.dates, socials = u.socials, starred = u.starred,
			birthday = u.birthday, time_zone = u.time_zone, updated_at = $14
		FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
		            $8::jsonb[], $9::jsonb[], $10::jsonb[], $11::jsonb[], $12::jsonb[], $13::bool[], $15::date[], $16::text[])
		     AS u(id, first_name, last_name, company, job_title, notes, website, emails, phones, addresses, dates, socials, starred, birthday, time_zone)
		WHERE c.id = u.id`, postgres.PlanEachTime,
		ids, first, last, company, title, notes, website, emails, phones, addrs, dates, socials, starred, cs[0].UpdatedAt, birthdays, zones)
	return err
}

// tagPairs adds the (contact, label) pairs.
func (store) tagPairs(ctx context.Context, db postgres.DB, contactIDs, labelIDs []uuid.UUID, now time.Time) error {
	if len(contactIDs) == 0 {
		return nil
	}
	_, err := db.Exec(ctx, `
		INSERT INTO contact_labels (contact_id, label_id, created_at)
		SELECT * , $3::timestamptz FROM unnest($1::uuid[], $2::uuid[])
		ON CONFLICT DO NOTHING`, postgres.PlanEachTime, contactIDs, labelIDs, now)
	return err
}

// setValues writes custom field values, creating or overwriting.
func (store) setValues(ctx context.Context, db postgres.DB, contactIDs, fieldIDs []uuid.UUID, values []string, now time.Time) error {
	if len(contactIDs) == 0 {
		return nil
	}
	_, err := db.Exec(ctx, `
		INSERT INTO contact_field_values AS v (contact_id, field_id, value, updated_at)
		SELECT *, $4::timestamptz FROM unnest($1::uuid[], $2::uuid[], $3::text[])
		ON CONFLICT (contact_id, field_id) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
		postgres.PlanEachTime, contactIDs, fieldIDs, values, now)
	return err
}

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
