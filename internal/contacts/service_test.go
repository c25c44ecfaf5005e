package contacts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/contacts/contactstest"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
	"github.com/contactbook/contactbook/internal/suppression"
	"github.com/contactbook/contactbook/internal/testclock"
)

// The rules of a contact, tested on the service against the real database:
// what is refused and how it is named, what is normalised, what a patch
// clears, when an address is a duplicate. How the API answers them (status
// codes, the error envelope, decoding, the book header) is tested over HTTP
// in internal/httpapi.

// bookEnv is a team with its owner and a book, made directly in the
// test's database, and the contacts service wired as the application
// wires it (books, the outbox, suppression marks, a settable clock).
type bookEnv struct {
	t     *testing.T
	ctx   context.Context
	db    *pgtest.Database
	svc   *contacts.Service
	books *books.Service
	owner *auth.Actor
	team  uuid.UUID
	book  uuid.UUID // the team's first book
	clock *testclock.Clock
}

func newBookEnv(t *testing.T) *bookEnv {
	t.Helper()
	db := pgtest.Setup(t)
	b := &bookEnv{t: t, ctx: context.Background(), db: db, clock: testclock.At(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))}
	outbox := events.NewOutbox(func() {})
	b.books = books.NewService(db.DB, outbox, b.clock.Now)
	b.svc = contacts.NewService(contacts.Deps{
		DB: db.DB, Books: b.books, Outbox: outbox, Marks: suppression.New(b.clock.Now).WithOutbox(outbox), Now: b.clock.Now,
	})
	var user uuid.UUID
	if err := db.Pool.QueryRow(b.ctx, `
		WITH t AS (INSERT INTO teams (name) VALUES ('Acme') RETURNING id),
		     u AS (INSERT INTO users (email, name, password_hash) VALUES ('owner@example.com', 'Owner', 'x') RETURNING id),
		     m AS (INSERT INTO team_members (team_id, user_id, role) SELECT t.id, u.id, 'owner' FROM t, u RETURNING team_id, user_id)
		SELECT team_id, user_id FROM m`).Scan(&b.team, &user); err != nil {
		t.Fatal(err)
	}
	// Contact events are written only when a webhook of the team wants them.
	b.exec(`INSERT INTO webhooks (team_id, url, events, secret)
		VALUES ($1, 'https://hooks.example.com/contacts', '{contact.created,contact.updated,contact.deleted}', 'whsec_test')`, b.team)
	b.owner = auth.UserActor(user, accounts.NewService(accounts.Deps{DB: db.DB, Now: b.clock.Now}))
	b.book = b.newBook("Customers", false)
	return b
}

// newBook creates a book of the team (enforcing unique emails when
// strict) and returns its id.
func (b *bookEnv) newBook(name string, strict bool) uuid.UUID {
	b.t.Helper()
	bk, err := b.books.Create(b.ctx, b.owner, books.CreateInput{TeamID: b.team, Name: name, EnforceUniqueEmails: strict})
	if err != nil {
		b.t.Fatalf("create book %q: %v", name, err)
	}
	return bk.ID
}

// strictBook creates a book that enforces unique emails and returns its id.
func (b *bookEnv) strictBook(t *testing.T, name string) uuid.UUID {
	t.Helper()
	return b.newBook(name, true)
}

// scope is the owner working in the book, resolved now (a scope holds the
// book's settings as they were when it was resolved).
func (b *bookEnv) scope(t *testing.T, bookID uuid.UUID) access.Scope {
	t.Helper()
	book, err := b.books.Resolve(b.ctx, b.owner, bookID, books.AsContext)
	if err != nil {
		t.Fatalf("resolve book: %v", err)
	}
	return access.InBook(b.owner, book)
}

// label creates a label in the book and returns its id.
func (b *bookEnv) label(book uuid.UUID, in books.LabelInput) uuid.UUID {
	b.t.Helper()
	l, err := b.books.CreateLabel(b.ctx, b.owner, b.scope(b.t, book).Book, in)
	if err != nil {
		b.t.Fatalf("create label %q: %v", in.Name, err)
	}
	return l.ID
}

// field defines a custom field in the book and returns its id.
func (b *bookEnv) field(book uuid.UUID, key string, typ books.FieldType) uuid.UUID {
	b.t.Helper()
	f, err := b.books.CreateField(b.ctx, b.owner, b.scope(b.t, book).Book, books.FieldInput{Key: key, Name: key, Type: typ})
	if err != nil {
		b.t.Fatalf("create field %q: %v", key, err)
	}
	return f.ID
}

