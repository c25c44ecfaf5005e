package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
)

// hostileEnv is a team with one of every resource, so that hostile
// requests reach every endpoint past its authorization.
type hostileEnv struct {
	*campEnv
	label, field, contact, tpl, campaign, step, webhook, keyID, member string
}

func newHostileEnv(t *testing.T) *hostileEnv {
	t.Helper()
	c := newCampEnv(t, "active")
	h := &hostileEnv{campEnv: c}
	h.label = c.owner.Post("/api/books/"+c.book+"/labels", map[string]any{"name": "VIP"}).Expect(http.StatusCreated).String("data.id")
	h.field = c.owner.Post("/api/books/"+c.book+"/fields", map[string]any{"key": "plan", "name": "Plan", "type": "text"}).
		Expect(http.StatusCreated).String("data.id")
	h.contact = c.contact("Ann", "ann@example.com")
	h.tpl = c.template("T", "S", "<p>x</p>")
	h.campaign = c.campaign("C", "draft")
	h.step = c.emailStep(h.campaign, h.tpl, nil)
	h.webhook = c.owner.Post(webhooksPath(c.owner.TeamID), map[string]any{"url": "https://hooks.example.com/h", "events": []string{"contact.created"}}).
		Expect(http.StatusCreated).String("data.webhook.id")
	h.keyID = c.owner.Get("/api/teams/" + c.owner.TeamID + "/api-keys").Expect(http.StatusOK).String("data.0.id")
	h.member = c.env.Join(c.owner, "bob", "member").ID
	return h
}

// textCase sends a JSON body to one endpoint; field is the JSON path the
// answer must name.
type textCase struct {
	method, path string
	client       *apptest.Client
	body         map[string]any
	field        string
}

func (h *hostileEnv) textCases(s string) []textCase {
	team := "/api/teams/" + h.owner.TeamID
	book := "/api/books/" + h.book
	anon := h.env.Anonymous()
	o, ob, key := h.owner.Client, h.ob, h.key
	return []textCase{
		{"POST", "/api/auth/signup", anon, map[string]any{"email": "x" + s + "@example.com", "password": "long enough", "name": "N", "team_name": "T"}, "email"},
		{"POST", "/api/auth/signup", anon, map[string]any{"email": "n@example.com", "password": "long enough", "name": "N" + s, "team_name": "T"}, "name"},
		{"POST", "/api/auth/signup", anon, map[string]any{"email": "n@example.com", "password": "long enough" + s, "name": "N", "team_name": "T"}, "password"},
		{"POST", "/api/auth/signup", anon, map[string]any{"email": "n@example.com", "password": "long enough", "name": "N", "team_name": "T" + s}, "team_name"},
		{"POST", "/api/auth/login", anon, map[string]any{"email": "ann" + s + "@example.com", "password": "long enough"}, "email"},
		{"POST", "/api/auth/login", anon, map[string]any{"email": "ann@example.com", "password": "long" + s}, "password"},
		{"PATCH", team, o, map[string]any{"name": "Team" + s}, "name"},
		{"POST", team + "/members", o, map[string]any{"email": "m" + s + "@example.com", "role": "member"}, "email"},
		{"PATCH", team + "/members/" + h.member, o, map[string]any{"role": "admin" + s}, "role"},
		{"POST", team + "/api-keys", o, map[string]any{"name": "key" + s}, "name"},
		{"POST", team + "/webhooks", o, map[string]any{"url": "https://h.example.com/" + s, "events": []string{"contact.created"}}, "url"},
		{"PATCH", team + "/webhooks/" + h.webhook, o, map[string]any{"events": []string{"contact.created", "x" + s}}, "events[1]"},
		{"POST", "/api/books", o, map[string]any{"team_id": h.owner.TeamID, "name": "Book" + s}, "name"},
		{"PATCH", book, o, map[string]any{"icon": "i" + s}, "icon"},
		{"POST", book + "/labels", o, map[string]any{"name": "L" + s}, "name"},
		{"PATCH", book + "/labels/" + h.label, o, map[string]any{"color": "#000000" + s}, "color"},
		{"POST", book + "/fields", o, map[string]any{"key": "k", "name": "F" + s, "type": "text"}, "name"},
		{"POST", "/api/v1/contacts", key, map[string]any{"first_name": "A" + s}, "first_name"},
		{"POST", "/api/v1/contacts", key, map[string]any{"first_name": "A", "emails": []any{
			map[string]any{"address": "a@example.com"}, map[string]any{"address": "b" + s + "@example.com"}}}, "emails[1].address"},
		{"POST", "/api/v1/contacts", key, map[string]any{"first_name": "A", "addresses": []any{map[string]any{"street": "1 Main" + s}}}, "addresses[0].street"},
		{"POST", "/api/v1/contacts", key, map[string]any{"first_name": "A", "custom_fields": map[string]any{"plan": "gold" + s}}, "custom_fields.plan"},
		{"PATCH", "/api/v1/contacts/" + h.contact, key, map[string]any{"notes": "n" + s}, "notes"},
		{"PATCH", "/api/v1/contacts/" + h.contact, key, map[string]any{"dates": []any{map[string]any{"label": "x" + s, "value": "2020-01-01"}}}, "dates[0].label"},
		{"POST", "/api/v1/contacts/bulk-update-field", key, map[string]any{"contact_ids": []string{h.contact}, "field_definition_id": h.field, "value": "v" + s}, "value"},
		{"POST", "/api/v1/contacts/bulk-delete", key, map[string]any{"contact_ids": []string{h.contact + s}}, "contact_ids[0]"},
		{"POST", "/api/v1/campaign-templates", key, map[string]any{"name": "T" + s, "subject": "S", "body_html": "<p>x</p>"}, "name"},
		{"POST", "/api/v1/campaign-templates", key, map[string]any{"name": "T", "subject": "S" + s, "body_html": "<p>x</p>"}, "subject"},
		{"PATCH", "/api/v1/campaign-templates/" + h.tpl, key, map[string]any{"body_html": "<p>x" + s + "</p>"}, "body_html"},
		{"POST", "/api/campaign-templates/" + h.tpl + "/send-test", ob, map[string]any{"email": "me" + s + "@example.com"}, "email"},
		{"POST", "/api/v1/campaigns", key, map[string]any{"name": "C" + s}, "name"},
		{"PATCH", "/api/v1/campaigns/" + h.campaign, key, map[string]any{"description": "D" + s}, "description"},
		{"POST", "/api/v1/campaigns/" + h.campaign + "/steps", key, map[string]any{"step_type": "email", "name": "S" + s, "schedule_type": "immediate"}, "name"},
		{"PATCH", "/api/campaigns/" + h.campaign + "/steps/" + h.step, ob, map[string]any{"sender_name": "News" + s}, "sender_name"},
		{"PUT", "/api/campaign-settings", ob, map[string]any{"sender_name": "Acme" + s}, "sender_name"},
		{"PUT", "/api/campaign-settings", ob, map[string]any{"city": "Springfield" + s}, "city"},
		{"POST", "/api/payments/create-campaign-checkout", o, map[string]any{"team_id": h.owner.TeamID, "plan": "monthly" + s}, "plan"},
		{"POST", "/api/unsubscribe/confirm", anon, map[string]any{"token": "t" + s, "scope": "all"}, "token"},
	}
}

