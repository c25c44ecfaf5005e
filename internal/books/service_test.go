package books_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/optional"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// The rules of a book, tested on the service over its own database: who
// may create, change and delete one, how slugs are chosen and kept, what
// a delete takes with it. The API's answers to them are tested in
// internal/httpapi.

type booksEnv struct {
	t     *testing.T
	ctx   context.Context
	db    *pgtest.Database
	svc   *books.Service
	roles *accounts.Service // the role lookup, as wired
}

func newBooksEnv(t *testing.T) *booksEnv {
	t.Helper()
	db := pgtest.Setup(t)
	now := func() time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) }
	return &booksEnv{
		t: t, ctx: context.Background(), db: db,
		svc:   books.NewService(db.DB, events.NewOutbox(func() {}), now),
		roles: accounts.NewService(accounts.Deps{DB: db.DB, Now: now}),
	}
}

// team creates a team and returns its id.
func (e *booksEnv) team(name string) uuid.UUID {
	e.t.Helper()
	var id uuid.UUID
	if err := e.db.Pool.QueryRow(e.ctx, `INSERT INTO teams (name) VALUES ($1) RETURNING id`, name).Scan(&id); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// user adds a user of the team in role and returns them as an actor.
func (e *booksEnv) user(team uuid.UUID, role string) *auth.Actor {
	e.t.Helper()
	var id uuid.UUID
	if err := e.db.Pool.QueryRow(e.ctx, `
		WITH u AS (INSERT INTO users (email, name, password_hash) VALUES ($1, $2, 'x') RETURNING id)
		INSERT INTO team_members (team_id, user_id, role) SELECT $3, id, $2 FROM u RETURNING user_id`,
		uuid.NewString()+"@example.com", role, team).Scan(&id); err != nil {
		e.t.Fatal(err)
	}
	return auth.UserActor(id, e.roles)
}

func (e *booksEnv) create(actor *auth.Actor, team uuid.UUID, name string) books.Book {
	e.t.Helper()
	b, err := e.svc.Create(e.ctx, actor, books.CreateInput{TeamID: team, Name: name})
	if err != nil {
		e.t.Fatalf("create %q: %v", name, err)
	}
	return b
}

func (e *booksEnv) count(sql string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.db.Pool.QueryRow(e.ctx, sql, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func expectCode(t *testing.T, what string, err error, code apperr.Code) {
	t.Helper()
	if !apperr.Is(err, code) {
		t.Fatalf("%s: got %v, want %s", what, err, code)
	}
}

func TestCreateRules(t *testing.T) {
	t.Parallel()
	e := newBooksEnv(t)
	team := e.team("Acme")
	member, viewer := e.user(team, "member"), e.user(team, "viewer")
	outsider := e.user(e.team("Other"), "owner")

	b := e.create(member, team, "  Top Clients! ")
	if b.Name != "Top Clients!" || b.Slug != "top-clients" || b.Color != books.DefaultColor || b.Icon != books.DefaultIcon ||
		b.CreatedBy == nil || *b.CreatedBy != member.UserID || b.EnforceUniqueEmails {
		t.Fatalf("created: %+v", b)
	}
	_, err := e.svc.Create(e.ctx, viewer, books.CreateInput{TeamID: team, Name: "Nope"})
	expectCode(t, "a viewer creates", err, apperr.Forbidden)
	_, err = e.svc.Create(e.ctx, outsider, books.CreateInput{TeamID: team, Name: "Nope"})
	expectCode(t, "another team's owner creates", err, apperr.NotFound)
	_, err = e.svc.Create(e.ctx, member, books.CreateInput{Name: "No team"})
	expectCode(t, "no team", err, apperr.InvalidInput)
	red, short := "red", "#ABC"
	for name, in := range map[string]books.CreateInput{
		"no name":    {Name: "  "},
		"bad colour": {Name: "x", Color: &red},
		"short hex":  {Name: "x", Color: &short},
		"long name":  {Name: strings.Repeat("n", 201)},
	} {
		in.TeamID = team
		_, err := e.svc.Create(e.ctx, member, in)
		expectCode(t, name, err, apperr.InvalidInput)
	}
	if n := e.count(`SELECT count(*) FROM books WHERE team_id = $1`, team); n != 1 {
		t.Fatalf("%d books after the refusals, want 1", n)
	}
	// book.created carries the book.
	if n := e.count(`SELECT count(*) FROM events WHERE type = 'book.created' AND book_id = $1
		AND convert_from(body, 'UTF8')::jsonb->'data'->>'slug' = 'top-clients'`, b.ID); n != 1 {
		t.Fatalf("book.created events = %d", n)
	}
}

func TestSlugsAreUniqueInATeamAndStay(t *testing.T) {
	t.Parallel()
	e := newBooksEnv(t)
	team, other := e.team("Acme"), e.team("Other")
	owner, otherOwner := e.user(team, "owner"), e.user(other, "owner")

	first := e.create(owner, team, "Top Clients")
	second := e.create(owner, team, "top clients")
	third := e.create(owner, team, "TOP  CLIENTS!")
	if first.Slug != "top-clients" || second.Slug != "top-clients-2" || third.Slug != "top-clients-3" {
		t.Fatalf("slugs %q %q %q", first.Slug, second.Slug, third.Slug)
	}
	// Another team reuses the slug.
	if b := e.create(otherOwner, other, "Top clients"); b.Slug != "top-clients" {
		t.Fatalf("the other team's slug %q", b.Slug)
	}
	// A rename keeps the slug (links that use it keep working), and the
	// old name's slug stays taken.
	renamed, err := e.svc.Update(e.ctx, owner, first, books.Patch{Name: optional.Some("VIPs")})
	if err != nil || renamed.Name != "VIPs" || renamed.Slug != "top-clients" {
		t.Fatalf("renamed: %+v (%v)", renamed, err)
	}
	if b := e.create(owner, team, "Top Clients"); b.Slug != "top-clients-4" {
		t.Fatalf("a new book took the renamed book's slug: %q", b.Slug)
	}
	if b := e.create(owner, team, "VIPs"); b.Slug != "vips" {
		t.Fatalf("slug of the new name: %q", b.Slug)
	}
	// A deleted book's slug is free again.
	if err := e.svc.Delete(e.ctx, owner, third); err != nil {
		t.Fatal(err)
	}
	if b := e.create(owner, team, "Top Clients"); b.Slug != "top-clients-3" {
		t.Fatalf("after a delete: %q", b.Slug)
	}
}

func TestUpdateRules(t *testing.T) {
	t.Parallel()
	e := newBooksEnv(t)
	team := e.team("Acme")
	member, viewer := e.user(team, "member"), e.user(team, "viewer")
	color := "#AABBCC"
	b, err := e.svc.Create(e.ctx, member, books.CreateInput{TeamID: team, Name: "Clients", Color: &color, Icon: new(string)})
	if err != nil {
		t.Fatal(err)
	}

	_, err = e.svc.Update(e.ctx, viewer, b, books.Patch{Name: optional.Some("x")})
	expectCode(t, "a viewer renames", err, apperr.Forbidden)
	_, err = e.svc.Update(e.ctx, member, b, books.Patch{})
	expectCode(t, "an empty patch", err, apperr.InvalidInput)
	_, err = e.svc.Update(e.ctx, member, b, books.Patch{Color: optional.Some("blue")})
	expectCode(t, "a bad colour", err, apperr.InvalidInput)
	_, err = e.svc.Update(e.ctx, member, b, books.Patch{Name: optional.Value[string]{Set: true, Null: true}})
	expectCode(t, "a null name", err, apperr.InvalidInput)
	_, err = e.svc.Update(e.ctx, member, b, books.Patch{Name: optional.Some("   ")})
	expectCode(t, "a blank name", err, apperr.InvalidInput)

	// Only what is sent changes.
	u, err := e.svc.Update(e.ctx, member, b, books.Patch{Name: optional.Some(" VIPs "), EnforceUniqueEmails: optional.Some(true)})
	if err != nil || u.Name != "VIPs" || u.Slug != "clients" || !u.EnforceUniqueEmails || u.Color != "#AABBCC" {
		t.Fatalf("updated: %+v (%v)", u, err)
	}
	stored, err := e.svc.Book(e.ctx, b.ID)
	if err != nil || stored.Name != "VIPs" || !stored.EnforceUniqueEmails || stored.Color != "#AABBCC" {
		t.Fatalf("stored: %+v (%v)", stored, err)
	}
}

func TestDeleteRules(t *testing.T) {
	t.Parallel()
	e := newBooksEnv(t)
	team := e.team("Acme")
	owner, admin, member := e.user(team, "owner"), e.user(team, "admin"), e.user(team, "member")
	b := e.create(owner, team, "Clients")
	keep := e.create(owner, team, "Others")
	if _, err := e.svc.CreateLabel(e.ctx, owner, b, books.LabelInput{Name: "VIP"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Pool.Exec(e.ctx, `INSERT INTO contacts (book_id, first_name) VALUES ($1, 'Ada'), ($2, 'Bob')`, b.ID, keep.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := e.svc.ContactCount(e.ctx, b.ID); err != nil || n != 1 {
		t.Fatalf("contact count %d (%v)", n, err)
	}

	expectCode(t, "a member deletes", e.svc.Delete(e.ctx, member, b), apperr.Forbidden)
	if err := e.svc.Delete(e.ctx, admin, b); err != nil {
		t.Fatalf("an admin deletes: %v", err)
	}
	_, err := e.svc.Book(e.ctx, b.ID)
	expectCode(t, "the deleted book", err, apperr.NotFound)
	_, err = e.svc.Resolve(e.ctx, admin, b.ID, books.AsResource)
	expectCode(t, "resolving the deleted book", err, apperr.NotFound)
	// Everything in it goes with it, nothing of the other book.
	if n := e.count(`SELECT count(*) FROM labels WHERE book_id = $1`, b.ID); n != 0 {
		t.Fatalf("%d labels survived the book", n)
	}
	if n := e.count(`SELECT count(*) FROM contacts WHERE book_id = $1`, b.ID); n != 0 {
		t.Fatalf("%d contacts survived the book", n)
	}
	if n := e.count(`SELECT count(*) FROM contacts WHERE book_id = $1`, keep.ID); n != 1 {
		t.Fatalf("the other book has %d contacts, want 1", n)
	}
	if n := e.count(`SELECT count(*) FROM events WHERE type = 'book.deleted' AND book_id = $1 AND team_id = $2
		AND convert_from(body, 'UTF8')::jsonb->'data' = jsonb_build_object('id', $1::uuid)`, b.ID, team); n != 1 {
		t.Fatalf("book.deleted events = %d", n)
	}
}

func TestResolveKeepsTeamsApart(t *testing.T) {
	t.Parallel()
	e := newBooksEnv(t)
	team, other := e.team("Acme"), e.team("Other")
	viewer, outsider := e.user(team, "viewer"), e.user(other, "owner")
	b := e.create(e.user(team, "owner"), team, "Clients")

	got, err := e.svc.Resolve(e.ctx, viewer, b.ID, books.AsResource)
	if err != nil || got.ID != b.ID {
		t.Fatalf("a viewer resolves: %+v (%v)", got, err)
	}
	_, err = e.svc.Resolve(e.ctx, outsider, b.ID, books.AsContext)
	expectCode(t, "another team's book as context", err, apperr.Forbidden)
	_, err = e.svc.Resolve(e.ctx, outsider, b.ID, books.AsResource)
	expectCode(t, "another team's book as resource", err, apperr.NotFound)
	_, err = e.svc.Resolve(e.ctx, viewer, uuid.New(), books.AsResource)
	expectCode(t, "no such book", err, apperr.NotFound)
	list, err := e.svc.List(e.ctx, outsider, team)
	expectCode(t, "listing another team's books", err, apperr.NotFound)
	if list != nil {
		t.Fatalf("listed %+v", list)
	}
}
