package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
)

// surface is one of the two APIs that serve the contact endpoints: the
// public one under /api/v1 with a team key, the internal one under /api
// with a login token.
type surface struct {
	name   string
	prefix string
	client *apptest.Client
}

func surfaces(u *apptest.User) []surface {
	return []surface{
		{name: "v1-key", prefix: "/api/v1", client: u.NewKey()},
		{name: "api-jwt", prefix: "/api", client: u.Client},
	}
}

// eventRow is one outbox row, its body parsed.
type eventRow struct {
	Type string
	Body struct {
		Event     string          `json:"event"`
		Timestamp string          `json:"timestamp"`
		TeamID    string          `json:"team_id"`
		BookID    *string         `json:"book_id"`
		Data      json.RawMessage `json:"data"`
	}
}

// watchContacts subscribes a webhook of the user's team to every contact
// event: contact events are written only when a webhook wants them.
func watchContacts(u *apptest.User) {
	u.Post("/api/teams/"+u.TeamID+"/webhooks", map[string]any{
		"url": "https://hooks.example.com/contacts", "events": []string{"contact.created", "contact.updated", "contact.deleted"},
	}).Expect(http.StatusCreated)
}

// contactEvents returns the team's contact.* outbox rows in the order they
// were written: by transaction, then by position in the batch.
func contactEvents(t *testing.T, env *apptest.Env, teamID string) []eventRow {
	t.Helper()
	rows, err := env.App.Pool.Query(context.Background(),
		`SELECT type, body FROM events WHERE team_id = $1 AND type LIKE 'contact.%' ORDER BY xmin::text::bigint, ctid`, teamID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []eventRow
	for rows.Next() {
		var (
			e    eventRow
			body []byte
		)
		if err := rows.Scan(&e.Type, &body); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(body, &e.Body); err != nil {
			t.Fatalf("event body is not JSON: %v", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func countByType(evs []eventRow) map[string]int {
	m := map[string]int{}
	for _, e := range evs {
		m[e.Type]++
	}
	return m
}

// sameJSON fails unless a and b hold the same JSON value.
func sameJSON(t *testing.T, what string, a, b []byte) {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(va, vb) {
		t.Fatalf("%s differ:\n%s\n%s", what, a, b)
	}
}

func dataOf(t *testing.T, r *apptest.Response) []byte {
	t.Helper()
	b, err := json.Marshal(r.Value("data"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestContactCRUD(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	watchContacts(owner)
	book := owner.CreateBook("Main")
	for _, s := range surfaces(owner) {
		t.Run(s.name, func(t *testing.T) {
			c := s.client.InBook(book)
			before := len(contactEvents(t, env, owner.TeamID))
			start := env.Clock.Now().UTC()
			stamp := func(d time.Duration) string { return start.Add(d).Format(time.RFC3339) }

			created := c.Post(s.prefix+"/contacts", apptest.FullContact()).Expect(http.StatusCreated)
			id := created.String("data.id")
			if _, err := uuid.Parse(id); err != nil {
				t.Fatalf("id %q", id)
			}
			for path, want := range map[string]string{
				"data.book_id": book, "data.first_name": "Ada", "data.last_name": "Lovelace",
				"data.company": "Analytical Engines", "data.job_title": "Countess", "data.notes": "First programmer",
				"data.website": "https://ada.example.com/about", "data.birthday": "1815-12-10",
				"data.emails.0.address": "Ada@Example.com", "data.emails.0.label": "work",
				"data.emails.1.label": "personal", "data.phones.0.number": "+44 (20) 7946-0958 ext. 12",
				"data.phones.0.label": "mobile", "data.addresses.0.city": "London", "data.addresses.0.label": "home",
				"data.dates.0.value": "1835-07-08", "data.socials.0.label": "github",
				"data.relationships.0.name": "William King", "data.created_at": stamp(0), "data.updated_at": stamp(0),
			} {
				if got := created.String(path); got != want {
					t.Errorf("%s = %q, want %q", path, got, want)
				}
			}
			if !created.Bool("data.emails.0.primary") || created.Bool("data.emails.1.primary") || !created.Bool("data.starred") {
				t.Errorf("primary/starred wrong: %s", created.Body)
			}
			if !created.Has("data.photo_url") || created.Value("data.photo_url") != nil {
				t.Errorf("photo_url should be null: %s", created.Body)
			}
			if created.Len("data.labels") != 0 || created.Has("data.relationships.0.contact_id") {
				t.Errorf("labels/relationships: %s", created.Body)
			}
			if m, ok := created.Value("data.custom_fields").(map[string]any); !ok || len(m) != 0 {
				t.Errorf("custom_fields should be {}: %s", created.Body)
			}
			wantCreatedBy := any(nil)
			if s.prefix == "/api" {
				wantCreatedBy = owner.ID
			}
			if created.Value("data.created_by") != wantCreatedBy {
				t.Errorf("created_by = %v, want %v", created.Value("data.created_by"), wantCreatedBy)
			}

			got := s.client.Get(s.prefix + "/contacts/" + id).Expect(http.StatusOK)
			sameJSON(t, "create and get", dataOf(t, created), dataOf(t, got))

			env.Clock.Advance(time.Second)
			patched := s.client.Patch(s.prefix+"/contacts/"+id, map[string]any{
				"job_title": "Analyst", "birthday": nil, "starred": false,
				"phones": []any{map[string]any{"number": "555-0100", "label": "work"}},
			}).Expect(http.StatusOK)
			if patched.String("data.job_title") != "Analyst" || patched.Value("data.birthday") != nil || patched.Bool("data.starred") {
				t.Fatalf("patch not applied: %s", patched.Body)
			}
			if patched.Len("data.phones") != 1 || patched.String("data.phones.0.number") != "555-0100" || patched.Len("data.emails") != 2 {
				t.Fatalf("arrays: phones replaced, emails untouched: %s", patched.Body)
			}
			if patched.String("data.first_name") != "Ada" || patched.String("data.notes") != "First programmer" {
				t.Fatalf("omitted fields changed: %s", patched.Body)
			}
			if patched.String("data.updated_at") != stamp(time.Second) || patched.String("data.created_at") != stamp(0) {
				t.Fatalf("timestamps: %s", patched.Body)
			}
			got = s.client.Get(s.prefix + "/contacts/" + id).Expect(http.StatusOK)
			sameJSON(t, "patch and get", dataOf(t, patched), dataOf(t, got))

			s.client.Delete(s.prefix + "/contacts/" + id).Expect(http.StatusNoContent)
			s.client.Get(s.prefix+"/contacts/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
			s.client.Delete(s.prefix+"/contacts/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
			s.client.Patch(s.prefix+"/contacts/"+id, map[string]any{"notes": "x"}).ExpectError(http.StatusNotFound, "NOT_FOUND")

			evs := contactEvents(t, env, owner.TeamID)[before:]
			if len(evs) != 3 || evs[0].Type != "contact.created" || evs[1].Type != "contact.updated" || evs[2].Type != "contact.deleted" {
				t.Fatalf("events: %+v", countByType(evs))
			}
			sameJSON(t, "contact.created data", evs[0].Body.Data, dataOf(t, created))
			sameJSON(t, "contact.updated data", evs[1].Body.Data, dataOf(t, patched))
			sameJSON(t, "contact.deleted data", evs[2].Body.Data, []byte(`{"id":"`+id+`"}`))
			for _, e := range evs {
				if e.Body.Event != e.Type || e.Body.TeamID != owner.TeamID || e.Body.BookID == nil || *e.Body.BookID != book {
					t.Fatalf("envelope: %+v", e.Body)
				}
			}
			if evs[0].Body.Timestamp != stamp(0) || evs[1].Body.Timestamp != stamp(time.Second) {
				t.Fatalf("timestamp %q", evs[1].Body.Timestamp)
			}
		})
	}
	if n := env.QueryInt(bookCountSQL, book); n != 0 {
		t.Fatalf("contact_count %d", n)
	}
}

// TestContactCreateErrors: how the API answers a refused create, on both
// surfaces: the status and envelope of a rule the service refuses (the
// rules themselves are tested in internal/contacts), and what the HTTP
// layer refuses before the service (types, NUL, JSON, content type, size,
// the book header).
func TestContactCreateErrors(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	watchContacts(owner)
	book := owner.CreateBook("Main")
	other := env.Signup("bob")
	otherBook := other.CreateBook("Theirs")
	cases := []struct {
		name   string
		body   any
		status int
		code   string
		field  string // must appear in the message
	}{
		{"no name", map[string]any{"job_title": "CEO"}, 422, "VALIDATION_ERROR", "first_name"},
		{"custom_fields", map[string]any{"first_name": "A", "custom_fields": map[string]any{"x": "y"}}, 400, "INVALID_INPUT", "custom_fields"},
		{"bad email", map[string]any{"first_name": "A", "emails": []any{map[string]any{"address": "not-an-email"}}}, 400, "INVALID_INPUT", "emails[0].address"},
		{"relationship contact not a UUID", map[string]any{"first_name": "A", "relationships": []any{
			map[string]any{"label": "boss", "name": "B", "contact_id": "nope"}}}, 400, "INVALID_INPUT", "contact_id"},
		{"NUL", map[string]any{"first_name": "A\u0000B"}, 400, "INVALID_INPUT", "first_name"},
		{"NUL in array", map[string]any{"first_name": "A", "socials": []any{map[string]any{"label": "x", "value": "a\u0000"}}}, 400, "INVALID_INPUT", "socials[0]"},
		{"wrong type", map[string]any{"first_name": 5}, 400, "INVALID_INPUT", "first_name"},
		{"wrong array type", map[string]any{"first_name": "A", "emails": "a@b.co"}, 400, "INVALID_INPUT", "emails"},
		{"wrong element type", map[string]any{"first_name": "A", "emails": []any{map[string]any{"address": 7}}}, 400, "INVALID_INPUT", "address"},
		{"wrong starred", map[string]any{"first_name": "A", "starred": "yes"}, 400, "INVALID_INPUT", "starred"},
		{"not JSON", apptest.Raw{ContentType: "application/json", Body: []byte(`{"first_name":`)}, 400, "INVALID_INPUT", "JSON"},
		{"array body", apptest.Raw{ContentType: "application/json", Body: []byte(`[{"first_name":"A"}]`)}, 400, "INVALID_INPUT", "object"},
		{"two objects", apptest.Raw{ContentType: "application/json", Body: []byte(`{"first_name":"A"}{}`)}, 400, "INVALID_INPUT", "one JSON object"},
		{"no content type", apptest.Raw{ContentType: "text/plain", Body: []byte(`{"first_name":"A"}`)}, 415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type"},
		{"3 MB", apptest.Raw{ContentType: "application/json", Body: []byte(`{"notes":"` + strings.Repeat("a", 3<<20) + `"}`)}, 413, "PAYLOAD_TOO_LARGE", "MB"},
	}
	for _, s := range surfaces(owner) {
		c := s.client.InBook(book)
		for _, tc := range cases {
			t.Run(s.name+"/"+tc.name, func(t *testing.T) {
				r := c.Post(s.prefix+"/contacts", tc.body).ExpectError(tc.status, tc.code)
				if !strings.Contains(r.String("error.message"), tc.field) {
					t.Fatalf("message %q does not name %q", r.String("error.message"), tc.field)
				}
			})
		}
		t.Run(s.name+"/book header", func(t *testing.T) {
			body := map[string]any{"first_name": "A"}
			s.client.Post(s.prefix+"/contacts", body).ExpectError(400, "MISSING_BOOK")
			s.client.InBook("not-a-uuid").Post(s.prefix+"/contacts", body).ExpectError(400, "INVALID_INPUT")
			s.client.InBook(otherBook).Post(s.prefix+"/contacts", body).ExpectError(403, "FORBIDDEN")
			s.client.InBook(uuid.NewString()).Post(s.prefix+"/contacts", body).ExpectError(403, "FORBIDDEN")
		})
	}
	if n := env.QueryInt(`SELECT count(*)::int FROM contacts`); n != 0 {
		t.Fatalf("%d contacts written by failed requests", n)
	}
	if evs := contactEvents(t, env, owner.TeamID); len(evs) != 0 {
		t.Fatalf("%d events written by failed requests", len(evs))
	}
}

// TestContactPatchRules: how the API answers a patch on both surfaces: a
// rule the service refuses (the rules are tested in internal/contacts)
// with its status and no event, what the HTTP layer refuses (types, the
// id, the size), and a patch that lands.
func TestContactPatchRules(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	watchContacts(owner)
	book := owner.CreateBook("Main")
	for _, s := range surfaces(owner) {
		t.Run(s.name, func(t *testing.T) {
			c := s.client.InBook(book)
			id := c.Post(s.prefix+"/contacts", apptest.FullContact()).Expect(201).String("data.id")
			path := s.prefix + "/contacts/" + id
			before := len(contactEvents(t, env, owner.TeamID))

			s.client.Patch(path, map[string]any{}).ExpectError(400, "INVALID_INPUT")
			r := s.client.Patch(path, map[string]any{"photo_url": "https://x.example/a.png"}).ExpectError(400, "INVALID_INPUT")
			if !strings.Contains(r.String("error.message"), "photo_url") {
				t.Fatalf("message %q", r.String("error.message"))
			}
			s.client.Patch(path, map[string]any{"starred": "true"}).ExpectError(400, "INVALID_INPUT")
			s.client.Patch(path, map[string]any{"emails": []any{map[string]any{"address": "x"}}}).ExpectError(400, "INVALID_INPUT")
			s.client.Patch(path, map[string]any{"first_name": "", "last_name": nil, "company": " "}).ExpectError(422, "VALIDATION_ERROR")
			s.client.Patch(s.prefix+"/contacts/not-a-uuid", map[string]any{"notes": "x"}).ExpectError(404, "NOT_FOUND")
			s.client.Patch(path, apptest.Raw{ContentType: "application/json", Body: []byte(`{"notes":"` + strings.Repeat("a", 3<<20) + `"}`)}).
				ExpectError(413, "PAYLOAD_TOO_LARGE")
			if n := len(contactEvents(t, env, owner.TeamID)); n != before {
				t.Fatalf("failed patches wrote %d events", n-before)
			}
			unchanged := s.client.Get(path).Expect(200)
			if unchanged.String("data.first_name") != "Ada" || unchanged.Len("data.emails") != 2 {
				t.Fatalf("failed patches changed the contact: %s", unchanged.Body)
			}

			r = s.client.Patch(path, map[string]any{"emails": nil, "birthday": "", "starred": false}).Expect(200)
			if r.Len("data.emails") != 0 || r.Value("data.birthday") != nil || r.Bool("data.starred") {
				t.Fatalf("null and empty should clear: %s", r.Body)
			}
			if n := len(contactEvents(t, env, owner.TeamID)); n != before+1 {
				t.Fatalf("want 1 contact.updated event, got %d", n-before)
			}
		})
	}
}

func TestContactRoles(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	viewer := env.Join(owner, "vic", "viewer")
	member := env.Join(owner, "mel", "member")
	book := owner.CreateBook("Main")
	label := owner.Post("/api/books/"+book+"/labels", map[string]any{"name": "VIP"}).Expect(201).String("data.id")
	field := owner.Post("/api/books/"+book+"/fields", map[string]any{"key": "tier", "name": "Tier", "type": "text"}).Expect(201).String("data.id")
	id := owner.InBook(book).Post("/api/contacts", map[string]any{"first_name": "Ada", "emails": []any{map[string]any{"address": "ada@example.com"}}}).
		Expect(201).String("data.id")

	v := viewer.InBook(book)
	v.Get("/api/contacts").Expect(200)
	v.Get("/api/contacts/" + id).Expect(200)
	v.Get("/api/contacts/check-email?email=ada@example.com").Expect(200)
	v.Post("/api/contacts", map[string]any{"first_name": "B"}).ExpectError(403, "FORBIDDEN")
	v.Patch("/api/contacts/"+id, map[string]any{"first_name": "B"}).ExpectError(403, "FORBIDDEN")
	v.Delete("/api/contacts/"+id).ExpectError(403, "FORBIDDEN")
	v.Post("/api/contacts/"+id+"/labels", map[string]any{"label_id": label}).ExpectError(403, "FORBIDDEN")
	v.Delete("/api/contacts/"+id+"/labels/"+label).ExpectError(403, "FORBIDDEN")
	ids := []string{id}
	v.Post("/api/contacts/bulk-delete", map[string]any{"contact_ids": ids}).ExpectError(403, "FORBIDDEN")
	v.Post("/api/contacts/bulk-add-label", map[string]any{"contact_ids": ids, "label_id": label}).ExpectError(403, "FORBIDDEN")
	v.Post("/api/contacts/bulk-remove-label", map[string]any{"contact_ids": ids, "label_id": label}).ExpectError(403, "FORBIDDEN")
	v.Post("/api/contacts/bulk-update-field", map[string]any{"contact_ids": ids, "field_definition_id": field, "value": "x"}).
		ExpectError(403, "FORBIDDEN")

	m := member.InBook(book)
	m.Patch("/api/contacts/"+id, map[string]any{"first_name": "Ada B"}).Expect(200)
	m.Post("/api/contacts/"+id+"/labels", map[string]any{"label_id": label}).Expect(200)
	m.Post("/api/contacts/bulk-update-field", map[string]any{"contact_ids": ids, "field_definition_id": field, "value": "gold"}).Expect(200)
	created := m.Post("/api/contacts", map[string]any{"first_name": "Mel's"}).Expect(201)
	if created.String("data.created_by") != member.ID {
		t.Fatalf("created_by %q, want %q", created.String("data.created_by"), member.ID)
	}
	m.Delete("/api/contacts/" + created.String("data.id")).Expect(204)

	// No credentials, a key on /api, a token on /api/v1.
	env.Anonymous().InBook(book).Get("/api/v1/contacts").ExpectError(401, "UNAUTHORIZED")
	env.Anonymous().Get("/api/contacts/"+id).ExpectError(401, "UNAUTHORIZED")
	key := owner.NewKey()
	key.InBook(book).Get("/api/contacts").ExpectError(401, "UNAUTHORIZED")
	owner.InBook(book).Get("/api/v1/contacts").ExpectError(401, "UNAUTHORIZED")
}

func TestContactCrossTeam(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	a := env.Signup("ann")
	b := env.Signup("bob")
	watchContacts(a)
	bookA := a.CreateBook("A")
	bookB := b.CreateBook("B")
	labelA := a.Post("/api/books/"+bookA+"/labels", map[string]any{"name": "A"}).Expect(201).String("data.id")
	labelB := b.Post("/api/books/"+bookB+"/labels", map[string]any{"name": "B"}).Expect(201).String("data.id")
	fieldA := a.Post("/api/books/"+bookA+"/fields", map[string]any{"key": "k", "name": "K", "type": "text"}).Expect(201).String("data.id")
	contactA := a.InBook(bookA).Post("/api/contacts", map[string]any{"first_name": "Ada", "emails": []any{map[string]any{"address": "ada@a.example"}}}).
		Expect(201).String("data.id")
	contactB := b.InBook(bookB).Post("/api/contacts", map[string]any{"first_name": "Bo"}).Expect(201).String("data.id")
	before := len(contactEvents(t, env, a.TeamID))

	for _, s := range surfaces(b) {
		t.Run(s.name, func(t *testing.T) {
			c, p := s.client, s.prefix
			// Addressed by id: NOT_FOUND, nothing revealed.
			c.Get(p+"/contacts/"+contactA).ExpectError(404, "NOT_FOUND")
			c.Patch(p+"/contacts/"+contactA, map[string]any{"first_name": "X"}).ExpectError(404, "NOT_FOUND")
			c.Delete(p+"/contacts/"+contactA).ExpectError(404, "NOT_FOUND")
			c.Post(p+"/contacts/"+contactA+"/labels", map[string]any{"label_id": labelB}).ExpectError(404, "NOT_FOUND")
			c.Delete(p+"/contacts/"+contactA+"/labels/"+labelA).ExpectError(404, "NOT_FOUND")
			// Team A's label on team B's own contact: NOT_FOUND (not INVALID_INPUT, which would reveal it).
			c.Post(p+"/contacts/"+contactB+"/labels", map[string]any{"label_id": labelA}).ExpectError(404, "NOT_FOUND")
			// Through X-Book-ID: FORBIDDEN.
			inA := c.InBook(bookA)
			inA.Get(p+"/contacts").ExpectError(403, "FORBIDDEN")
			inA.Post(p+"/contacts", map[string]any{"first_name": "X"}).ExpectError(403, "FORBIDDEN")
			// A key checks the book in the batch that writes: still 403, also
			// for a body that is not valid, or a book that does not exist.
			inA.Post(p+"/contacts", map[string]any{"first_name": ""}).ExpectError(403, "FORBIDDEN")
			inA.Post(p+"/contacts", map[string]any{"first_name": "X", "photo_url": "https://x.example/p.png"}).ExpectError(403, "FORBIDDEN")
			c.InBook(uuid.NewString()).Post(p+"/contacts", map[string]any{"first_name": "X"}).ExpectError(403, "FORBIDDEN")
			for _, op := range []string{"bulk-delete", "bulk-add-label", "bulk-remove-label", "bulk-update-field"} {
				inA.Post(p+"/contacts/"+op, map[string]any{"contact_ids": []string{contactA}, "label_id": labelA, "field_definition_id": fieldA, "value": "v"}).
					ExpectError(403, "FORBIDDEN")
			}
			// Team B's own book with team A's ids: skipped, or NOT_FOUND for the label / field.
			inB := c.InBook(bookB)
			if n := inB.Post(p+"/contacts/bulk-delete", map[string]any{"contact_ids": []string{contactA}}).Expect(200).Int("data.deleted"); n != 0 {
				t.Fatalf("deleted %d of another team's contacts", n)
			}
			inB.Post(p+"/contacts/bulk-add-label", map[string]any{"contact_ids": []string{contactB}, "label_id": labelA}).ExpectError(404, "NOT_FOUND")
			inB.Post(p+"/contacts/bulk-remove-label", map[string]any{"contact_ids": []string{contactB}, "label_id": labelA}).ExpectError(404, "NOT_FOUND")
			inB.Post(p+"/contacts/bulk-update-field", map[string]any{"contact_ids": []string{contactB}, "field_definition_id": fieldA, "value": "v"}).
				ExpectError(404, "NOT_FOUND")
			if n := inB.Post(p+"/contacts/bulk-add-label", map[string]any{"contact_ids": []string{contactA}, "label_id": labelB}).Expect(200).Int("data.added"); n != 0 {
				t.Fatalf("labelled %d of another team's contacts", n)
			}
			if inB.Get(p+"/contacts").Expect(200).Int("meta.total") != 1 {
				t.Fatal("team B sees other contacts")
			}
			if s.prefix == "/api" {
				inA.Get("/api/contacts/check-email?email=ada@a.example").ExpectError(403, "FORBIDDEN")
				if inB.Get("/api/contacts/check-email?email=ada@a.example").Expect(200).Bool("data.exists") {
					t.Fatal("check-email sees another team's book")
				}
			}
		})
	}
	a.Get("/api/contacts/" + contactA).Expect(200)
	if n := env.QueryInt(`SELECT count(*)::int FROM contacts WHERE book_id = $1`, bookA); n != 1 {
		t.Fatalf("book A holds %d contacts after team B's requests, want 1", n)
	}
	if n := len(contactEvents(t, env, a.TeamID)); n != before {
		t.Fatalf("team B's requests wrote %d events for team A", n-before)
	}
}

func TestContactMalformedIDs(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	book := owner.CreateBook("Main")
	for _, s := range surfaces(owner) {
		t.Run(s.name, func(t *testing.T) {
			c, p := s.client.InBook(book), s.prefix
			id := c.Post(p+"/contacts", map[string]any{"first_name": "A"}).Expect(201).String("data.id")
			c.Get(p+"/contacts/123").ExpectError(404, "NOT_FOUND")
			c.Delete(p+"/contacts/x'--").ExpectError(404, "NOT_FOUND")
			c.Post(p+"/contacts/nope/labels", map[string]any{"label_id": uuid.NewString()}).ExpectError(404, "NOT_FOUND")
			c.Delete(p+"/contacts/"+id+"/labels/nope").ExpectError(404, "NOT_FOUND")
			c.Post(p+"/contacts/"+id+"/labels", map[string]any{"label_id": "nope"}).ExpectError(400, "INVALID_INPUT")
			c.Post(p+"/contacts/"+id+"/labels", map[string]any{"label_id": 12}).ExpectError(400, "INVALID_INPUT")
			c.Post(p+"/contacts/"+id+"/labels", map[string]any{}).ExpectError(400, "INVALID_INPUT")
			c.Get(p+"/contacts?label_id=nope").ExpectError(400, "INVALID_INPUT")
			c.Get(p+"/contacts/"+uuid.NewString()).ExpectError(404, "NOT_FOUND")
			if p == "/api" {
				c.Get(p+"/contacts/check-email?email=a@b.co&exclude=nope").ExpectError(400, "INVALID_INPUT")
			}
		})
	}
}

func TestContactList(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	book := owner.CreateBook("Main")
	otherBook := owner.CreateBook("Other")
	env.SeedContacts(book, 230)
	env.SeedContacts(otherBook, 5)
	for _, s := range surfaces(owner) {
		t.Run(s.name, func(t *testing.T) {
			c, p := s.client.InBook(book), s.prefix
			r := c.Get(p + "/contacts").Expect(200)
			if r.Len("data") != 50 || r.Int("meta.page") != 1 || r.Int("meta.limit") != 50 || r.Int("meta.total") != 230 {
				t.Fatalf("default page: len %d meta %v", r.Len("data"), r.Value("meta"))
			}
			if r.String("data.0.last_name") != "230" || r.String("data.49.last_name") != "181" {
				t.Fatalf("default sort -created_at: first %s last %s", r.String("data.0.last_name"), r.String("data.49.last_name"))
			}
			r = c.Get(p + "/contacts?limit=500").Expect(200)
			if r.Len("data") != 200 || r.Int("meta.limit") != 200 {
				t.Fatalf("limit clamp: %d %v", r.Len("data"), r.Value("meta"))
			}
			r = c.Get(p + "/contacts?limit=20&offset=45&sort=created_at").Expect(200)
			if r.Len("data") != 20 || r.Int("meta.page") != 3 || r.String("data.0.last_name") != "46" {
				t.Fatalf("offset: %d %v %s", r.Len("data"), r.Value("meta"), r.String("data.0.last_name"))
			}
			r = c.Get(p + "/contacts?offset=1000").Expect(200)
			if r.Len("data") != 0 || r.Int("meta.total") != 230 || r.Int("meta.page") != 21 {
				t.Fatalf("past the end: %s", r.Body)
			}
			if c.Get(p+"/contacts?sort=updated_at&limit=1").Expect(200).String("data.0.last_name") != "230" ||
				c.Get(p+"/contacts?sort=-updated_at&limit=1").Expect(200).String("data.0.last_name") != "1" {
				t.Fatal("sort updated_at")
			}
			// sort_name is "person 1", "person 10", "person 100", ... as text.
			if c.Get(p+"/contacts?sort=name&limit=1").Expect(200).String("data.0.last_name") != "1" ||
				c.Get(p+"/contacts?sort=-name&limit=1").Expect(200).String("data.0.last_name") != "99" {
				t.Fatal("sort name")
			}
			r = c.Get(p + "/contacts?starred=true&limit=200").Expect(200)
			if r.Int("meta.total") != 76 || r.Len("data") != 76 || !r.Bool("data.0.starred") {
				t.Fatalf("starred: %v", r.Value("meta"))
			}
			if c.Get(p+"/contacts?starred=false").Expect(200).Int("meta.total") != 154 {
				t.Fatal("starred=false")
			}
			// What q matches is tested in internal/contacts; here, that it
			// arrives decoded.
			for q, want := range map[string]int{"  person 230  ": 1, "@seed": 230, "%": 0} {
				r = c.Get(p + "/contacts?q=" + urlQuery(q)).Expect(200)
				if r.Int("meta.total") != want || r.Len("data") != min(want, 50) {
					t.Errorf("q=%q: total %d len %d, want %d", q, r.Int("meta.total"), r.Len("data"), want)
				}
			}
			for _, bad := range []string{"sort=first_name", "limit=-1", "limit=abc", "offset=-5", "offset=1.5", "starred=maybe", "q=" + strings.Repeat("x", 201), "q=%00", "q=%ff"} {
				c.Get(p+"/contacts?"+bad).ExpectError(400, "INVALID_INPUT")
			}
			s.client.Get(p+"/contacts").ExpectError(400, "MISSING_BOOK")
		})
	}
}

func urlQuery(s string) string {
	r := strings.NewReplacer("%", "%25", " ", "%20", "@", "%40", "_", "%5F")
	return r.Replace(s)
}

// TestContactListLabelFilterAndTotal: label_id filters the list, whose
// items carry their labels; the rules of the filters and of the total are
// tested in internal/contacts.
func TestContactListLabelFilterAndTotal(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	book := owner.CreateBook("Main")
	key := owner.NewKey().InBook(book)
	ids := env.SeedContacts(book, 60)
	label := owner.Post("/api/books/"+book+"/labels", map[string]any{"name": "VIP", "color": "#FF0000"}).Expect(201).String("data.id")
	key.Post("/api/v1/contacts/bulk-add-label", map[string]any{"contact_ids": ids[:7], "label_id": label}).Expect(200)

	r := key.Get("/api/v1/contacts?label_id=" + label + "&sort=created_at").Expect(200)
	if r.Int("meta.total") != 7 || r.Len("data") != 7 || r.String("data.0.labels.0.id") != label ||
		r.String("data.0.labels.0.name") != "VIP" || r.String("data.0.labels.0.color") != "#FF0000" {
		t.Fatalf("label filter: %v %s", r.Value("meta"), r.Value("data.0.labels"))
	}
	if key.Get("/api/v1/contacts?label_id="+label+"&starred=true").Expect(200).Int("meta.total") != 2 {
		t.Fatal("label and starred combined")
	}
	key.Get("/api/v1/contacts?label_id=nope").ExpectError(400, "INVALID_INPUT")
}

// bookCountSQL reads a book's contact counter (the sum of its slots).
const bookCountSQL = `SELECT COALESCE(sum(n), 0)::int FROM book_contact_counts WHERE book_id = $1`

func TestContactCount(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	book := owner.CreateBook("Main")
	other := owner.CreateBook("Other")
	key := owner.NewKey()
	count := func(book string) int {
		t.Helper()
		got := owner.Get("/api/books/" + book).Expect(200).Int("data.contact_count")
		if real := env.QueryInt(`SELECT count(*)::int FROM contacts WHERE book_id = $1`, book); got != real {
			t.Fatalf("contact_count %d, rows %d", got, real)
		}
		return got
	}
	var ids []string
	for i := range 5 {
		ids = append(ids, key.InBook(book).Post("/api/v1/contacts", map[string]any{"first_name": fmt.Sprint("c", i)}).Expect(201).String("data.id"))
	}
	key.InBook(other).Post("/api/v1/contacts", map[string]any{"first_name": "o"}).Expect(201)
	if count(book) != 5 || count(other) != 1 {
		t.Fatal("after creates")
	}
	key.Delete("/api/v1/contacts/" + ids[0]).Expect(204)
	n := key.InBook(book).Post("/api/v1/contacts/bulk-delete", map[string]any{"contact_ids": append(ids[1:3], ids[0], uuid.NewString())}).
		Expect(200).Int("data.deleted")
	if n != 2 || count(book) != 2 || count(other) != 1 {
		t.Fatalf("after deletes: deleted %d", n)
	}
	if key.InBook(book).Get("/api/v1/contacts").Expect(200).Int("meta.total") != 2 {
		t.Fatal("list total")
	}
}

// TestContactLabels: the label endpoints on both surfaces: their statuses
// and refusals, the labels as GET shows them, and each change's event
// body. The rules (which labels, when an event) are tested in
// internal/contacts.
func TestContactLabels(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	watchContacts(owner)
	book := owner.CreateBook("Main")
	otherBook := owner.CreateBook("Other")
	for _, s := range surfaces(owner) {
		t.Run(s.name, func(t *testing.T) {
			c, p := s.client, s.prefix
			id := c.InBook(book).Post(p+"/contacts", map[string]any{"first_name": "Ada"}).Expect(201).String("data.id")
			vip := owner.Post("/api/books/"+book+"/labels", map[string]any{"name": "VIP", "color": "#112233"}).Expect(201).String("data.id")
			foreign := owner.Post("/api/books/"+otherBook+"/labels", map[string]any{"name": "Elsewhere"}).Expect(201).String("data.id")
			before := len(contactEvents(t, env, owner.TeamID))

			env.Clock.Advance(time.Second)
			r := c.Post(p+"/contacts/"+id+"/labels", map[string]any{"label_id": vip}).Expect(200)
			if r.String("data.message") == "" {
				t.Fatalf("no message: %s", r.Body)
			}
			got := c.Get(p + "/contacts/" + id).Expect(200)
			if got.Len("data.labels") != 1 || got.String("data.labels.0.id") != vip || got.String("data.labels.0.name") != "VIP" ||
				got.String("data.labels.0.color") != "#112233" {
				t.Fatalf("labels: %s", got.Value("data.labels"))
			}
			c.Post(p+"/contacts/"+id+"/labels", map[string]any{"label_id": vip}).Expect(200) // again: silent
			c.Post(p+"/contacts/"+id+"/labels", map[string]any{"label_id": foreign}).ExpectError(400, "INVALID_INPUT")
			c.Post(p+"/contacts/"+id+"/labels", map[string]any{"label_id": uuid.NewString()}).ExpectError(404, "NOT_FOUND")
			c.Post(p+"/contacts/"+uuid.NewString()+"/labels", map[string]any{"label_id": vip}).ExpectError(404, "NOT_FOUND")
			c.Post(p+"/contacts/"+id+"/labels", map[string]any{"label": vip}).ExpectError(400, "INVALID_INPUT")
			c.Post(p+"/contacts/"+id+"/labels", apptest.Raw{ContentType: "text/plain", Body: []byte(`{}`)}).ExpectError(415, "UNSUPPORTED_MEDIA_TYPE")

			evs := contactEvents(t, env, owner.TeamID)[before:]
			if len(evs) != 1 || evs[0].Type != "contact.updated" {
				t.Fatalf("add label events: %v", countByType(evs))
			}
			sameJSON(t, "contact.updated after label add", evs[0].Body.Data, dataOf(t, got))

			c.Delete(p + "/contacts/" + id + "/labels/" + vip).Expect(204)
			c.Delete(p + "/contacts/" + id + "/labels/" + vip).Expect(204)              // absent: silent
			c.Delete(p + "/contacts/" + id + "/labels/" + uuid.NewString()).Expect(204) // unknown: silent
			got = c.Get(p + "/contacts/" + id).Expect(200)
			if got.Len("data.labels") != 0 {
				t.Fatalf("label not removed: %s", got.Body)
			}
			evs = contactEvents(t, env, owner.TeamID)[before:]
			if len(evs) != 2 || evs[1].Type != "contact.updated" {
				t.Fatalf("remove label events: %v", countByType(evs))
			}
			sameJSON(t, "contact.updated after label removal", evs[1].Body.Data, dataOf(t, got))
		})
	}
}

// TestBulkDelete: on both surfaces the endpoint answers how many contacts
// it deleted, and a contact.deleted event's data is the id alone. What is
// deleted with a contact, and what is skipped, is tested in
// internal/contacts.
func TestBulkDelete(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	watchContacts(owner)
	book := owner.CreateBook("Main")
	otherBook := owner.CreateBook("Other")
	for _, s := range surfaces(owner) {
		t.Run(s.name, func(t *testing.T) {
			c := s.client.InBook(book)
			p := s.prefix
			ids := env.SeedContacts(book, 3)
			outside := env.SeedContacts(otherBook, 1)
			before := len(contactEvents(t, env, owner.TeamID))
			target := []string{ids[0], ids[1], ids[0], outside[0], uuid.NewString()}
			if n := c.Post(p+"/contacts/bulk-delete", map[string]any{"contact_ids": target}).Expect(200).Int("data.deleted"); n != 2 {
				t.Fatalf("deleted %d, want 2", n)
			}
			evs := contactEvents(t, env, owner.TeamID)[before:]
			if len(evs) != 2 || countByType(evs)["contact.deleted"] != 2 {
				t.Fatalf("events: %v", countByType(evs))
			}
			for _, e := range evs {
				var d map[string]string
				if err := json.Unmarshal(e.Body.Data, &d); err != nil || len(d) != 1 || (d["id"] != ids[0] && d["id"] != ids[1]) {
					t.Fatalf("contact.deleted data %s", e.Body.Data)
				}
				if e.Body.BookID == nil || *e.Body.BookID != book {
					t.Fatalf("book_id %v", e.Body.BookID)
				}
			}
			if n := c.Post(p+"/contacts/bulk-delete", map[string]any{"contact_ids": ids[:2]}).Expect(200).Int("data.deleted"); n != 0 {
				t.Fatalf("second delete counted %d", n)
			}
		})
	}
}

func TestBulkInputErrors(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	book := owner.CreateBook("Main")
	otherBook := owner.CreateBook("Other")
	label := owner.Post("/api/books/"+book+"/labels", map[string]any{"name": "VIP"}).Expect(201).String("data.id")
	foreignLabel := owner.Post("/api/books/"+otherBook+"/labels", map[string]any{"name": "X"}).Expect(201).String("data.id")
	field := owner.Post("/api/books/"+book+"/fields", map[string]any{"key": "tier", "name": "Tier", "type": "number"}).Expect(201).String("data.id")
	foreignField := owner.Post("/api/books/"+otherBook+"/fields", map[string]any{"key": "tier", "name": "Tier", "type": "text"}).Expect(201).String("data.id")
	ids := env.SeedContacts(book, 3)
	tooMany := make([]string, 10001)
	for i := range tooMany {
		tooMany[i] = uuid.NewString()
	}
	type body = map[string]any
	cases := []struct {
		name, op string
		body     any
		status   int
		code     string
	}{
		{"no ids", "bulk-delete", body{}, 400, "INVALID_INPUT"},
		{"empty ids", "bulk-delete", body{"contact_ids": []string{}}, 400, "INVALID_INPUT"},
		{"null ids", "bulk-delete", body{"contact_ids": nil}, 400, "INVALID_INPUT"},
		{"10001 ids", "bulk-delete", body{"contact_ids": tooMany}, 400, "INVALID_INPUT"},
		{"bad id", "bulk-delete", body{"contact_ids": []string{ids[0], "nope"}}, 400, "INVALID_INPUT"},
		{"ids not array", "bulk-delete", body{"contact_ids": ids[0]}, 400, "INVALID_INPUT"},
		{"id not string", "bulk-delete", body{"contact_ids": []any{1}}, 400, "INVALID_INPUT"},
		{"not JSON", "bulk-delete", apptest.Raw{ContentType: "application/json", Body: []byte("{")}, 400, "INVALID_INPUT"},
		{"no content type", "bulk-delete", apptest.Raw{ContentType: "", Body: []byte(`{"contact_ids":[]}`)}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"add: no label", "bulk-add-label", body{"contact_ids": ids}, 400, "INVALID_INPUT"},
		{"add: bad label", "bulk-add-label", body{"contact_ids": ids, "label_id": "x"}, 400, "INVALID_INPUT"},
		{"add: no ids", "bulk-add-label", body{"label_id": label}, 400, "INVALID_INPUT"},
		{"add: label of another book", "bulk-add-label", body{"contact_ids": ids, "label_id": foreignLabel}, 400, "INVALID_INPUT"},
		{"add: unknown label", "bulk-add-label", body{"contact_ids": ids, "label_id": uuid.NewString()}, 404, "NOT_FOUND"},
		{"add: 10001 ids", "bulk-add-label", body{"contact_ids": tooMany, "label_id": label}, 400, "INVALID_INPUT"},
		{"remove: no label", "bulk-remove-label", body{"contact_ids": ids}, 400, "INVALID_INPUT"},
		{"remove: label of another book", "bulk-remove-label", body{"contact_ids": ids, "label_id": foreignLabel}, 400, "INVALID_INPUT"},
		{"remove: unknown label", "bulk-remove-label", body{"contact_ids": ids, "label_id": uuid.NewString()}, 404, "NOT_FOUND"},
		{"remove: empty ids", "bulk-remove-label", body{"contact_ids": []string{}, "label_id": label}, 400, "INVALID_INPUT"},
		{"field: no field", "bulk-update-field", body{"contact_ids": ids, "value": "1"}, 400, "INVALID_INPUT"},
		{"field: no value", "bulk-update-field", body{"contact_ids": ids, "field_definition_id": field}, 400, "INVALID_INPUT"},
		{"field: value not string", "bulk-update-field", body{"contact_ids": ids, "field_definition_id": field, "value": 5}, 400, "INVALID_INPUT"},
		{"field: unknown field", "bulk-update-field", body{"contact_ids": ids, "field_definition_id": uuid.NewString(), "value": "1"}, 404, "NOT_FOUND"},
		{"field: field of another book", "bulk-update-field", body{"contact_ids": ids, "field_definition_id": foreignField, "value": "1"}, 404, "NOT_FOUND"},
		{"field: not a number", "bulk-update-field", body{"contact_ids": ids, "field_definition_id": field, "value": "lots"}, 400, "INVALID_INPUT"},
		{"field: NUL", "bulk-update-field", body{"contact_ids": ids, "field_definition_id": field, "value": "1\u0000"}, 400, "INVALID_INPUT"},
		{"field: empty ids", "bulk-update-field", body{"contact_ids": []string{}, "field_definition_id": field, "value": "1"}, 400, "INVALID_INPUT"},
	}
	for _, s := range surfaces(owner) {
		c := s.client.InBook(book)
		for _, tc := range cases {
			t.Run(s.name+"/"+tc.name, func(t *testing.T) {
				c.Post(s.prefix+"/contacts/"+tc.op, tc.body).ExpectError(tc.status, tc.code)
			})
		}
		t.Run(s.name+"/book header", func(t *testing.T) {
			for _, op := range []string{"bulk-delete", "bulk-add-label", "bulk-remove-label", "bulk-update-field"} {
				s.client.Post(s.prefix+"/contacts/"+op, body{"contact_ids": ids, "label_id": label}).ExpectError(400, "MISSING_BOOK")
				s.client.InBook("zzz").Post(s.prefix+"/contacts/"+op, body{"contact_ids": ids}).ExpectError(400, "INVALID_INPUT")
				s.client.InBook(uuid.NewString()).Post(s.prefix+"/contacts/"+op, body{"contact_ids": ids}).ExpectError(403, "FORBIDDEN")
			}
		})
	}
	// Exactly 10,000 ids is allowed.
	exact := tooMany[:10000]
	exact[0] = ids[0]
	if n := owner.NewKey().InBook(book).Post("/api/v1/contacts/bulk-add-label", body{"contact_ids": exact, "label_id": label}).Expect(200).Int("data.added"); n != 1 {
		t.Fatalf("added %d", n)
	}
	if n := env.QueryInt(`SELECT count(*)::int FROM contacts`); n != 3 {
		t.Fatalf("contacts changed by failed bulk requests: %d", n)
	}
}

func TestBulkLabels(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	watchContacts(owner)
	book := owner.CreateBook("Main")
	otherBook := owner.CreateBook("Other")
	for _, s := range surfaces(owner) {
		t.Run(s.name, func(t *testing.T) {
			c, p := s.client.InBook(book), s.prefix
			label := owner.Post("/api/books/"+book+"/labels", map[string]any{"name": "L-" + s.name}).Expect(201).String("data.id")
			ids := env.SeedContacts(book, 12)
			outside := env.SeedContacts(otherBook, 1)
			c.Post(p+"/contacts/"+ids[0]+"/labels", map[string]any{"label_id": label}).Expect(200)
			before := len(contactEvents(t, env, owner.TeamID))

			env.Clock.Advance(time.Second)
			body := map[string]any{"contact_ids": append(append([]string{}, ids[:10]...), outside[0], ids[3], uuid.NewString()), "label_id": label}
			if n := c.Post(p+"/contacts/bulk-add-label", body).Expect(200).Int("data.added"); n != 9 {
				t.Fatalf("added %d, want 9 (one already labelled)", n)
			}
			if n := env.QueryInt(`SELECT count(*)::int FROM contact_labels WHERE label_id = $1`, label); n != 10 {
				t.Fatalf("%d labelled", n)
			}
			evs := contactEvents(t, env, owner.TeamID)[before:]
			if len(evs) != 9 || countByType(evs)["contact.updated"] != 9 {
				t.Fatalf("add events: %v", countByType(evs))
			}
			for _, e := range evs {
				var d struct {
					ID     string `json:"id"`
					Labels []struct {
						ID string `json:"id"`
					} `json:"labels"`
				}
				if err := json.Unmarshal(e.Body.Data, &d); err != nil || len(d.Labels) != 1 || d.Labels[0].ID != label || d.ID == ids[0] {
					t.Fatalf("event data %s", e.Body.Data)
				}
			}
			// The event carries exactly what GET answers.
			var first struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(evs[0].Body.Data, &first)
			sameJSON(t, "bulk event and get", evs[0].Body.Data, dataOf(t, c.Get(p+"/contacts/"+first.ID).Expect(200)))
			if n := c.Post(p+"/contacts/bulk-add-label", body).Expect(200).Int("data.added"); n != 0 {
				t.Fatalf("second add counted %d", n)
			}
			if n := len(contactEvents(t, env, owner.TeamID)) - before; n != 9 {
				t.Fatalf("unchanged contacts emitted events: %d", n-9)
			}

			body["contact_ids"] = append(append([]string{}, ids[5:]...), outside[0])
			if n := c.Post(p+"/contacts/bulk-remove-label", body).Expect(200).Int("data.removed"); n != 5 {
				t.Fatalf("removed %d, want 5", n)
			}
			if n := env.QueryInt(`SELECT count(*)::int FROM contact_labels WHERE label_id = $1`, label); n != 5 {
				t.Fatalf("%d still labelled", n)
			}
			evs = contactEvents(t, env, owner.TeamID)[before+9:]
			if len(evs) != 5 || countByType(evs)["contact.updated"] != 5 {
				t.Fatalf("remove events: %v", countByType(evs))
			}
			if n := c.Post(p+"/contacts/bulk-remove-label", body).Expect(200).Int("data.removed"); n != 0 {
				t.Fatalf("second remove counted %d", n)
			}
		})
	}
}

// TestBulkUpdateField: on both surfaces the endpoint answers the count of
// changed contacts, GET shows the value under custom_fields, a value of
// the wrong type is 400, and the event's body is the contact as GET shows
// it. The rules (counting, typing, clearing) are tested in
// internal/contacts.
func TestBulkUpdateField(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	watchContacts(owner)
	book := owner.CreateBook("Main")
	for _, s := range surfaces(owner) {
		t.Run(s.name, func(t *testing.T) {
			c, p := s.client.InBook(book), s.prefix
			key := "tier_" + strings.ReplaceAll(s.name, "-", "_")
			field := owner.Post("/api/books/"+book+"/fields", map[string]any{"key": key, "name": "Tier", "type": "text"}).Expect(201).String("data.id")
			dateField := owner.Post("/api/books/"+book+"/fields", map[string]any{"key": key + "_since", "name": "Since", "type": "date"}).Expect(201).String("data.id")
			ids := env.SeedContacts(book, 6)
			n := c.Post(p+"/contacts/bulk-update-field", map[string]any{"contact_ids": ids[:4], "field_definition_id": field, "value": "gold"}).
				Expect(200).Int("data.updated")
			if n != 4 {
				t.Fatalf("updated %d", n)
			}
			got := c.Get(p + "/contacts/" + ids[0]).Expect(200)
			if got.String("data.custom_fields."+key) != "gold" {
				t.Fatalf("custom_fields: %s", got.Value("data.custom_fields"))
			}
			c.Post(p+"/contacts/bulk-update-field", map[string]any{"contact_ids": ids, "field_definition_id": dateField, "value": "2023-02-29"}).
				ExpectError(400, "INVALID_INPUT")
			evs := contactEvents(t, env, owner.TeamID)
			last := evs[len(evs)-1]
			if last.Type != "contact.updated" {
				t.Fatalf("last event %s", last.Type)
			}
			sameJSON(t, "last event and get", last.Body.Data, dataOf(t, c.Get(p+"/contacts/"+idOf(t, last)).Expect(200)))
		})
	}
}

func idOf(t *testing.T, e eventRow) string {
	t.Helper()
	var d struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(e.Body.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d.ID
}

// TestCheckEmail: the internal endpoint answers a viewer with the check's
// shape (the rules of the check are tested in internal/contacts), refuses
// a missing or bad address and a missing or foreign book, and is absent
// from /api/v1.
func TestCheckEmail(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	viewer := env.Join(owner, "vic", "viewer")
	book := owner.CreateBook("Main")
	c := owner.InBook(book)
	id := c.Post("/api/contacts", map[string]any{"first_name": "Ada", "last_name": "L", "emails": []any{
		map[string]any{"address": "Ada@Example.com"}, map[string]any{"address": "second@example.com"}}}).Expect(201).String("data.id")

	r := viewer.InBook(book).Get("/api/contacts/check-email?email=%20ada@EXAMPLE.com").Expect(200)
	if !r.Bool("data.exists") || r.Bool("data.enforced") || r.String("data.contact_id") != id || r.String("data.name") != "Ada L" {
		t.Fatalf("exists: %s", r.Body)
	}
	r = c.Get("/api/contacts/check-email?email=second@example.com&exclude=" + id).Expect(200)
	if r.Bool("data.exists") || r.Has("data.contact_id") || r.Has("data.name") || !r.Has("data.enforced") {
		t.Fatalf("excluded: %s", r.Body)
	}
	c.Get("/api/contacts/check-email").ExpectError(400, "INVALID_INPUT")
	c.Get("/api/contacts/check-email?email=%20").ExpectError(400, "INVALID_INPUT")
	c.Get("/api/contacts/check-email?email=a%00b").ExpectError(400, "INVALID_INPUT")
	owner.Get("/api/contacts/check-email?email=a@b.co").ExpectError(400, "MISSING_BOOK")
	owner.InBook(uuid.NewString()).Get("/api/contacts/check-email?email=a@b.co").ExpectError(403, "FORBIDDEN")
	// Internal API only: /api/v1 has no such endpoint (the segment is taken as a contact id, which names nothing).
	owner.NewKey().InBook(book).Get("/api/v1/contacts/check-email?email=a@b.co").ExpectError(404, "NOT_FOUND")
}

// TestContactDuplicateEmail: a duplicate address answers 409
// DUPLICATE_EMAIL naming it, to a create and a patch on both surfaces, and
// to a book patch that would enforce uniqueness over duplicates. When an
// address is a duplicate, concurrently too, is tested in internal/contacts.
func TestContactDuplicateEmail(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	strict := owner.Post("/api/books", map[string]any{"team_id": owner.TeamID, "name": "Strict", "enforce_unique_emails": true}).
		Expect(201).String("data.id")
	loose := owner.CreateBook("Loose")
	email := func(addrs ...string) []any {
		out := make([]any, len(addrs))
		for i, a := range addrs {
			out[i] = map[string]any{"address": a}
		}
		return out
	}
	for _, s := range surfaces(owner) {
		t.Run(s.name, func(t *testing.T) {
			c, p := s.client.InBook(strict), s.prefix
			pre := s.name + "-"
			c.Post(p+"/contacts", map[string]any{"first_name": "A", "emails": email(pre + "dup@example.com")}).Expect(201)
			r := c.Post(p+"/contacts", map[string]any{"first_name": "B", "emails": email("other@x.example", strings.ToUpper(pre)+"DUP@example.com")}).
				ExpectError(409, "DUPLICATE_EMAIL")
			if !strings.Contains(r.String("error.message"), pre+"dup@example.com") {
				t.Fatalf("message does not name the address: %q", r.String("error.message"))
			}
			second := c.Post(p+"/contacts", map[string]any{"first_name": "B", "emails": email(pre + "b@example.com")}).Expect(201).String("data.id")
			c.Patch(p+"/contacts/"+second, map[string]any{"emails": email(pre + "Dup@example.com")}).ExpectError(409, "DUPLICATE_EMAIL")
			l := s.client.InBook(loose)
			l.Post(p+"/contacts", map[string]any{"first_name": "C", "emails": email(pre + "dup@example.com")}).Expect(201)
			l.Post(p+"/contacts", map[string]any{"first_name": "D", "emails": email(pre + "dup@example.com")}).Expect(201)
		})
	}
	owner.Patch("/api/books/"+loose, map[string]any{"enforce_unique_emails": true}).ExpectError(409, "DUPLICATE_EMAIL")
	if owner.Get("/api/books/" + loose).Expect(200).Bool("data.enforce_unique_emails") {
		t.Fatal("enforcement turned on despite duplicates")
	}
}

// FuzzContactDecode throws arbitrary bodies at contact create and patch
// and insists on a client error or success, never a 5xx. Without -fuzz it
// runs its seeds as a normal test.
func FuzzContactDecode(f *testing.F) {
	env := apptest.Setup(f, apptest.Options{Bare: true}).Env
	owner := env.Signup("fuzz")
	book := owner.Post("/api/books", map[string]any{"team_id": owner.TeamID, "name": "Fuzz", "enforce_unique_emails": true}).
		Expect(201).String("data.id")
	key := owner.NewKey()
	id := key.InBook(book).Post("/api/v1/contacts", map[string]any{"first_name": "Seed", "emails": []any{map[string]any{"address": "seed@example.com"}}}).
		Expect(201).String("data.id")
	seeds := []string{
		`{"first_name":"A"}`, `{}`, `null`, `[]`, `"x"`, `1`, ``, `{"first_name":"A"}{}`, `{"first_name":`,
		`{"first_name":"A","emails":[{"address":"seed@example.com"}]}`,
		`{"first_name":"A","emails":[{"address":"a@b.co","primary":true},{"address":"A@b.co"}]}`,
		`{"first_name":"A","birthday":"0000-01-01"}`, `{"first_name":"A","birthday":"9999-12-31"}`, `{"birthday":null}`,
		`{"first_name":"\u0000"}`, `{"first_name":"\ud800"}`, `{"emails":{"a":1}}`, `{"emails":[null]}`, `{"emails":null}`,
		`{"custom_fields":{}}`, `{"photo_url":null}`, `{"labels":[{"id":"x"}]}`, `{"starred":null}`, `{"starred":1}`,
		`{"first_name":"A","relationships":[{"label":"x","name":"y","contact_id":"nope"}]}`,
		`{"first_name":"A","relationships":[{"label":"x","name":"y","contact_id":"` + id + `"}]}`,
		`{"first_name":"A","dates":[{"label":"d","value":"2024-02-30"}]}`, `{"first_name":"A","website":"http://[::1"}`,
		`{"first_name":"A","phones":[{"number":"+1 (555) 010-0000 x 99"}]}`,
		`{"first_name":"A","addresses":[{"label":"home","zip":"\u0000"}]}`, `{"first_name":1e999}`,
		`{"first_name":"A","emails":[{"address":"a@b.co","label":"work","primary":"yes"}]}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	client := &http.Client{}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, req := range []struct{ method, path string }{
			{http.MethodPost, "/api/v1/contacts"},
			{http.MethodPatch, "/api/v1/contacts/" + id},
		} {
			hr, err := http.NewRequest(req.method, env.URL+req.path, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			hr.Header.Set("Authorization", "Bearer "+key.Token)
			hr.Header.Set("Content-Type", "application/json")
			hr.Header.Set("X-Book-ID", book)
			res, err := client.Do(hr)
			if err != nil {
				t.Fatal(err)
			}
			var env struct {
				Error *struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			decErr := json.NewDecoder(res.Body).Decode(&env)
			res.Body.Close()
			if res.StatusCode >= 500 {
				t.Fatalf("%s %s with %q: status %d", req.method, req.path, body, res.StatusCode)
			}
			if decErr != nil || (res.StatusCode >= 400) != (env.Error != nil) {
				t.Fatalf("%s with %q: status %d, body not the envelope (%v)", req.method, body, res.StatusCode, decErr)
			}
		}
	})
}

func TestContactBookDeleteCascades(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	book := owner.CreateBook("Doomed")
	kept := owner.CreateBook("Kept")
	label := owner.Post("/api/books/"+book+"/labels", map[string]any{"name": "L"}).Expect(201).String("data.id")
	field := owner.Post("/api/books/"+book+"/fields", map[string]any{"key": "k", "name": "K", "type": "text"}).Expect(201).String("data.id")
	ids := env.SeedContacts(book, 5)
	keptIDs := env.SeedContacts(kept, 2)
	c := owner.InBook(book)
	c.Post("/api/contacts/bulk-add-label", map[string]any{"contact_ids": ids, "label_id": label}).Expect(200)
	c.Post("/api/contacts/bulk-update-field", map[string]any{"contact_ids": ids, "field_definition_id": field, "value": "v"}).Expect(200)
	owner.Delete("/api/books/" + book).Expect(204)
	for _, table := range []string{"contacts", "contact_labels", "contact_field_values", "contact_emails"} {
		col := "contact_id"
		if table == "contacts" {
			col = "id"
		}
		if n := env.QueryInt(`SELECT count(*)::int FROM `+table+` WHERE `+col+` = ANY($1::uuid[])`, ids); n != 0 {
			t.Fatalf("%d %s rows left after the book was deleted", n, table)
		}
	}
	if n := env.QueryInt(`SELECT count(*)::int FROM contact_emails WHERE contact_id = ANY($1::uuid[])`, keptIDs); n != 2 {
		t.Fatalf("other book's email rows: %d", n)
	}
}

// TestContactEventsOnlyForWebhooks: without a webhook of the team that
// subscribes to them, contact changes (single and bulk) write no events;
// once one subscribes, every change writes its events, in its transaction.
func TestContactEventsOnlyForWebhooks(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	book := owner.CreateBook("People")
	key := owner.NewKey().InBook(book)
	label := owner.Post("/api/books/"+book+"/labels", map[string]any{"name": "L"}).Expect(http.StatusCreated).String("data.id")
	change := func() {
		var ids []string
		for i := range 3 {
			ids = append(ids, key.Post("/api/v1/contacts", map[string]any{"first_name": fmt.Sprint("P", i)}).Expect(http.StatusCreated).String("data.id"))
		}
		key.Patch("/api/v1/contacts/"+ids[0], map[string]any{"last_name": "X"}).Expect(http.StatusOK)
		key.Post("/api/v1/contacts/bulk-add-label", map[string]any{"contact_ids": ids, "label_id": label}).Expect(http.StatusOK)
		key.Post("/api/v1/contacts/bulk-delete", map[string]any{"contact_ids": ids}).Expect(http.StatusOK)
	}
	change()
	if n := env.QueryInt(`SELECT count(*) FROM events WHERE team_id = $1 AND type LIKE 'contact.%'`, owner.TeamID); n != 0 {
		t.Fatalf("%d contact events without a webhook; want 0", n)
	}
	// A webhook for updates only: only updates are written.
	owner.Post("/api/teams/"+owner.TeamID+"/webhooks", map[string]any{
		"url": "https://hooks.example.com/updates", "events": []string{"contact.updated"},
	}).Expect(http.StatusCreated)
	change()
	if got := countByType(contactEvents(t, env, owner.TeamID)); len(got) != 1 || got["contact.updated"] != 4 {
		t.Fatalf("events with a contact.updated webhook: %v; want 4 contact.updated", got)
	}
	watchContacts(owner)
	change()
	if got := countByType(contactEvents(t, env, owner.TeamID)); got["contact.created"] != 3 || got["contact.updated"] != 8 || got["contact.deleted"] != 3 {
		t.Fatalf("events with every contact event watched: %v; want 3 created, 8 updated, 3 deleted", got)
	}
}

// TestContactCursorPaging: following meta.next_cursor walks the whole list
// in every sort, ties on the sort key included, exactly as offset pages
// order it; filters apply; bad cursors are 400.
func TestContactCursorPaging(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	book := owner.CreateBook("Main")
	ids := env.SeedContacts(book, 230)
	// Ties: 40 contacts share their timestamps, 10 their name.
	if _, err := env.App.Pool.Exec(context.Background(), `
		UPDATE contacts SET created_at = timestamptz '2026-01-01 00:01:00.123456', updated_at = timestamptz '2026-01-15'
		WHERE id = ANY($1)`, ids[100:140]); err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.Pool.Exec(context.Background(), `UPDATE contacts SET last_name = 'Same', company = '' WHERE id = ANY($1)`, ids[150:160]); err != nil {
		t.Fatal(err)
	}
	c := owner.NewKey().InBook(book)
	walk := func(query string, limit int) []string {
		t.Helper()
		var got []string
		next := ""
		for range 100 {
			path := fmt.Sprintf("/api/v1/contacts?limit=%d&%s", limit, query)
			if next != "" {
				path += "&cursor=" + next
			}
			r := c.Get(path).Expect(200)
			for i := range r.Len("data") {
				got = append(got, r.String(fmt.Sprintf("data.%d.id", i)))
			}
			if r.Value("meta.next_cursor") == nil {
				if r.Len("data") == 0 && len(got) > 0 {
					t.Errorf("%s: an empty last page", query)
				}
				return got
			}
			next = r.String("meta.next_cursor")
		}
		t.Fatalf("%s: no end after 100 pages", query)
		return nil
	}
	for _, sort := range []string{"created_at", "-created_at", "updated_at", "-updated_at", "name", "-name"} {
		var want []string
		// Pages past the middle are read from the end of the index.
		for off := 0; off < 230; off += 23 {
			r := c.Get(fmt.Sprintf("/api/v1/contacts?limit=23&offset=%d&sort=%s", off, sort)).Expect(200)
			for i := range r.Len("data") {
				want = append(want, r.String(fmt.Sprintf("data.%d.id", i)))
			}
		}
		if got := walk("sort="+sort, 17); !reflect.DeepEqual(got, want) {
			t.Errorf("sort=%s: the cursor walk gave %d contacts, not the %d of the offset pages in their order", sort, len(got), len(want))
		}
	}
	// Filtered: offset pages past the middle of the 76 starred contacts are
	// read from the end too.
	var starred []string
	for off := 0; off < 76; off += 7 {
		r := c.Get(fmt.Sprintf("/api/v1/contacts?starred=true&sort=name&limit=7&offset=%d", off)).Expect(200)
		for i := range r.Len("data") {
			starred = append(starred, r.String(fmt.Sprintf("data.%d.id", i)))
		}
	}
	if got := walk("starred=true&sort=name", 10); len(got) != 76 || !reflect.DeepEqual(got, starred) {
		t.Errorf("starred walk: %d contacts, want the 76 of the offset pages (%d) in their order", len(got), len(starred))
	}
	// An exact multiple of the limit: the last full page says it is the last.
	if got := walk("q=p1@seed", 1); len(got) != 1 {
		t.Errorf("q walk: %d contacts, want 1", len(got))
	}

	first := c.Get("/api/v1/contacts?limit=5&sort=name").Expect(200)
	cur := first.String("meta.next_cursor")
	if r := c.Get("/api/v1/contacts?limit=5&cursor=" + cur).Expect(200); r.String("data.0.id") == first.String("data.0.id") || r.Int("meta.total") != 230 {
		t.Fatalf("a cursor without sort keeps its own sort: %s", r.Body)
	}
	for _, bad := range []string{"cursor=abc", "cursor=" + cur + "x", "cursor=" + cur + "&sort=-name", "cursor=" + cur + "&offset=5",
		"cursor=eyJzIjoibmFtZSJ9", "cursor=e30"} {
		c.Get("/api/v1/contacts?"+bad).ExpectError(400, "INVALID_INPUT")
	}
	if r := c.Get("/api/v1/contacts?limit=200&offset=200").Expect(200); r.Value("meta.next_cursor") != nil || !r.Has("meta.next_cursor") {
		t.Fatalf("last page: next_cursor must be null: %s", r.Body)
	}
}
