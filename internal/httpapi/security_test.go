package httpapi_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/audit"
)

func auditPath(teamID string) string { return "/api/teams/" + teamID + "/audit-log" }

type auditEntry struct {
	ID     string `json:"id"`
	Action string `json:"action"`
	Actor  struct {
		Type string  `json:"type"`
		ID   *string `json:"id"`
		Name string  `json:"name"`
	} `json:"actor"`
	Target struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"target"`
	IP        string         `json:"ip"`
	UserAgent string         `json:"user_agent"`
	Details   map[string]any `json:"details"`
}

func TestAuditLog(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	viewer := env.Join(owner, "viewer", "viewer")
	admin := env.Join(owner, "admin", "admin")
	book := owner.CreateBook("Leads")
	keyID := owner.Post("/api/teams/"+owner.TeamID+"/api-keys", map[string]any{"name": "sync", "scope": "read"},
		"User-Agent", "AuditTest/2.0").Expect(http.StatusCreated).String("data.api_key.id")
	owner.Patch("/api/teams/"+admin.TeamID+"/members/"+admin.ID, map[string]string{"role": "member"}).Expect(http.StatusOK)
	owner.Delete("/api/teams/" + owner.TeamID + "/api-keys/" + keyID).Expect(http.StatusNoContent)
	key := owner.NewKey()
	id := key.InBook(book).Post("/api/v1/contacts", map[string]any{"first_name": "Ada"}).Expect(http.StatusCreated).String("data.id")
	key.InBook(book).Post("/api/v1/contacts/bulk-delete", map[string]any{"contact_ids": []string{id}}).Expect(http.StatusOK)
	owner.Delete("/api/books/" + book).Expect(http.StatusNoContent)

	viewer.Get(auditPath(owner.TeamID)).ExpectError(http.StatusForbidden, "FORBIDDEN")
	env.Signup("stranger").Get(auditPath(owner.TeamID)).ExpectError(http.StatusNotFound, "NOT_FOUND")

	var all []auditEntry
	owner.Get(auditPath(owner.TeamID)).Expect(http.StatusOK).Decode("data", &all)
	var actions []string
	for _, e := range all {
		actions = append(actions, e.Action)
	}
	want := []string{"book.deleted", "contacts.bulk_deleted", "api_key.created", "api_key.deleted", "member.role_changed",
		"api_key.created", "book.created", "member.joined", "member.invited", "member.joined", "member.invited"}
	if strings.Join(actions, " ") != strings.Join(want, " ") {
		t.Fatalf("actions, newest first:\n got %v\nwant %v", actions, want)
	}
	created := all[len(all)-6]
	if created.Actor.Type != "user" || created.Actor.ID == nil || *created.Actor.ID != owner.ID || created.Actor.Name != owner.Email ||
		created.Target.Type != "api_key" || created.Target.ID != keyID || created.UserAgent != "AuditTest/2.0" || created.IP == "" ||
		created.Details["scope"] != "read" || created.Details["name"] != "sync" {
		t.Fatalf("api_key.created entry: %+v", created)
	}
	if bulk := all[1]; bulk.Actor.Type != "api_key" || bulk.Actor.Name != "test key" || bulk.Details["deleted"] != float64(1) {
		t.Fatalf("contacts.bulk_deleted entry: %+v", bulk)
	}
	if role := all[4]; role.Details["role"] != "member" || role.Details["previous_role"] != "admin" || role.Target.ID != admin.ID {
		t.Fatalf("member.role_changed entry: %+v", role)
	}

	// Filters and cursor paging.
	r := owner.Get(auditPath(owner.TeamID) + "?action=api_key.created").Expect(http.StatusOK)
	if r.Len("data") != 2 {
		t.Fatalf("action filter: %s", r.Body)
	}
	if n := owner.Get(auditPath(owner.TeamID) + "?actor_id=" + admin.ID).Expect(http.StatusOK).Len("data"); n != 1 {
		t.Fatalf("actor filter: %d entries, want admin's member.joined", n)
	}
	// Entries are stamped by the database's clock, as every instance
	// shares it.
	since := rfc3339(time.Now().Add(-time.Minute))
	if n := owner.Get(auditPath(owner.TeamID) + "?since=" + since + "&until=" + rfc3339(time.Now().Add(time.Second))).Expect(http.StatusOK).Len("data"); n != len(all) {
		t.Fatalf("time filter: %d entries, want %d", n, len(all))
	}
	if n := owner.Get(auditPath(owner.TeamID) + "?until=" + since).Expect(http.StatusOK).Len("data"); n != 0 {
		t.Fatalf("until before everything: %d entries", n)
	}
	var paged []string
	cursor := ""
	for range 10 {
		p := owner.Get(auditPath(owner.TeamID) + "?limit=4&cursor=" + cursor).Expect(http.StatusOK)
		var page []auditEntry
		p.Decode("data", &page)
		for _, e := range page {
			paged = append(paged, e.Action)
		}
		if p.Value("meta.next_cursor") == nil {
			break
		}
		cursor = p.String("meta.next_cursor")
	}
	if strings.Join(paged, " ") != strings.Join(want, " ") {
		t.Fatalf("paged: %v", paged)
	}
	owner.Get(auditPath(owner.TeamID)+"?cursor=nonsense").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	owner.Get(auditPath(owner.TeamID)+"?since=yesterday").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	owner.Get(auditPath(owner.TeamID)+"?limit=0").ExpectError(http.StatusBadRequest, "INVALID_INPUT")

	// The CSV export: the same entries, same filters.
	exp := owner.Get(auditPath(owner.TeamID) + "/export?action=book.deleted").Expect(http.StatusOK)
	rows, err := csv.NewReader(bytes.NewReader(exp.Body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0][5] != "action" || rows[1][5] != "book.deleted" || rows[1][7] != book {
		t.Fatalf("export: %q", rows)
	}
	viewer.Get(auditPath(owner.TeamID)+"/export").ExpectError(http.StatusForbidden, "FORBIDDEN")

	// Nothing changes or deletes an entry: no route but the two reads.
	routes := env.App.Handler.(chi.Routes)
	_ = chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if strings.Contains(route, "audit-log") && method != http.MethodGet {
			t.Errorf("%s %s changes the audit log", method, route)
		}
		return nil
	})
}

func rfc3339(t time.Time) string { return strings.ReplaceAll(t.UTC().Format(time.RFC3339), "+", "%2B") }

// TestAuditRetention keeps 400 days and deletes what is older.
func TestAuditRetention(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	owner.CreateBook("Kept")
	ctx := context.Background()
	if _, err := env.App.Pool.Exec(ctx, `
		INSERT INTO audit_log (team_id, at, actor_type, action)
		VALUES ($1, now() - interval '401 days', 'system', 'old.one'), ($1, now() - interval '399 days', 'system', 'kept.one')`,
		owner.TeamID); err != nil {
		t.Fatal(err)
	}
	// The daily job's run, as its periodic schedule enqueues it.
	if _, err := env.App.Jobs.Client().Insert(ctx, audit.PruneArgs{}, nil); err != nil {
		t.Fatal(err)
	}
	env.WaitJobs()
	var actions []string
	for _, e := range owner.Get(auditPath(owner.TeamID)).Expect(http.StatusOK).Value("data").([]any) {
		actions = append(actions, e.(map[string]any)["action"].(string))
	}
	if strings.Join(actions, " ") != "book.created kept.one" {
		t.Fatalf("after retention: %v", actions)
	}
}

// TestReadKeyCannotWrite walks the route table: a read key gets 403 from
// every write of the public API, and 401 from every write of the internal
// one (which takes no keys at all); nothing changes.
func TestReadKeyCannotWrite(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	owner.SetAddon("active")
	book := owner.CreateBook("Leads")
	full := owner.NewKey()
	contact := full.InBook(book).Post("/api/v1/contacts", map[string]any{"first_name": "Ada"}).Expect(http.StatusCreated).String("data.id")
	keyBody := owner.Post("/api/teams/"+owner.TeamID+"/api-keys", map[string]any{"name": "reader", "scope": "read"}).Expect(http.StatusCreated)
	if keyBody.String("data.api_key.scope") != "read" {
		t.Fatalf("key: %s", keyBody.Body)
	}
	read := env.Client(keyBody.String("data.key")).InBook(book)
	read.Get("/api/v1/contacts/" + contact).Expect(http.StatusOK)
	read.Do(http.MethodHead, "/api/v1/contacts/"+contact, nil).Expect(http.StatusOK)

	// Routes that take no credentials at all: a key there is no identity.
	public := map[string]bool{
		"/api/auth/signup": true, "/api/auth/login": true, "/api/auth/login/2fa": true, "/api/auth/password-reset": true,
		"/api/auth/password-reset/confirm": true, "/api/invitations/accept": true, "/api/invitations/lookup": true, "/api/payments/webhook": true,
		"/api/mailer/events/{book_id}": true, "/api/mailer/ses/{book_id}": true, "/api/unsubscribe/confirm": true,
		"/api/forms/{form_id}/submissions": true, "/api/forms/confirm": true, "/api/preferences": true,
	}
	before := env.QueryInt(`SELECT count(*) FROM audit_log`) + env.QueryInt(`SELECT count(*) FROM contacts`)
	writes := 0
	err := chi.Walk(env.App.Handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions || !strings.HasPrefix(route, "/api/") || public[route] {
			return nil
		}
		route = strings.ReplaceAll(strings.TrimSuffix(route, "/*"), "/*/", "/")
		path := paramName.ReplaceAllStringFunc(route, func(p string) string {
			switch p {
			case "{team_id}":
				return owner.TeamID
			case "{id}":
				if strings.HasPrefix(route, "/api/v1/contacts") || strings.HasPrefix(route, "/api/contacts") {
					return contact
				}
				if strings.HasPrefix(route, "/api/v1/books") || strings.HasPrefix(route, "/api/books") {
					return book
				}
			}
			return uuid.NewString()
		})
		writes++
		r := read.Do(method, path, map[string]any{"contact_ids": []string{contact}, "name": "x", "first_name": "x"})
		if strings.HasPrefix(route, "/api/v1/") {
			if r.Status != http.StatusForbidden || !strings.Contains(string(r.Body), "may only read") {
				t.Errorf("%s %s with a read key: %d %s", method, path, r.Status, r.Body)
			}
		} else if r.Status != http.StatusUnauthorized {
			t.Errorf("%s %s with a read key: %d %s", method, path, r.Status, r.Body)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if writes < 60 {
		t.Fatalf("only %d write routes walked", writes)
	}
	if after := env.QueryInt(`SELECT count(*) FROM audit_log`) + env.QueryInt(`SELECT count(*) FROM contacts`); after != before {
		t.Fatalf("a read key changed something: %d rows before, %d after", before, after)
	}
}

func TestKeyExpiry(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	keys := "/api/teams/" + owner.TeamID + "/api-keys"
	owner.Post(keys, map[string]any{"name": "old", "expires_at": env.Clock.Now().Add(-time.Minute)}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	owner.Post(keys, map[string]any{"name": "bad", "scope": "admin"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	r := owner.Post(keys, map[string]any{"name": "temp", "expires_at": env.Clock.Now().Add(time.Hour)}).Expect(http.StatusCreated)
	if r.String("data.api_key.scope") != "full" || r.String("data.api_key.expires_at") == "" {
		t.Fatalf("key: %s", r.Body)
	}
	key := env.Client(r.String("data.key"))
	key.Get("/api/v1/books").Expect(http.StatusOK)
	if owner.Get(keys).Expect(http.StatusOK).String("data.0.expires_at") == "" {
		t.Fatal("the list does not show the expiry")
	}
	env.Clock.Advance(time.Hour)
	key.Get("/api/v1/books").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
}

func TestKeyRateLimit(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true, Env: map[string]string{"API_KEY_RATE_LIMIT": "5"}}).Env
	owner := env.Signup("owner")
	key, other := owner.NewKey(), owner.NewKey()
	for i := range 5 {
		r := key.Get("/api/v1/books").Expect(http.StatusOK)
		if r.Header.Get("RateLimit-Limit") != "5" || r.Header.Get("RateLimit-Remaining") != strconv.Itoa(4-i) {
			t.Fatalf("request %d: RateLimit-Limit %q, RateLimit-Remaining %q", i, r.Header.Get("RateLimit-Limit"), r.Header.Get("RateLimit-Remaining"))
		}
		if reset, err := strconv.Atoi(r.Header.Get("RateLimit-Reset")); err != nil || reset < 1 || reset > 60 {
			t.Fatalf("RateLimit-Reset %q", r.Header.Get("RateLimit-Reset"))
		}
	}
	r := key.Get("/api/v1/books").ExpectError(http.StatusTooManyRequests, "RATE_LIMITED")
	if secs, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 60 {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	other.Get("/api/v1/books").Expect(http.StatusOK)
	// The next minute starts over.
	env.Clock.Advance(time.Minute)
	key.Get("/api/v1/books").Expect(http.StatusOK)
	// Logged-in users are not limited this way.
	for range 6 {
		owner.Get("/api/books").Expect(http.StatusOK)
	}
	// A read key's refused write counts and carries the headers too.
	reader := env.Client(owner.Post("/api/teams/"+owner.TeamID+"/api-keys", map[string]any{"name": "reader", "scope": "read"}).
		Expect(http.StatusCreated).String("data.key"))
	r = reader.Post("/api/v1/contacts", map[string]any{"first_name": "X"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	if r.Header.Get("RateLimit-Limit") != "5" || r.Header.Get("RateLimit-Remaining") != "4" || r.Header.Get("RateLimit-Reset") == "" {
		t.Fatalf("a read key's refused write: RateLimit-Limit %q, RateLimit-Remaining %q, RateLimit-Reset %q",
			r.Header.Get("RateLimit-Limit"), r.Header.Get("RateLimit-Remaining"), r.Header.Get("RateLimit-Reset"))
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	check := func(r *apptest.Response, what, ancestors string) {
		t.Helper()
		h := r.Header
		if h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", what, h.Get("X-Content-Type-Options"))
		}
		if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors "+ancestors) {
			t.Errorf("%s: Content-Security-Policy %q", what, h.Get("Content-Security-Policy"))
		}
		if p := h.Get("Referrer-Policy"); p != "same-origin" && p != "no-referrer" {
			t.Errorf("%s: Referrer-Policy %q", what, p)
		}
		if h.Get("Strict-Transport-Security") != "" {
			t.Errorf("%s: HSTS over http", what)
		}
	}
	check(owner.Get("/api/me").Expect(http.StatusOK), "JSON", "'none'")
	check(env.Anonymous().Get("/api/nothing-here"), "404", "'none'")
	check(env.Anonymous().Get("/app/login").Expect(http.StatusOK), "app", "'none'")
	check(env.Anonymous().Get("/app/preview.html").Expect(http.StatusOK), "preview", "'self'")
	check(env.Anonymous().Get("/api/unsubscribe?token=unknown"), "unsubscribe page", "'none'")

	secure := apptest.Setup(t, apptest.Options{Bare: true, Env: map[string]string{"PUBLIC_BASE_URL": "https://contacts.example.com"}}).Env
	if h := secure.Anonymous().Get("/healthz").Expect(http.StatusOK).Header.Get("Strict-Transport-Security"); !strings.HasPrefix(h, "max-age=") {
		t.Fatalf("HSTS under https: %q", h)
	}
}

// TestCSVCellsAreNeutralised: every cell the service writes that starts
// with a formula character carries a leading apostrophe, and import takes
// it off again, so a round trip is exact.
func TestCSVCellsAreNeutralised(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("owner")
	book := u.CreateBook("Leads")
	in := u.InBook(book)
	in.Post("/api/contacts", map[string]any{"first_name": `=HYPERLINK("http://evil.example","x")`, "last_name": "+1", "company": "@SUM(A1)",
		"job_title": "-2", "notes": "'=already quoted", "emails": []map[string]any{{"address": "ada@example.com", "label": "work", "primary": true}}}).Expect(http.StatusCreated)
	in.Post("/api/contacts", map[string]any{"first_name": "Plain", "last_name": "1-2"}).Expect(http.StatusCreated)
	in.Post("/api/suppressions", map[string]any{"email": "-x@example.com"}).Expect(http.StatusCreated)
	u.Get("/api/me", "User-Agent", "=cmd|' /C calc'!A0").Expect(http.StatusOK)
	u.Patch("/api/teams/"+u.TeamID, map[string]string{"name": "Team"}, "User-Agent", "=cmd|' /C calc'!A0").Expect(http.StatusOK)

	exports := map[string]string{
		"contacts":     "/api/books/" + book + "/export",
		"suppressions": "/api/books/" + book + "/suppressions/export",
		"audit log":    auditPath(u.TeamID) + "/export",
	}
	risky := 0
	dump := ""
	for what, path := range exports {
		body := u.Get(path).Expect(http.StatusOK).Body
		dump += string(body)
		rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, row := range rows {
			for _, cell := range row {
				if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
					t.Errorf("%s: cell %q starts with a formula character", what, cell)
				}
				if strings.HasPrefix(cell, "'") {
					risky++
				}
			}
		}
	}
	if risky != 7 {
		t.Logf("files:\n%s", dump)
		t.Fatalf("%d neutralised cells, want the 7 written above", risky)
	}

	want := bookContacts(t, u, book)
	byContent(want)
	target := u.CreateBook("Round trip")
	res := runImport(env, u, target, u.Get(exports["contacts"]).Expect(http.StatusOK).Body, nil)
	if res.Int("data.created") != 2 {
		t.Fatalf("import: %s", res.Body)
	}
	got := bookContacts(t, u, target)
	byContent(got)
	for i := range want {
		if a, b := comparable(want[i]), comparable(got[i]); a != b {
			t.Errorf("round trip, contact %d:\nwant %s\n got %s", i, a, b)
		}
	}
}

// TestNoSecretLeaks: no API key, webhook secret, provider key, TOTP secret
// or recovery code appears in the audit log, the logs or an error message.
func TestNoSecretLeaks(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	owner.SetAddon("active")
	book := owner.CreateBook("Leads")
	var secrets []string
	key := owner.Post("/api/teams/"+owner.TeamID+"/api-keys", map[string]any{"name": "k"}).Expect(http.StatusCreated).String("data.key")
	secrets = append(secrets, key)
	hook := owner.Post(webhooksPath(owner.TeamID), map[string]any{"url": "https://user:hook-password-123@hooks.example.com/x", "events": []string{"contact.created"}}).
		Expect(http.StatusCreated)
	secrets = append(secrets, hook.String("data.secret"), "hook-password-123")
	owner.Patch(webhooksPath(owner.TeamID, "/", hook.String("data.webhook.id")), map[string]any{"active": false}).Expect(http.StatusOK)
	providerKey := "SG.provider-secret-key-0123456789"
	owner.InBook(book).Put("/api/campaign-settings", map[string]any{"sender_email": "news@acme.example", "mailer_api_key": providerKey}).Expect(http.StatusOK)
	secrets = append(secrets, providerKey)
	secret, codes := turnOn2FA(t, env, owner)
	secrets = append(secrets, secret)
	secrets = append(secrets, codes...)

	// Wrong uses, whose answers must not echo what was sent.
	var errorBodies []string
	token := mfaToken(t, env, owner.Email)
	errorBodies = append(errorBodies,
		string(secondStep(env, token, "recovery_code", codes[0]+"x").Body),
		string(env.Client(key).Get("/api/me").Body),
		string(env.Client(key+"x").Get("/api/v1/books").Body),
		string(owner.Post("/api/auth/2fa/disable", map[string]string{"password": "wrong", "recovery_code": codes[1]}).Body),
		string(owner.Post("/api/auth/2fa/enable", map[string]string{"code": secret}).Body),
	)
	secondStep(env, token, "recovery_code", codes[2]).Expect(http.StatusOK)
	owner.Delete("/api/teams/" + owner.TeamID + "/api-keys/" + owner.Get("/api/teams/"+owner.TeamID+"/api-keys").String("data.0.id")).Expect(http.StatusNoContent)

	var entries bytes.Buffer
	rows, err := env.App.Pool.Query(context.Background(), `SELECT a::text FROM audit_log a`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		entries.WriteString(s + "\n")
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if !strings.Contains(entries.String(), "webhook.updated") || !strings.Contains(entries.String(), "email_settings.updated") || !strings.Contains(entries.String(), "api_key.deleted") {
		t.Fatalf("the entries to search are missing:\n%s", entries.String())
	}
	places := map[string]string{"audit log": entries.String(), "logs": env.Logs(), "error messages": strings.Join(errorBodies, "\n")}
	for where, text := range places {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("the %s hold the secret %q", where, s)
			}
		}
	}
}
