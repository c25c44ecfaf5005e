package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
)

func TestSettingsGetPut(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "trial")
	member := c.Env.Join(c.Owner, "member", "member").InBook(c.Book)
	viewer := c.Env.Join(c.Owner, "viewer", "viewer").InBook(c.Book)

	// Never configured: only the book id.
	g := c.O.Get("/api/campaign-settings").Expect(http.StatusOK)
	if m, ok := g.Value("data").(map[string]any); !ok || len(m) != 1 || m["book_id"] != c.Book {
		t.Fatalf("unconfigured: %s", g.Body)
	}
	full := map[string]any{
		"sender_name": "Acme News", "sender_email": "news@acme.example", "reply_to_email": "help@acme.example",
		"company_name": "Acme Inc.", "address_line1": "1 Main St", "address_line2": "Suite 2", "city": "Springfield",
		"state": "IL", "postal_code": "62701", "country": "USA", "mailer_api_key": "SG.secret-key-ABCD",
	}
	p := c.O.Put("/api/campaign-settings", full).Expect(http.StatusOK)
	for k, v := range full {
		want := v
		if k == "mailer_api_key" {
			want = "****ABCD"
		}
		if p.Value("data."+k) != want {
			t.Errorf("%s = %v, want %v", k, p.Value("data."+k), want)
		}
	}
	if p.String("data.id") == "" || p.String("data.book_id") != c.Book || p.String("data.created_at") == "" || p.String("data.updated_at") == "" {
		t.Fatalf("put: %s", p.Body)
	}
	if g := member.Get("/api/campaign-settings").Expect(http.StatusOK); g.String("data.mailer_api_key") != "****ABCD" || g.String("data.city") != "Springfield" {
		t.Fatalf("get: %s", g.Body)
	}
	// Encrypted at rest: the stored bytes are not the key.
	var sealed []byte
	if err := c.Env.App.Pool.QueryRow(context.Background(), `SELECT mailer_api_key_enc FROM email_settings WHERE book_id = $1`, c.Book).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if len(sealed) < 12+16+len("SG.secret-key-ABCD") || bytes.Contains(sealed, []byte("SG.secret")) || bytes.Contains(sealed, []byte("ABCD")) {
		t.Fatalf("stored key is not encrypted: %q", sealed)
	}
	if strings.Contains(c.Env.Logs(), "SG.secret-key") {
		t.Fatal("the key reached the log")
	}

	// The masked value (or no key at all) keeps the stored key; PUT
	// replaces the other fields.
	c.O.Put("/api/campaign-settings", map[string]any{"sender_email": "news@acme.example", "mailer_api_key": "****ABCD"}).Expect(http.StatusOK)
	p = c.O.Put("/api/campaign-settings", map[string]any{"sender_email": "news@acme.example", "company_name": "Acme"}).Expect(http.StatusOK)
	if p.String("data.mailer_api_key") != "****ABCD" || p.String("data.city") != "" || p.String("data.company_name") != "Acme" {
		t.Fatalf("masked kept: %s", p.Body)
	}
	// The kept key is the real one: the provider receives it.
	c.Mail.RequireAPIKey("SG.secret-key-ABCD")
	tpl := c.Key.NewTemplateWith("T", "S", "<p>x</p>")
	c.O.Post("/api/campaign-templates/"+tpl+"/send-test", map[string]any{"email": c.Owner.Email}).Expect(http.StatusOK)
	if c.Mail.Requests()[0].APIKey != "SG.secret-key-ABCD" {
		t.Fatal("stored key changed")
	}
	p = c.O.Put("/api/campaign-settings", map[string]any{"sender_email": "news@acme.example", "mailer_api_key": "SG.new-key-WXYZ"}).Expect(http.StatusOK)
	if p.String("data.mailer_api_key") != "****WXYZ" {
		t.Fatalf("new key: %s", p.Body)
	}
	if p := c.O.Put("/api/campaign-settings", map[string]any{"mailer_api_key": "abc"}).Expect(http.StatusOK); p.String("data.mailer_api_key") != "****" {
		t.Fatalf("short keys show no characters: %s", p.Body)
	}
	if p := c.O.Put("/api/campaign-settings", map[string]any{"mailer_api_key": ""}).Expect(http.StatusOK); p.String("data.mailer_api_key") != "" {
		t.Fatalf("empty removes the key: %s", p.Body)
	}
	if c.Env.QueryInt(`SELECT count(*) FROM email_settings WHERE book_id = $1 AND mailer_api_key_enc IS NULL`, c.Book) != 1 {
		t.Fatal("key not removed")
	}
	if c.Env.QueryInt(`SELECT count(*) FROM email_settings`) != 1 {
		t.Fatal("upsert made a second row")
	}

	// Limits and addresses.
	for name, body := range map[string]map[string]any{
		"sender_name 201":   {"sender_name": strings.Repeat("n", 201)},
		"sender_email 255":  {"sender_email": strings.Repeat("a", 243) + "@example.com"},
		"sender_email bad":  {"sender_email": "news at acme"},
		"reply_to bad":      {"reply_to_email": "nope"},
		"company 201":       {"company_name": strings.Repeat("c", 201)},
		"address_line1 201": {"address_line1": strings.Repeat("a", 201)},
		"address_line2 201": {"address_line2": strings.Repeat("a", 201)},
		"city 101":          {"city": strings.Repeat("c", 101)},
		"state 101":         {"state": strings.Repeat("s", 101)},
		"postal_code 21":    {"postal_code": strings.Repeat("1", 21)},
		"country 101":       {"country": strings.Repeat("c", 101)},
		"key 1001":          {"mailer_api_key": strings.Repeat("k", 1001)},
		"not a string":      {"city": 5},
	} {
		t.Run(name, func(t *testing.T) {
			c.O.Put("/api/campaign-settings", body).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		})
	}
	c.O.Put("/api/campaign-settings", map[string]any{"sender_name": strings.Repeat("n", 200), "postal_code": strings.Repeat("1", 20)}).Expect(http.StatusOK)

	// Roles: members read, only owners write; viewers neither.
	member.Put("/api/campaign-settings", full).ExpectError(http.StatusForbidden, "FORBIDDEN")
	admin := c.Env.Join(c.Owner, "admin", "admin").InBook(c.Book)
	admin.Put("/api/campaign-settings", full).ExpectError(http.StatusForbidden, "FORBIDDEN")
	viewer.Get("/api/campaign-settings").ExpectError(http.StatusForbidden, "FORBIDDEN")
	c.Owner.Get("/api/campaign-settings").ExpectError(http.StatusBadRequest, "MISSING_BOOK")
	// Settings are per book.
	other := c.Owner.CreateBook("Other")
	if g := c.Owner.InBook(other).Get("/api/campaign-settings").Expect(http.StatusOK); g.Has("data.sender_email") {
		t.Fatalf("other book: %s", g.Body)
	}
}