// TestTextRefusesNUL sends NUL in text fields of every kind of endpoint:
// each answers 400 INVALID_INPUT naming the field, and nothing reaches
// the database (no error is logged).
func TestTextRefusesNUL(t *testing.T) {
	t.Parallel()
	h := newHostileEnv(t)
	for _, tc := range h.textCases("\x00") {
		r := tc.client.Do(tc.method, tc.path, tc.body).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		msg := r.String("error.message")
		if !strings.Contains(msg, "`"+tc.field+"`") || !strings.Contains(msg, "NUL") {
			t.Errorf("%s %s: message %q does not name `%s` and NUL", tc.method, tc.path, msg, tc.field)
		}
	}
	// A NUL in a field name is named by its object.
	h.key.Post("/api/v1/contacts", apptest.Raw{ContentType: "application/json", Body: []byte(`{"first_name":"A","emails":[{"addr\u0000ess":"a@example.com"}]}`)}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if strings.Contains(h.env.Log.String(), "level=ERROR") {
		t.Errorf("errors logged:\n%s", h.env.Log.String())
	}
}

// TestTextRefusesInvalidUTF8 sends invalid UTF-8 in bodies, query
// parameters, form fields and headers.
func TestTextRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	h := newHostileEnv(t)
	for _, tc := range h.textCases("\xff") {
		// json.Marshal would replace the byte; send it raw.
		body := []byte(strings.ReplaceAll(mustJSON(t, tc.body), `\ufffd`, "\xff"))
		r := tc.client.Do(tc.method, tc.path, apptest.Raw{ContentType: "application/json", Body: body}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		if msg := r.String("error.message"); !strings.Contains(msg, "`"+tc.field+"`") || !strings.Contains(msg, "UTF-8") {
			t.Errorf("%s %s: message %q does not name `%s` and UTF-8", tc.method, tc.path, msg, tc.field)
		}
	}
	for _, q := range []struct {
		client     *apptest.Client
		path, name string
	}{
		{h.key, "/api/v1/contacts?q=%FF", "q"},
		{h.key, "/api/v1/contacts?q=a%00b", "q"},
		{h.key, "/api/v1/contacts?sort=%C3", "sort"},
		{h.ob, "/api/contacts/check-email?email=a%00@example.com", "email"},
		{h.ob, "/api/campaign-step-contacts/" + h.campaign + "/" + h.step + "?result=%00", "result"},
		{h.key, "/api/v1/books?team_id=%FE", "team_id"},
	} {
		r := q.client.Get(q.path).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		if msg := r.String("error.message"); !strings.Contains(msg, "query parameter "+q.name) {
			t.Errorf("%s: message %q does not name %s", q.path, msg, q.name)
		}
	}
	h.env.Anonymous().Get("/api/unsubscribe?token=%FF").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	r := h.key.Get("/api/v1/contacts", "X-Book-ID", h.book+"\xe9").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if msg := r.String("error.message"); !strings.Contains(msg, "header X-Book-Id") {
		t.Errorf("header: message %q does not name X-Book-Id", msg)
	}
	r = h.key.Get("/api/v1/contacts", "X-Anything", "caf\xe9").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if msg := r.String("error.message"); !strings.Contains(msg, "header X-Anything") {
		t.Errorf("header: message %q does not name X-Anything", msg)
	}
	// Form bodies: the unsubscribe confirmation.
	r = h.env.Anonymous().Post("/api/unsubscribe/confirm", apptest.Raw{ContentType: "application/x-www-form-urlencoded", Body: []byte("token=%00&scope=all")},
		"Accept", "application/json").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if msg := r.String("error.message"); !strings.Contains(msg, "form field token") {
		t.Errorf("form: message %q does not name token", msg)
	}
	// Invalid UTF-8 outside any string is a body error.
	h.key.Post("/api/v1/contacts", apptest.Raw{ContentType: "application/json", Body: []byte("{\"first_name\":\"A\"}\xff")}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if strings.Contains(h.env.Log.String(), "level=ERROR") {
		t.Errorf("errors logged:\n%s", h.env.Log.String())
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
