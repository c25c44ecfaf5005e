package httpapi_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
)

// unsubEnv has one contact in two active campaigns and a sent email of
// the first, whose token the tests use.
type unsubEnv struct {
	*campEnv
	contact, first, second, token string
}

func newUnsubEnv(t *testing.T) *unsubEnv {
	t.Helper()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "S", "<p>x</p>")
	first := c.Key.NewCampaignIn("Weekly news", "active")
	second := c.Key.NewCampaignIn("Product tips", "active")
	c.Key.NewEmailStep(first, tpl, nil)
	c.Key.NewEmailStep(first, tpl, map[string]any{"schedule_type": "delay", "delay_days": 1})
	c.Key.NewEmailStep(second, tpl, map[string]any{"schedule_type": "delay", "delay_days": 5})
	contact := c.contact("Ann", "ann@example.com")
	c.Key.Enroll(first, contact)
	c.Key.Enroll(second, contact)
	c.Env.ProcessCampaign(first)
	return &unsubEnv{campEnv: c, contact: contact, first: first, second: second, token: tokenOf(t, c.Mail.Recipients()[0])}
}

// raw sends a request without following redirects.
func (u *unsubEnv) raw(method, path, contentType string, body []byte, headers ...string) (*http.Response, string) {
	u.t.Helper()
	req, err := http.NewRequest(method, u.Env.URL+path, bytes.NewReader(body))
	if err != nil {
		u.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func (u *unsubEnv) status(campaign string) string {
	u.t.Helper()
	var s string
	if err := u.Env.App.Pool.QueryRow(u.t.Context(), `SELECT status FROM campaign_participants WHERE campaign_id = $1 AND contact_id = $2`, campaign, u.contact).Scan(&s); err != nil {
		u.t.Fatal(err)
	}
	return s
}

func (u *unsubEnv) suppressed() bool {
	u.t.Helper()
	return u.Env.QueryInt(`SELECT count(*) FROM contacts WHERE id = $1 AND suppressed_at IS NOT NULL`, u.contact) == 1
}

func expectHTML(t *testing.T, res *http.Response, body string, status int, contains ...string) {
	t.Helper()
	if res.StatusCode != status || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("status %d (want %d), type %q: %s", res.StatusCode, status, res.Header.Get("Content-Type"), body)
	}
	if res.Header.Get("Cache-Control") != "no-store" || res.Header.Get("Referrer-Policy") != "no-referrer" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("page headers: %v", res.Header)
	}
	for _, want := range contains {
		if !strings.Contains(body, want) {
			t.Fatalf("page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "http://") && !strings.Contains(body, "http://www.w3.org") || strings.Contains(body, "<script") {
		t.Fatalf("the page loads outside assets or runs scripts:\n%s", body)
	}
}

func TestUnsubscribePage(t *testing.T) {
	t.Parallel()
	u := newUnsubEnv(t)
	res, body := u.raw(http.MethodGet, "/api/unsubscribe?token="+u.token, "", nil)
	expectHTML(t, res, body, http.StatusOK, "Weekly news", "Product tips", "a***@example.com", `lang="en"`, "viewport",
		`action="https://contacts.example.com/api/unsubscribe/confirm"`, `value="`+u.token+`"`, u.first, u.second)
	// Looking changes nothing: scanners prefetch links.
	for range 3 {
		u.raw(http.MethodGet, "/api/unsubscribe?token="+u.token, "", nil)
	}
	if u.status(u.first) != "active" || u.status(u.second) != "active" || u.suppressed() {
		t.Fatal("GET changed something")
	}
	for _, q := range []string{"?token=nope", "?token=", "", "?token=" + strings.Repeat("x", 500)} {
		res, body := u.raw(http.MethodGet, "/api/unsubscribe"+q, "", nil)
		expectHTML(t, res, body, http.StatusNotFound)
	}
	// Only campaigns the contact is still active in are listed.
	u.O.Delete("/api/campaigns/" + u.second + "/participants/" + u.O.Get("/api/campaigns/"+u.second+"/participants").String("data.0.id")).Expect(http.StatusOK)
	_, body = u.raw(http.MethodGet, "/api/unsubscribe?token="+u.token, "", nil)
	if strings.Contains(body, "Product tips") || !strings.Contains(body, "Weekly news") {
		t.Fatalf("listing after a removal:\n%s", body)
	}
}

func TestUnsubscribeCampaignForm(t *testing.T) {
	t.Parallel()
	u := newUnsubEnv(t)
	form := url.Values{"token": {u.token}, "scope": {"campaign"}, "campaign_id": {u.first}}.Encode()
	for range 2 { // idempotent
		res, body := u.raw(http.MethodPost, "/api/unsubscribe/confirm", "application/x-www-form-urlencoded", []byte(form))
		expectHTML(t, res, body, http.StatusOK, "Weekly news")
	}
	if u.status(u.first) != "removed" || u.status(u.second) != "active" || u.suppressed() {
		t.Fatalf("after scope=campaign: %s %s %v", u.status(u.first), u.status(u.second), u.suppressed())
	}
	if u.Env.QueryInt(`SELECT count(*) FROM interactions WHERE contact_id = $1 AND kind = 'campaign_unsubscribe'`, u.contact) != 1 {
		t.Fatal("one unsubscribe interaction, not one per repeat")
	}
	// The same token leaves another campaign of the book (scope defaults to
	// campaign); the removed participant receives nothing more.
	form = url.Values{"token": {u.token}, "campaign_id": {u.second}}.Encode()
	res, body := u.raw(http.MethodPost, "/api/unsubscribe/confirm", "application/x-www-form-urlencoded", []byte(form))
	expectHTML(t, res, body, http.StatusOK, "Product tips")
	if u.status(u.second) != "removed" {
		t.Fatal("second campaign")
	}
	u.Mail.Reset()
	u.Env.Clock.Advance(10 * day)
	u.Env.ProcessCampaign(u.first)
	u.Env.ProcessCampaign(u.second)
	if u.Mail.RecipientCount() != 0 {
		t.Fatal("an unsubscribed participant got email")
	}
}

func TestUnsubscribeOneClick(t *testing.T) {
	t.Parallel()
	u := newUnsubEnv(t)
	header := u.Mail.Recipients()[0].Headers["List-Unsubscribe"]
	target, err := url.Parse(strings.Trim(header, "<>"))
	if err != nil {
		t.Fatal(err)
	}
	// RFC 8058: a POST to exactly that URL with the one-click body.
	res, body := u.raw(http.MethodPost, target.RequestURI(), "application/x-www-form-urlencoded", []byte("List-Unsubscribe=One-Click"))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("one-click: %d %s", res.StatusCode, body)
	}
	if u.status(u.first) != "removed" || u.status(u.second) != "active" {
		t.Fatal("one-click must leave that campaign only")
	}
	// Multipart one-click works the same (idempotent).
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("List-Unsubscribe", "One-Click")
	_ = mw.Close()
	res, body = u.raw(http.MethodPost, target.RequestURI(), mw.FormDataContentType(), buf.Bytes())
	if res.StatusCode != http.StatusOK || res.Header.Get("Location") != "" {
		t.Fatalf("multipart one-click: %d %s", res.StatusCode, body)
	}
}

func TestUnsubscribeAll(t *testing.T) {
	t.Parallel()
	u := newUnsubEnv(t)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("token", u.token)
	_ = mw.WriteField("scope", "all")
	_ = mw.Close()
	res, body := u.raw(http.MethodPost, "/api/unsubscribe/confirm", mw.FormDataContentType(), buf.Bytes())
	expectHTML(t, res, body, http.StatusOK)
	if u.status(u.first) != "removed" || u.status(u.second) != "removed" || !u.suppressed() {
		t.Fatal("scope=all must remove every participation and suppress the contact")
	}
	if n := u.Env.QueryInt(`SELECT count(*) FROM suppressions WHERE book_id = $1 AND email = 'ann@example.com'
		AND reason = 'unsubscribe' AND source = 'unsubscribe_page' AND created_by IS NULL AND lifted_at IS NULL`, u.Book); n != 1 {
		t.Fatalf("scope=all must record the address as suppressed: %d records", n)
	}
	// JSON when asked; idempotent.
	r := u.Env.Anonymous().Post("/api/unsubscribe/confirm?token="+u.token+"&scope=all", nil, "Accept", "application/json").Expect(http.StatusOK)
	if r.String("data.scope") != "all" || r.String("data.message") == "" {
		t.Fatalf("json: %s", r.Body)
	}
	// Suppressed: skipped by later enrollments and never emailed again.
	third := u.Key.NewCampaignIn("Third", "active")
	if n := u.Key.Enroll(third, u.contact); n != 0 {
		t.Fatalf("a suppressed contact was enrolled: %d", n)
	}
	u.Mail.Reset()
	u.Env.Clock.Advance(10 * day)
	u.Env.ProcessCampaign(u.first)
	u.Env.ProcessCampaign(u.second)
	if u.Mail.RecipientCount() != 0 {
		t.Fatal("a suppressed contact got email")
	}
}

func TestUnsubscribeJSONAndErrors(t *testing.T) {
	t.Parallel()
	u := newUnsubEnv(t)
	anon := u.Env.Anonymous()
	jsonAccept := []string{"Accept", "application/json"}

	r := anon.Post("/api/unsubscribe/confirm", map[string]any{"token": u.token, "scope": "campaign", "campaign_id": u.first}).Expect(http.StatusOK)
	if r.String("data.scope") != "campaign" || !strings.Contains(r.String("data.message"), "Weekly news") {
		t.Fatalf("json body: %s", r.Body)
	}
	if u.status(u.first) != "removed" {
		t.Fatal("json confirm")
	}
	form := func(v url.Values) apptest.Raw {
		return apptest.Raw{ContentType: "application/x-www-form-urlencoded", Body: []byte(v.Encode())}
	}
	anon.Post("/api/unsubscribe/confirm", form(url.Values{"token": {"unknown"}, "scope": {"all"}}), jsonAccept...).ExpectError(http.StatusNotFound, "NOT_FOUND")
	anon.Post("/api/unsubscribe/confirm", form(url.Values{"token": {u.token}, "scope": {"campaign"}}), jsonAccept...).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	anon.Post("/api/unsubscribe/confirm", form(url.Values{"token": {u.token}}), jsonAccept...).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	anon.Post("/api/unsubscribe/confirm", form(url.Values{"token": {u.token}, "scope": {"everything"}}), jsonAccept...).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	anon.Post("/api/unsubscribe/confirm", form(url.Values{"token": {u.token}, "campaign_id": {"x"}}), jsonAccept...).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	anon.Post("/api/unsubscribe/confirm", form(url.Values{"scope": {"all"}}), jsonAccept...).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	// A browser gets pages, not error documents.
	res, body := u.raw(http.MethodPost, "/api/unsubscribe/confirm", "application/x-www-form-urlencoded",
		[]byte(url.Values{"token": {"unknown"}, "scope": {"all"}}.Encode()), "Accept", "text/html,application/xhtml+xml")
	expectHTML(t, res, body, http.StatusNotFound)
	// A campaign the contact is not in (or that is gone) is already left.
	u.Key.Delete("/api/v1/campaigns/" + u.second).Expect(http.StatusOK)
	anon.Post("/api/unsubscribe/confirm", form(url.Values{"token": {u.token}, "campaign_id": {u.second}}), jsonAccept...).Expect(http.StatusOK)
	if u.suppressed() {
		t.Fatal("scope=campaign must not suppress")
	}
	// Deleting the campaign of the email retires its links.
	u.Key.Delete("/api/v1/campaigns/" + u.first).Expect(http.StatusOK)
	anon.Post("/api/unsubscribe/confirm", form(url.Values{"token": {u.token}, "scope": {"all"}}), jsonAccept...).ExpectError(http.StatusNotFound, "NOT_FOUND")
	anon.Get("/api/unsubscribe/confirm").Expect(http.StatusMethodNotAllowed)
}