func TestTemplateSendTest(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "trial") // test sends work on a trial
	tpl := c.Key.NewTemplateWith("Welcome", "Hello {{first_name}}", `<p>Hi {{first_name | default: "there"}}, plan {{custom.plan}}, link {{custom.site}}.</p>`)
	path := "/api/campaign-templates/" + tpl + "/send-test"

	c.O.Post(path, map[string]any{"email": c.Owner.Email}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.O.ConfigureEmail()
	plan := c.Owner.Post("/api/books/"+c.Book+"/fields", map[string]any{"key": "plan", "name": "Plan", "type": "text"}).Expect(http.StatusCreated).String("data.id")
	c.Owner.Post("/api/books/"+c.Book+"/fields", map[string]any{"key": "site", "name": "Site", "type": "url"}).Expect(http.StatusCreated)

	// An empty book: merge fields empty, fallbacks and placeholders shown.
	c.O.Post(path, map[string]any{"email": c.Owner.Email}).Expect(http.StatusOK)
	r := c.Mail.Recipients()[0]
	if r.Email != c.Owner.Email || r.Subject != "[TEST] Hello " || !strings.Contains(r.HTML(), "Hi there, plan https://example.com/placeholder/custom.plan") {
		t.Fatalf("empty book: %q %q\n%s", r.Email, r.Subject, r.HTML())
	}
	c.Mail.Reset()

	ann := c.contact("Ann", "ann@example.com")
	c.Env.Clock.Advance(time.Minute)
	c.contact("Bob", "bob@example.com")
	c.Key.Post("/api/v1/contacts/bulk-update-field", map[string]any{"contact_ids": []string{ann}, "field_definition_id": plan, "value": "Gold"}).Expect(http.StatusOK)

	m := c.O.Post(path, map[string]any{"email": " " + c.Owner.Email + " "}).Expect(http.StatusOK)
	if m.String("data.message") == "" {
		t.Fatalf("answer: %s", m.Body)
	}
	reqs := c.Mail.Requests()
	if len(reqs) != 1 || len(reqs[0].Personalizations) != 1 || reqs[0].APIKey != apptest.MailerKey || reqs[0].From.Email != "news@acme.example" {
		t.Fatalf("requests: %+v", reqs)
	}
	r = c.Mail.Recipients()[0]
	html := r.HTML()
	// The first (oldest) contact fills the fields; custom fields without
	// data show the placeholder URL; the footer is there.
	if r.Subject != "[TEST] Hello Ann" || !strings.Contains(html, "Hi Ann, plan Gold, link https://example.com/placeholder/custom.site.") ||
		!strings.Contains(html, "Acme Inc.") || !strings.Contains(html, "Springfield") {
		t.Fatalf("test email: %q\n%s", r.Subject, html)
	}
	if c.Env.QueryInt(`SELECT count(*) FROM interactions`) != 0 || c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions`) != 0 {
		t.Fatal("a test email is not a campaign email")
	}

	c.O.Post(path, map[string]any{"email": "not-an-address"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.O.Post(path, map[string]any{}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.O.Post("/api/campaign-templates/6f1c1d7e-0000-4000-8000-000000000000/send-test", map[string]any{"email": c.Owner.Email}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	c.Owner.Post(path, map[string]any{"email": c.Owner.Email}).ExpectError(http.StatusBadRequest, "MISSING_BOOK")
	viewer := c.Env.Join(c.Owner, "viewer", "viewer").InBook(c.Book)
	viewer.Post(path, map[string]any{"email": c.Owner.Email}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	c.Key.Post("/api/v1/campaign-templates/"+tpl+"/send-test", map[string]any{"email": c.Owner.Email}).Expect(http.StatusNotFound)

	// The provider's refusal is shown; an outage is a 503.
	c.Mail.FailNext(http.StatusUnauthorized, `{"errors":[{"message":"The provided authorization grant is invalid, expired, or revoked"}]}`, 1)
	e := c.O.Post(path, map[string]any{"email": c.Owner.Email}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if !strings.Contains(e.String("error.message"), "authorization grant is invalid") {
		t.Fatalf("provider message: %s", e.Body)
	}
	c.Mail.FailNext(http.StatusBadGateway, "bad gateway", 1)
	c.O.Post(path, map[string]any{"email": c.Owner.Email}).ExpectError(http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
}

// The preview renders an unsaved template for a chosen contact (or the
// oldest) as sending would, footer included; merge-fields lists what a
// template can use, the book's custom fields included.
func TestTemplatePreviewAndMergeFields(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "trial")
	c.Owner.Post("/api/books/"+c.Book+"/fields", map[string]any{"key": "plan", "name": "Plan", "type": "text"}).Expect(http.StatusCreated)
	body := map[string]any{"subject": "Hello {{first_name | default: \"there\"}}", "body_html": "<p>Hi {{full_name}} of {{book_name}}, plan {{custom.plan | default: \"none\"}}</p>"}

	// An empty book, no settings: fallbacks, no contact.
	p := c.O.Post("/api/campaign-templates/preview", body).Expect(http.StatusOK)
	if p.String("data.subject") != "Hello there" || !strings.Contains(p.String("data.html"), "plan none") || p.Value("data.contact_id") != nil {
		t.Fatalf("empty book: %s", p.Body)
	}
	c.O.ConfigureEmail()
	ann := c.contact("Ann", "ann@example.com")
	c.Env.Clock.Advance(time.Minute)
	bob := c.contact("Bob", "bob@example.com")
	p = c.O.Post("/api/campaign-templates/preview", body).Expect(http.StatusOK)
	if p.String("data.subject") != "Hello Ann" || p.String("data.contact_id") != ann {
		t.Fatalf("the oldest contact: %s", p.Body)
	}
	body["contact_id"] = bob
	viewer := c.Env.Join(c.Owner, "viewer", "viewer").InBook(c.Book)
	p = viewer.Post("/api/campaign-templates/preview", body).Expect(http.StatusOK)
	html := p.String("data.html")
	if p.String("data.subject") != "Hello Bob" || !strings.Contains(html, "Hi Bob Tester of Customers") || !strings.Contains(html, "Acme Inc.") || !strings.Contains(html, "/unsubscribe") {
		t.Fatalf("chosen contact, footer: %s", p.Body)
	}
	body["contact_id"] = "6f1c1d7e-0000-4000-8000-000000000000"
	c.O.Post("/api/campaign-templates/preview", body).ExpectError(http.StatusNotFound, "NOT_FOUND")
	body["contact_id"] = "nope"
	c.O.Post("/api/campaign-templates/preview", body).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Env.Signup("stranger").InBook(c.Book).Post("/api/campaign-templates/preview", body).ExpectError(http.StatusForbidden, "FORBIDDEN")

	f := viewer.Get("/api/campaign-templates/merge-fields").Expect(http.StatusOK)
	var fields []struct{ Key, Name string }
	f.Decode("data", &fields)
	keys := make([]string, len(fields))
	for i, x := range fields {
		keys[i] = x.Key
	}
	if got := strings.Join(keys, ","); got != "first_name,last_name,full_name,company,job_title,email,phone,website,birthday,book_name,unsubscribe_url,custom.plan" || fields[11].Name != "Plan" {
		t.Fatalf("merge fields: %s", got)
	}
}