// newContacts creates n contacts in the book named prefix1..prefixN with
// the addresses prefixI@example.com and returns their ids in that order.
func (b *bookEnv) newContacts(book uuid.UUID, prefix string, n int) []string {
	b.t.Helper()
	sc := b.scope(b.t, book)
	ids := make([]string, n)
	for i := range ids {
		name := fmt.Sprintf("%s%d", prefix, i+1)
		c, err := b.svc.Create(b.ctx, sc, withEmails(b.t, name, strings.ToLower(name)+"@example.com"))
		if err != nil {
			b.t.Fatalf("create %s: %v", name, err)
		}
		ids[i] = c.ID.String()
	}
	return ids
}

// seedContacts inserts n contacts into a book in one statement and returns
// their ids in order: contact i is Person i of "Co i%7" with the address
// pI@seed.example, created i seconds after 2026-01-01, starred when i is
// divisible by 3.
func (b *bookEnv) seedContacts(book uuid.UUID, n int) []string {
	b.t.Helper()
	rows, err := b.db.Pool.Query(b.ctx, `
		INSERT INTO contacts (book_id, first_name, last_name, company, emails, starred, created_at, updated_at)
		SELECT $1, 'Person', g::text, 'Co ' || (g % 7), jsonb_build_array(jsonb_build_object('address', 'p' || g || '@seed.example', 'label', 'work', 'primary', true)),
		       g % 3 = 0, timestamptz '2026-01-01' + g * interval '1 second', timestamptz '2026-02-01' - g * interval '1 second'
		FROM generate_series(1, $2) g
		RETURNING id::text`, book, n)
	if err != nil {
		b.t.Fatalf("seed contacts: %v", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.t.Fatalf("seed contacts: %v", err)
	}
	return ids
}

// exec runs a statement the tests need and no service offers.
func (b *bookEnv) exec(sql string, args ...any) {
	b.t.Helper()
	if _, err := b.db.Pool.Exec(b.ctx, sql, args...); err != nil {
		b.t.Fatalf("%s: %v", sql, err)
	}
}

// count is the integer sql selects.
func (b *bookEnv) count(sql string, args ...any) int {
	b.t.Helper()
	var n int
	if err := b.db.Pool.QueryRow(b.ctx, sql, args...).Scan(&n); err != nil {
		b.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// events counts the team's contact events.
func (b *bookEnv) events() int {
	b.t.Helper()
	return b.count(`SELECT count(*)::int FROM events WHERE team_id = $1 AND type LIKE 'contact.%'`, b.team)
}

// decode is v (a request body as the tests write it) as the service's
// input type, decoded as the API decodes it.
func decode[T any](t *testing.T, v any) T {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return out
}

// expectRule fails unless err has code and its message names naming.
func expectRule(t *testing.T, err error, code apperr.Code, naming string) {
	t.Helper()
	if apperr.CodeOf(err) != code {
		t.Fatalf("got %v, want %s", err, code)
	}
	if !strings.Contains(apperr.MessageOf(err), naming) {
		t.Fatalf("message %q does not name %q", apperr.MessageOf(err), naming)
	}
}

func emails(addrs ...string) []any {
	out := make([]any, len(addrs))
	for i, a := range addrs {
		out[i] = map[string]any{"address": a}
	}
	return out
}

// TestCreateRules: each refused contact is refused with the code and the
// field the API reports, and nothing of it (row or event) is written.
func TestCreateRules(t *testing.T) {
	t.Parallel()
	b := newBookEnv(t)
	sc := b.scope(t, b.book)
	long := strings.Repeat("x", 201)
	many := make([]any, 21)
	for i := range many {
		many[i] = map[string]any{"address": fmt.Sprintf("a%d@example.com", i)}
	}
	const invalid, validation = apperr.InvalidInput, apperr.Validation
	cases := []struct {
		name   string
		body   map[string]any
		code   apperr.Code
		naming string
	}{
		{"no name", map[string]any{"job_title": "CEO"}, validation, "first_name"},
		{"blank names", map[string]any{"first_name": "  ", "company": ""}, validation, "company"},
		{"empty object", map[string]any{}, validation, "last_name"},
		{"custom_fields", map[string]any{"first_name": "A", "custom_fields": map[string]any{"x": "y"}}, invalid, "custom_fields"},
		{"custom_fields null", map[string]any{"first_name": "A", "custom_fields": nil}, invalid, "custom_fields"},
		{"labels", map[string]any{"first_name": "A", "labels": []any{}}, invalid, "labels"},
		{"photo_url", map[string]any{"first_name": "A", "photo_url": "https://x.example/p.png"}, invalid, "photo_url"},
		{"bad email", map[string]any{"first_name": "A", "emails": emails("not-an-email")}, invalid, "emails[0].address"},
		{"empty email", map[string]any{"first_name": "A", "emails": []any{map[string]any{"label": "work"}}}, invalid, "emails[0].address"},
		{"email label", map[string]any{"first_name": "A", "emails": []any{map[string]any{"address": "a@b.co", "label": "home"}}}, invalid, "emails[0].label"},
		{"two primary emails", map[string]any{"first_name": "A", "emails": []any{
			map[string]any{"address": "a@b.co", "primary": true}, map[string]any{"address": "c@b.co", "primary": true}}}, invalid, "emails[1].primary"},
		{"same email twice", map[string]any{"first_name": "A", "emails": emails("a@b.co", "A@B.CO")}, invalid, "emails[1].address"},
		{"too many emails", map[string]any{"first_name": "A", "emails": many}, invalid, "emails"},
		{"phone label", map[string]any{"first_name": "A", "phones": []any{map[string]any{"number": "123", "label": "home"}}}, invalid, "phones[0].label"},
		{"phone number", map[string]any{"first_name": "A", "phones": []any{map[string]any{"number": "call me"}}}, invalid, "phones[0].number"},
		{"two primary phones", map[string]any{"first_name": "A", "phones": []any{
			map[string]any{"number": "1", "primary": true}, map[string]any{"number": "2", "primary": true}}}, invalid, "phones[1].primary"},
		{"address label", map[string]any{"first_name": "A", "addresses": []any{map[string]any{"label": "mobile", "city": "X"}}}, invalid, "addresses[0].label"},
		{"empty address", map[string]any{"first_name": "A", "addresses": []any{map[string]any{"label": "home"}}}, invalid, "addresses[0]"},
		{"birthday that does not exist", map[string]any{"first_name": "A", "birthday": "2023-02-29"}, invalid, "birthday"},
		{"birthday format", map[string]any{"first_name": "A", "birthday": "10/12/1815"}, invalid, "birthday"},
		{"birthday year 0", map[string]any{"first_name": "A", "birthday": "0000-01-01"}, invalid, "birthday"},
		{"date value", map[string]any{"first_name": "A", "dates": []any{map[string]any{"label": "x", "value": "2024-13-01"}}}, invalid, "dates[0].value"},
		{"date label", map[string]any{"first_name": "A", "dates": []any{map[string]any{"value": "2024-01-01"}}}, invalid, "dates[0].label"},
		{"website", map[string]any{"first_name": "A", "website": "javascript:alert(1)"}, invalid, "website"},
		{"website without host", map[string]any{"first_name": "A", "website": "https://"}, invalid, "website"},
		{"social label", map[string]any{"first_name": "A", "socials": []any{map[string]any{"label": "myspace", "value": "x"}}}, invalid, "socials[0].label"},
		{"empty social", map[string]any{"first_name": "A", "socials": []any{map[string]any{"label": "x", "value": ""}}}, invalid, "socials[0].value"},
		{"relationship name", map[string]any{"first_name": "A", "relationships": []any{map[string]any{"label": "boss"}}}, invalid, "relationships[0].name"},
		{"relationship contact", map[string]any{"first_name": "A", "relationships": []any{
			map[string]any{"label": "boss", "name": "B", "contact_id": uuid.NewString()}}}, invalid, "relationships[0].contact_id"},
		{"long name", map[string]any{"first_name": long}, invalid, "first_name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.svc.Create(context.Background(), sc, decode[contacts.CreateInput](t, tc.body))
			expectRule(t, err, tc.code, tc.naming)
		})
	}
	if n := b.count(`SELECT count(*)::int FROM contacts`); n != 0 {
		t.Fatalf("%d contacts written by refused creates", n)
	}
	if n := b.events(); n != 0 {
		t.Fatalf("%d events written by refused creates", n)
	}
}

// TestCreateNormalises: what a create stores is trimmed, labelled by
// default and complete (empty arrays, not absent ones).
func TestCreateNormalises(t *testing.T) {
	t.Parallel()
	b := newBookEnv(t)
	sc := b.scope(t, b.book)
	c, err := b.svc.Create(context.Background(), sc, decode[contacts.CreateInput](t, map[string]any{
		"first_name": "  Ada ", "company": " Engines ", "birthday": " ", "emails": emails(" ada@example.com "),
	}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.svc.Get(context.Background(), b.owner, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.FirstName != "Ada" || got.Company != "Engines" || got.Birthday != nil ||
		len(got.Emails) != 1 || got.Emails[0].Address != "ada@example.com" || got.Emails[0].Label != "other" {
		t.Fatalf("stored %+v", got)
	}
	if got.Phones == nil || got.Labels == nil || got.CustomFields == nil || got.Relationships == nil {
		t.Fatalf("absent arrays must come back empty, not null: %+v", got)
	}
}

// TestUpdateRules: a refused patch changes nothing and writes no event;
// null and empty values clear; a kept relationship names a contact of the
// book.
func TestUpdateRules(t *testing.T) {
	t.Parallel()
	b := newBookEnv(t)
	ctx := context.Background()
	sc := b.scope(t, b.book)
	ada, err := b.svc.Create(ctx, sc, decode[contacts.CreateInput](t, contactstest.FullContact()))
	if err != nil {
		t.Fatal(err)
	}
	friend, err := b.svc.Create(ctx, sc, decode[contacts.CreateInput](t, map[string]any{"company": "Babbage Ltd"}))
	if err != nil {
		t.Fatal(err)
	}
	before := b.events()
	patch := func(body map[string]any) (contacts.Contact, error) {
		t.Helper()
		return b.svc.Update(ctx, b.owner, ada.ID, decode[contacts.Patch](t, body))
	}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		code   apperr.Code
		naming string
	}{
		{"nothing to change", map[string]any{}, apperr.InvalidInput, "at least one field"},
		{"labels and custom fields are not patched", map[string]any{"labels": []any{}, "custom_fields": map[string]any{}}, apperr.InvalidInput, "at least one field"},
		{"photo_url", map[string]any{"photo_url": "https://x.example/a.png"}, apperr.InvalidInput, "photo_url"},
		{"photo_url null", map[string]any{"first_name": "B", "photo_url": nil}, apperr.InvalidInput, "photo_url"},
		{"starred null", map[string]any{"starred": nil}, apperr.InvalidInput, "starred"},
		{"bad email", map[string]any{"emails": emails("x")}, apperr.InvalidInput, "emails[0].address"},
		{"no name left", map[string]any{"first_name": "", "last_name": nil, "company": " "}, apperr.Validation, "first_name"},
		{"relationship outside the book", map[string]any{"relationships": []any{map[string]any{"label": "x", "name": "y", "contact_id": uuid.NewString()}}},
			apperr.InvalidInput, "relationships[0].contact_id"},
	} {
		_, err := patch(tc.body)
		if apperr.CodeOf(err) != tc.code || !strings.Contains(apperr.MessageOf(err), tc.naming) {
			t.Errorf("%s: got %v, want %s naming %q", tc.name, err, tc.code, tc.naming)
		}
	}
	if n := b.events(); n != before {
		t.Fatalf("refused patches wrote %d events", n-before)
	}
	if got, err := b.svc.Get(ctx, b.owner, ada.ID); err != nil || got.FirstName != "Ada" || len(got.Emails) != 2 {
		t.Fatalf("refused patches changed the contact: %+v, %v", got, err)
	}

	c, err := patch(map[string]any{
		"emails": nil, "socials": []any{}, "notes": nil, "birthday": "",
		"relationships": []any{map[string]any{"label": "colleague", "name": "Charles", "contact_id": friend.ID.String()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Emails) != 0 || len(c.Socials) != 0 || c.Notes != "" || c.Birthday != nil {
		t.Fatalf("null and empty should clear: %+v", c)
	}
	if len(c.Relationships) != 1 || c.Relationships[0].ContactID == nil || uuid.UUID(*c.Relationships[0].ContactID) != friend.ID || len(c.Addresses) != 1 {
		t.Fatalf("relationships, addresses: %+v", c)
	}
	c, err = patch(map[string]any{"birthday": "2000-02-29", "starred": true, "website": "http://ada.example"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Birthday == nil || *c.Birthday != "2000-02-29" || !c.Starred {
		t.Fatalf("birthday, starred: %+v", c)
	}
	if n := b.events(); n != before+2 {
		t.Fatalf("want 2 contact.updated events, got %d", n-before)
	}
}
