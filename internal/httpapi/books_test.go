package httpapi_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
)

func TestBooksCRUD(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	member := env.Join(owner, "member", "member")
	viewer := env.Join(owner, "viewer", "viewer")
	key := owner.NewKey()

	r := member.Post("/api/books", map[string]any{"team_id": owner.TeamID, "name": "Top Clients!", "color": "#AABBCC", "icon": "star"}).
		Expect(http.StatusCreated)
	id := r.String("data.id")
	if r.String("data.slug") != "top-clients" || r.String("data.color") != "#AABBCC" || r.String("data.icon") != "star" ||
		r.Int("data.contact_count") != 0 || r.Bool("data.enforce_unique_emails") {
		t.Fatalf("created: %s", r.Body)
	}
	// Slugs are unique in the team; team_id may be left out by a one-team user.
	if s := owner.Post("/api/books", map[string]any{"name": "Top clients"}).Expect(http.StatusCreated).String("data.slug"); s != "top-clients-2" {
		t.Fatalf("second slug %q", s)
	}
	// Another team may reuse the slug.
	other := env.Signup("other")
	if s := other.Post("/api/books", map[string]any{"name": "Top clients"}).Expect(http.StatusCreated).String("data.slug"); s != "top-clients" {
		t.Fatalf("other team's slug %q", s)
	}

	viewer.Post("/api/books", map[string]any{"team_id": owner.TeamID, "name": "Nope"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	for name, body := range map[string]map[string]any{
		"no name":    {"name": ""},
		"bad colour": {"name": "x", "color": "red"},
		"short hex":  {"name": "x", "color": "#ABC"},
		"long name":  {"name": strings.Repeat("n", 201)},
	} {
		t.Run(name, func(t *testing.T) {
			owner.Post("/api/books", body).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		})
	}

	// Read on both APIs.
	for _, c := range []*apptest.Client{viewer.Client, key} {
		prefix, query := "/api", "?team_id="+owner.TeamID
		if c == key {
			prefix, query = "/api/v1", ""
		}
		list := c.Get(prefix + "/books" + query).Expect(http.StatusOK)
		if list.Len("data") != 2 {
			t.Fatalf("%s books: %s", prefix, list.Body)
		}
		if c.Get(prefix+"/books/"+id).Expect(http.StatusOK).String("data.name") != "Top Clients!" {
			t.Fatalf("%s get book", prefix)
		}
	}

	// Update: member; only what is sent changes; the slug stays.
	viewer.Patch("/api/books/"+id, map[string]any{"name": "x"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	member.Patch("/api/books/"+id, map[string]any{}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	member.Patch("/api/books/"+id, map[string]any{"color": "blue"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	member.Patch("/api/books/"+id, map[string]any{"name": nil}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	u := member.Patch("/api/books/"+id, map[string]any{"name": "VIPs", "enforce_unique_emails": true}).Expect(http.StatusOK)
	if u.String("data.name") != "VIPs" || u.String("data.slug") != "top-clients" || !u.Bool("data.enforce_unique_emails") || u.String("data.color") != "#AABBCC" {
		t.Fatalf("updated: %s", u.Body)
	}

	// Delete: admin; cascades; emits book.deleted.
	member.Delete("/api/books/"+id).ExpectError(http.StatusForbidden, "FORBIDDEN")
	owner.Post("/api/books/"+id+"/labels", map[string]any{"name": "L"}).Expect(http.StatusCreated)
	owner.Delete("/api/books/" + id).Expect(http.StatusNoContent)
	owner.Get("/api/books/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
	owner.Delete("/api/books/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
	// What a delete takes with it, and its events, are the books
	// package's tests.
}

func TestBooksTeamChoice(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	a := env.Signup("a")
	b := env.Signup("b")
	// a joins b's team: now a has two teams and must say which.
	env.AddMember(b, a, "member")
	a.Get("/api/books").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	a.Post("/api/books", map[string]any{"name": "x"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	a.Get("/api/books?team_id=" + b.TeamID).Expect(http.StatusOK)
	a.Get("/api/books?team_id=nope").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	a.Post("/api/books", map[string]any{"team_id": b.TeamID, "name": "x"}).Expect(http.StatusCreated)
	a.Post("/api/books", map[string]any{"team_id": "nope", "name": "x"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
}

func TestLabels(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	viewer := env.Join(owner, "viewer", "viewer")
	book := owner.CreateBook("B")
	labels := "/api/books/" + book + "/labels"

	viewer.Post(labels, map[string]any{"name": "x"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	owner.Post(labels, map[string]any{"name": ""}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	owner.Post(labels, map[string]any{"name": "x", "color": "#12345"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	var ids []string
	for i, name := range []string{"hot", "cold", "warm"} {
		r := owner.Post(labels, map[string]any{"name": name, "color": "#112233"}).Expect(http.StatusCreated)
		if r.Int("data.sort_order") != i || r.String("data.book_id") != book {
			t.Fatalf("label %d: %s", i, r.Body)
		}
		ids = append(ids, r.String("data.id"))
	}
	list := viewer.Get(labels).Expect(http.StatusOK)
	if list.Len("data") != 3 || list.String("data.0.name") != "hot" || list.String("data.2.name") != "warm" {
		t.Fatalf("labels: %s", list.Body)
	}
	// The public API lists them too.
	key := owner.NewKey()
	if key.Get("/api/v1/books/"+book+"/labels").Expect(http.StatusOK).Len("data") != 3 {
		t.Fatal("public labels")
	}

	viewer.Patch(labels+"/"+ids[0], map[string]any{"name": "x"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	owner.Patch(labels+"/"+ids[0], map[string]any{}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	owner.Patch(labels+"/"+ids[0], map[string]any{"sort_order": -1}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	up := owner.Patch(labels+"/"+ids[0], map[string]any{"name": "very hot", "sort_order": 9}).Expect(http.StatusOK)
	if up.String("data.name") != "very hot" || up.Int("data.sort_order") != 9 || up.String("data.color") != "#112233" {
		t.Fatalf("patched: %s", up.Body)
	}
	if viewer.Get(labels).Expect(http.StatusOK).String("data.2.name") != "very hot" {
		t.Fatal("order not by sort_order")
	}
	owner.Patch(labels+"/00000000-0000-0000-0000-000000000000", map[string]any{"name": "x"}).ExpectError(http.StatusNotFound, "NOT_FOUND")

	viewer.Delete(labels+"/"+ids[1]).ExpectError(http.StatusForbidden, "FORBIDDEN")
	owner.Delete(labels + "/" + ids[1]).Expect(http.StatusNoContent)
	owner.Delete(labels+"/"+ids[1]).ExpectError(http.StatusNotFound, "NOT_FOUND")
	// The next label is appended after the last one.
	if n := owner.Post(labels, map[string]any{"name": "new"}).Expect(http.StatusCreated).Int("data.sort_order"); n != 10 {
		t.Fatalf("appended at %d, want 10", n)
	}
}

func TestCustomFields(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	viewer := env.Join(owner, "viewer", "viewer")
	book := owner.CreateBook("B")
	fields := "/api/books/" + book + "/fields"

	r := owner.Post(fields, map[string]any{"key": "linkedin_url", "name": "LinkedIn", "type": "url"}).Expect(http.StatusCreated)
	for _, p := range []string{"id", "book_id", "key", "name", "type", "created_at"} {
		if !r.Has("data." + p) {
			t.Fatalf("field lacks %s: %s", p, r.Body)
		}
	}
	id := r.String("data.id")
	owner.Post(fields, map[string]any{"key": "linkedin_url", "name": "Again", "type": "text"}).ExpectError(http.StatusConflict, "CONFLICT")
	for name, body := range map[string]map[string]any{
		"upper key":  {"key": "Bad", "name": "x", "type": "text"},
		"digit key":  {"key": "1x", "name": "x", "type": "text"},
		"long key":   {"key": "a" + strings.Repeat("b", 64), "name": "x", "type": "text"},
		"bad type":   {"key": "ok", "name": "x", "type": "money"},
		"no name":    {"key": "ok", "type": "text"},
		"wrong type": {"key": 5, "name": "x", "type": "text"},
	} {
		t.Run(name, func(t *testing.T) {
			owner.Post(fields, body).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		})
	}
	viewer.Post(fields, map[string]any{"key": "k", "name": "x", "type": "text"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	if viewer.Get(fields).Expect(http.StatusOK).Len("data") != 1 {
		t.Fatal("fields list")
	}
	viewer.Delete(fields+"/"+id).ExpectError(http.StatusForbidden, "FORBIDDEN")
	owner.Delete(fields + "/" + id).Expect(http.StatusNoContent)
	owner.Delete(fields+"/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
}

func TestCrossTeamBooksAreRefused(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	a := env.Signup("a")
	b := env.Signup("b")
	aKey := a.NewKey()
	bBook := b.CreateBook("B's")
	bLabel := b.Post("/api/books/"+bBook+"/labels", map[string]any{"name": "x"}).Expect(http.StatusCreated).String("data.id")
	bField := b.Post("/api/books/"+bBook+"/fields", map[string]any{"key": "k", "name": "K", "type": "text"}).Expect(http.StatusCreated).String("data.id")
	p := "/api/books/" + bBook

	aKey.Get("/api/v1/books/"+bBook).ExpectError(http.StatusNotFound, "NOT_FOUND")
	aKey.Get("/api/v1/books/"+bBook+"/labels").ExpectError(http.StatusNotFound, "NOT_FOUND")
	if aKey.Get("/api/v1/books").Expect(http.StatusOK).Len("data") != 0 {
		t.Fatal("A's key sees B's books")
	}
	// A key works in its own team whatever team_id says, well formed or not.
	for _, q := range []string{b.TeamID, "not-a-uuid"} {
		if aKey.Get("/api/v1/books?team_id="+q).Expect(http.StatusOK).Len("data") != 0 {
			t.Fatalf("A's key with team_id=%s sees B's books", q)
		}
	}
	a.Get(p).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Get("/api/books?team_id="+b.TeamID).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Post("/api/books", map[string]any{"team_id": b.TeamID, "name": "x"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Patch(p, map[string]any{"name": "pwned"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Delete(p).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Get(p+"/labels").ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Post(p+"/labels", map[string]any{"name": "x"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Patch(p+"/labels/"+bLabel, map[string]any{"name": "x"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Delete(p+"/labels/"+bLabel).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Get(p+"/fields").ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Post(p+"/fields", map[string]any{"key": "z", "name": "Z", "type": "text"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Delete(p+"/fields/"+bField).ExpectError(http.StatusNotFound, "NOT_FOUND")
	// A's own book with B's label id.
	aBook := a.CreateBook("A's")
	a.Patch("/api/books/"+aBook+"/labels/"+bLabel, map[string]any{"name": "x"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Delete("/api/books/"+aBook+"/labels/"+bLabel).ExpectError(http.StatusNotFound, "NOT_FOUND")
	if env.QueryInt(`SELECT count(*) FROM books WHERE id = $1 AND name = 'B''s'`, bBook) != 1 ||
		env.QueryInt(`SELECT count(*) FROM labels WHERE id = $1 AND name = 'x'`, bLabel) != 1 {
		t.Fatal("B's data changed")
	}
}

func TestHTTPEnvelopeAndLimits(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	key := owner.NewKey()

	// Unknown routes and methods answer the JSON envelope.
	for _, path := range []string{"/api/nope", "/api/v1/nope", "/nope", "/api/books/x/y/z"} {
		c := owner.Client
		if strings.HasPrefix(path, "/api/v1") {
			c = key
		}
		r := c.Get(path).ExpectError(http.StatusNotFound, "NOT_FOUND")
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: content type %q", path, r.Header.Get("Content-Type"))
		}
	}
	// A path no route serves is 404 before any credential is asked for,
	// under both prefixes; a known one without a key is 401.
	env.Anonymous().Get("/api/v1/nope").ExpectError(http.StatusNotFound, "NOT_FOUND")
	env.Anonymous().Get("/api/nope").ExpectError(http.StatusNotFound, "NOT_FOUND")
	env.Anonymous().Get("/api/v1/books").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	owner.Put("/api/me", nil).ExpectError(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")

	// A value of the wrong form is named by its field, whether the JSON
	// type is wrong or the value does not parse (a UUID, a time).
	for body, field := range map[string]string{
		`{"team_id": "nope", "name": "x"}`: "team_id",
		`{"team_id": 7, "name": "x"}`:      "team_id",
	} {
		msg := owner.Post("/api/books", apptest.Raw{ContentType: "application/json", Body: []byte(body)}).
			ExpectError(http.StatusBadRequest, "INVALID_INPUT").String("error.message")
		if !strings.Contains(msg, "`"+field+"`") {
			t.Errorf("%s: the message %q does not name %s", body, msg, field)
		}
	}
	msg := owner.Post("/api/teams/"+owner.TeamID+"/api-keys", map[string]any{"name": "k", "expires_at": "tomorrow"}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT").String("error.message")
	if !strings.Contains(msg, "`expires_at`") {
		t.Errorf("expires_at: the message %q does not name the field", msg)
	}
	key.Delete("/api/v1/books").ExpectError(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")

	// Bodies.
	owner.Post("/api/books", apptest.Raw{ContentType: "text/plain", Body: []byte(`{"name":"x"}`)}).
		ExpectError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
	owner.Post("/api/books", apptest.Raw{Body: []byte(`{"name":"x"}`)}).
		ExpectError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
	owner.Post("/api/books", apptest.Raw{ContentType: "application/json; charset=utf-8", Body: []byte(`{"name":"ok"}`)}).
		Expect(http.StatusCreated)
	for name, body := range map[string]string{
		"empty":     ``,
		"syntax":    `{"name":`,
		"not json":  `hello`,
		"array":     `[1,2]`,
		"two":       `{"name":"a"}{"name":"b"}`,
		"wrong int": `{"name":"x","enforce_unique_emails":"yes"}`,
		"bad uuid":  `{"name":"x","team_id":"nope"}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := owner.Post("/api/books", apptest.Raw{ContentType: "application/json", Body: []byte(body)}).
				ExpectError(http.StatusBadRequest, "INVALID_INPUT")
			if strings.Contains(r.String("error.message"), "Go ") || strings.Contains(r.String("error.message"), "struct") {
				t.Fatalf("internal detail leaks: %s", r.Body)
			}
		})
	}
	if msg := owner.Post("/api/books", map[string]any{"name": 5}).ExpectError(http.StatusBadRequest, "INVALID_INPUT").String("error.message"); !strings.Contains(msg, "name") {
		t.Fatalf("type error does not name the field: %q", msg)
	}
	big := bytes.Repeat([]byte("a"), 3<<20)
	owner.Post("/api/books", apptest.Raw{ContentType: "application/json", Body: append(append([]byte(`{"name":"`), big...), '"', '}')}).
		ExpectError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	if env.QueryInt(`SELECT count(*) FROM books`) != 1 {
		t.Fatal("a refused request wrote a book")
	}

	// Malformed ids in paths.
	owner.Get("/api/books/not-a-uuid").ExpectError(http.StatusNotFound, "NOT_FOUND")
	key.Get("/api/v1/books/not-a-uuid").ExpectError(http.StatusNotFound, "NOT_FOUND")

	// Request ids: echoed when sane, made up otherwise.
	r := owner.Get("/api/me", "X-Request-ID", "abc-123")
	if r.Header.Get("X-Request-ID") != "abc-123" {
		t.Fatalf("request id %q", r.Header.Get("X-Request-ID"))
	}
	r = owner.Get("/api/nope", "X-Request-ID", "bad id with spaces")
	if id := r.Header.Get("X-Request-ID"); id == "" || strings.Contains(id, " ") {
		t.Fatalf("request id %q", id)
	}

	// Health.
	env.Anonymous().Get("/healthz").Expect(http.StatusOK)
	env.Anonymous().Get("/readyz").Expect(http.StatusOK)
}

func TestBillingReturnPages(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	for path, want := range map[string]string{"/billing/success": "payment received", "/billing/cancel": "Checkout cancelled"} {
		r := env.Anonymous().Get(path).Expect(http.StatusOK)
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.Body), want) {
			t.Fatalf("%s: %s %s", path, r.Header.Get("Content-Type"), r.Body)
		}
	}
}
