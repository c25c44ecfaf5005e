package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

// formEnv is a campaign environment with email settings and helpers for
// sign-up forms.
type formEnv struct {
	*unsubEnv
}

func newFormEnv(t *testing.T) *formEnv {
	t.Helper()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	return &formEnv{unsubEnv: &unsubEnv{campEnv: c}}
}

// form creates a form through the public API and returns its id.
func (f *formEnv) form(body map[string]any) string {
	f.t.Helper()
	return f.Key.Post("/api/v1/forms", body).Expect(http.StatusCreated).String("data.id")
}

// submitJSON posts a submission as JSON (from the loopback address: the
// limit of 10 posts per IP and form applies to each test's forms).
func (f *formEnv) submitJSON(formID string, body map[string]any) (*http.Response, string) {
	f.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.raw(http.MethodPost, "/api/forms/"+formID+"/submissions", "application/json", b)
}

// submitForm posts a submission as a browser does.
func (f *formEnv) submitForm(formID string, vals url.Values) (*http.Response, string) {
	f.t.Helper()
	return f.raw(http.MethodPost, "/api/forms/"+formID+"/submissions", "application/x-www-form-urlencoded", []byte(vals.Encode()))
}

var confirmLink = regexp.MustCompile(`https://contacts\.example\.com/api/forms/confirm\?token=([A-Za-z0-9_%-]+)`)

// confirmToken is the token of the one confirmation email sent to addr.
func (f *formEnv) confirmToken(addr string) string {
	f.t.Helper()
	f.Env.WaitJobs()
	var found []mailertest.Recipient
	for _, r := range f.Mail.Recipients() {
		if r.Email == addr {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		f.t.Fatalf("%d confirmation emails to %s, want 1", len(found), addr)
	}
	m := confirmLink.FindStringSubmatch(found[0].HTML())
	if m == nil || !strings.Contains(found[0].Text(), m[0]) {
		f.t.Fatalf("the email's HTML and text parts do not both carry the link:\n%s\n%s", found[0].HTML(), found[0].Text())
	}
	tok, _ := url.QueryUnescape(m[1])
	return tok
}

func (f *formEnv) mailsTo(addr string) int {
	f.t.Helper()
	f.Env.WaitJobs()
	n := 0
	for _, r := range f.Mail.Recipients() {
		if r.Email == addr {
			n++
		}
	}
	return n
}

func TestFormsCRUD(t *testing.T) {
	t.Parallel()
	f := newFormEnv(t)
	label := f.O.Post("/api/books/"+f.Book+"/labels", map[string]any{"name": "News"}).Expect(http.StatusCreated).String("data.id")
	id := f.form(map[string]any{"name": "Newsletter", "fields": []map[string]any{{"key": "first_name", "required": true}}, "label_ids": []string{label}})
	got := f.Key.Get("/api/v1/forms/" + id).Expect(http.StatusOK)
	if !got.Bool("data.double_opt_in") || !got.Bool("data.enabled") || got.Int("data.submissions_count") != 0 {
		t.Fatalf("defaults: %s", got.Body)
	}
	f.O.Post("/api/forms", map[string]any{"name": "Alpha"}).Expect(http.StatusCreated)
	list := f.O.Get("/api/forms").Expect(http.StatusOK)
	if list.Len("data") != 2 || list.String("data.0.name") != "Alpha" {
		t.Fatalf("list by name: %s", list.Body)
	}
	f.Key.Patch("/api/v1/forms/"+id, map[string]any{"enabled": false, "redirect_url": "https://example.com/thanks"}).Expect(http.StatusOK)
	if res, _ := f.raw(http.MethodGet, "/f/"+id, "", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("disabled form page: %d", res.StatusCode)
	}

	for name, body := range map[string]map[string]any{
		"fields[0].key": {"name": "x", "fields": []map[string]any{{"key": "favourite_colour"}}},
		"redirect_url":  {"name": "x", "redirect_url": "http://example.com"},
		"label_ids[0]":  {"name": "x", "label_ids": []string{"5b1d7e3a-8c2f-4a6e-9d0b-1f3e5a7c9b2d"}},
		"name":          {"name": ""},
	} {
		r := f.Key.Post("/api/v1/forms", body).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		if !strings.Contains(r.String("error.message"), "`"+name+"`") {
			t.Errorf("%s: %s", name, r.Body)
		}
	}
	// A book without email settings cannot hold double opt-ins.
	other := f.Owner.CreateBook("Other")
	r := f.Owner.InBook(other).Post("/api/forms", map[string]any{"name": "x"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if !strings.Contains(r.String("error.message"), "`double_opt_in`") {
		t.Fatalf("double opt-in without settings: %s", r.Body)
	}
	f.Owner.InBook(other).Post("/api/forms", map[string]any{"name": "x", "double_opt_in": false}).Expect(http.StatusCreated)

	viewer := f.Env.Join(f.Owner, "viewer", "viewer").InBook(f.Book)
	viewer.Get("/api/forms/" + id).Expect(http.StatusOK)
	viewer.Post("/api/forms", map[string]any{"name": "x"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	stranger := f.Env.Signup("stranger")
	stranger.Get("/api/forms/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")

	f.Key.Delete("/api/v1/forms/" + id).Expect(http.StatusNoContent)
	f.Key.Get("/api/v1/forms/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
}

func TestDoubleOptInConfirmsOnce(t *testing.T) {
	t.Parallel()
	f := newFormEnv(t)
	label := f.O.Post("/api/books/"+f.Book+"/labels", map[string]any{"name": "Subscribers"}).Expect(http.StatusCreated).String("data.id")
	topic := f.O.Post("/api/books/"+f.Book+"/labels", map[string]any{"name": "Events", "public": true, "description": "Meetups"}).Expect(http.StatusCreated).String("data.id")
	private := f.O.Post("/api/books/"+f.Book+"/labels", map[string]any{"name": "Internal"}).Expect(http.StatusCreated).String("data.id")
	id := f.form(map[string]any{
		"name": "Newsletter", "consent_text": "I agree to the newsletter.", "label_ids": []string{label},
		"fields": []map[string]any{{"key": "first_name", "required": true}, {"key": "topics"}},
	})

	// A public label of another book is no topic of this one.
	otherBook := f.Owner.CreateBook("Other")
	foreign := f.O.Post("/api/books/"+otherBook+"/labels", map[string]any{"name": "Foreign", "public": true}).Expect(http.StatusCreated).String("data.id")
	res, body := f.submitJSON(id, map[string]any{"email": "Ada@Example.com", "first_name": "Ada", "consent": true, "topics": []string{topic, private, foreign}})
	if res.StatusCode != http.StatusAccepted || res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("submit: %d %v %s", res.StatusCode, res.Header, body)
	}
	if n := f.Env.QueryInt(`SELECT count(*) FROM contacts WHERE book_id = $1`, f.Book); n != 0 {
		t.Fatalf("a contact exists before confirmation: %d", n)
	}
	tok := f.confirmToken("ada@example.com")
	email := f.Mail.Recipients()[0]
	if !strings.Contains(email.HTML(), "Acme Inc.") || !strings.Contains(email.Text(), "1 Main St") {
		t.Fatalf("the email lacks the company's name and address:\n%s", email.Text())
	}

	// The GET changes nothing.
	res, body = f.raw(http.MethodGet, "/api/forms/confirm?token="+url.QueryEscape(tok), "", nil)
	expectHTML(t, res, body, http.StatusOK, "Confirm subscription", "Nothing has changed yet")
	if n := f.Env.QueryInt(`SELECT count(*) FROM contacts WHERE book_id = $1`, f.Book); n != 0 {
		t.Fatal("the GET created a contact")
	}

	// Two confirmations at once: one contact.
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Go(func() {
			r, _ := f.raw(http.MethodPost, "/api/forms/confirm", "application/json", []byte(`{"token":"`+tok+`"}`))
			codes[i] = r.StatusCode
		})
	}
	wg.Wait()
	if codes[0]+codes[1] != http.StatusOK+http.StatusNotFound {
		t.Fatalf("two confirmations answered %v", codes)
	}
	list := f.Key.Get("/api/v1/contacts").Expect(http.StatusOK)
	if list.Len("data") != 1 || list.String("data.0.first_name") != "Ada" || list.String("data.0.emails.0.address") != "ada@example.com" {
		t.Fatalf("contact: %s", list.Body)
	}
	if list.Len("data.0.labels") != 2 {
		t.Fatalf("the form's label and the public topic only: %s", list.Body)
	}
	if n := f.Env.QueryInt(`SELECT count(*) FROM contacts WHERE book_id = $1`, otherBook); n != 0 {
		t.Fatalf("the other book got %d contacts", n)
	}
	contact := list.String("data.0.id")
	consents := f.Key.Get("/api/v1/contacts/" + contact + "/consents").Expect(http.StatusOK)
	if consents.Len("data") != 1 || consents.String("data.0.method") != "double" || consents.String("data.0.text") != "I agree to the newsletter." ||
		consents.String("data.0.form_id") != id || consents.String("data.0.ip") == "" {
		t.Fatalf("consent: %s", consents.Body)
	}

	// Used: both answers are 404 pages.
	res, body = f.raw(http.MethodGet, "/api/forms/confirm?token="+url.QueryEscape(tok), "", nil)
	expectHTML(t, res, body, http.StatusNotFound, "not valid")
	res, body = f.raw(http.MethodPost, "/api/forms/confirm", "application/x-www-form-urlencoded", []byte("token="+url.QueryEscape(tok)))
	expectHTML(t, res, body, http.StatusNotFound, "not valid")
	form := f.Key.Get("/api/v1/forms/" + id).Expect(http.StatusOK)
	if form.Int("data.submissions_count") != 1 || form.Int("data.confirmed_count") != 1 {
		t.Fatalf("counts: %s", form.Body)
	}
}

func TestSubmissionRevealsNothing(t *testing.T) {
	t.Parallel()
	f := newFormEnv(t)
	id := f.form(map[string]any{"name": "N"})
	f.campEnv.contact("Known", "known@example.com")
	f.O.Post("/api/suppressions", map[string]any{"email": "bounced@example.com", "reason": "bounce"}).Expect(http.StatusCreated)

	var answers []string
	for _, addr := range []string{"new@example.com", "known@example.com", "bounced@example.com"} {
		res, body := f.submitJSON(id, map[string]any{"email": addr})
		if res.StatusCode != http.StatusAccepted {
			t.Fatalf("%s: %d %s", addr, res.StatusCode, body)
		}
		answers = append(answers, body)
	}
	if answers[0] != answers[1] || answers[1] != answers[2] {
		t.Fatalf("answers differ: %q", answers)
	}
	if f.mailsTo("bounced@example.com") != 0 || f.mailsTo("known@example.com") != 1 {
		t.Fatal("a suppressed address got a confirmation email, or a known one none")
	}
	// At most 3 emails per address and form in 24 hours.
	for range 4 {
		f.submitJSON(id, map[string]any{"email": "new@example.com"})
	}
	if n := f.mailsTo("new@example.com"); n != 3 {
		t.Fatalf("%d emails to one address in a day, want 3", n)
	}
	// The honeypot: the usual answer, nothing stored.
	before := f.Env.QueryInt(`SELECT count(*) FROM form_submissions`)
	res, body := f.submitJSON(id, map[string]any{"email": "bot@example.com", "company_website": "http://spam.example"})
	if res.StatusCode != http.StatusAccepted || body != answers[0] || f.Env.QueryInt(`SELECT count(*) FROM form_submissions`) != before {
		t.Fatalf("honeypot: %d %s", res.StatusCode, body)
	}
}

func TestSubmissionRules(t *testing.T) {
	t.Parallel()
	f := newFormEnv(t)
	id := f.form(map[string]any{"name": "N", "consent_text": "Yes please", "fields": []map[string]any{{"key": "last_name", "required": true}}})
	for field, body := range map[string]map[string]any{
		"email":     {"last_name": "L", "consent": true},
		"last_name": {"email": "a@example.com", "consent": "on"},
		"consent":   {"email": "a@example.com", "last_name": "L"},
	} {
		res, b := f.submitJSON(id, body)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(b, "`"+field+"`") || !strings.Contains(b, "INVALID_INPUT") {
			t.Errorf("%s: %d %s", field, res.StatusCode, b)
		}
	}
	// A browser gets the form again with the error at the field.
	res, body := f.submitForm(id, url.Values{"email": {"not an address"}, "last_name": {"L"}, "consent": {"on"}})
	expectHTML(t, res, body, http.StatusBadRequest, `aria-invalid="true" aria-describedby="f-email-error"`, "must be an email address", `value="not an address"`)

	// Preflight answers any origin.
	res, _ = f.raw(http.MethodOptions, "/api/forms/"+id+"/submissions", "", nil, "Origin", "https://shop.example", "Access-Control-Request-Method", "POST")
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("preflight: %d %v", res.StatusCode, res.Header)
	}
	// 10 posts per IP and form in 10 minutes (4 so far); the 11th is
	// refused.
	for range 6 {
		f.submitJSON(id, map[string]any{"email": "a@example.com"})
	}
	res, _ = f.submitJSON(id, map[string]any{"email": "a@example.com"})
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("11th post: %d %v", res.StatusCode, res.Header)
	}
	f.Env.Clock.Advance(20 * time.Minute)
	if res, _ = f.submitJSON(id, map[string]any{"email": "a@example.com", "last_name": "L", "consent": true}); res.StatusCode != http.StatusAccepted {
		t.Fatalf("after the window: %d", res.StatusCode)
	}
}

func TestSingleOptInAndBrowserPost(t *testing.T) {
	t.Parallel()
	f := newFormEnv(t)
	id := f.form(map[string]any{"name": "N", "double_opt_in": false, "fields": []map[string]any{{"key": "company"}}})
	redirect := f.form(map[string]any{"name": "R", "double_opt_in": false, "redirect_url": "https://example.com/thanks"})
	existing := f.campEnv.contact("Bea", "bea@example.com")
	f.O.Post("/api/suppressions", map[string]any{"email": "bea@example.com", "reason": "unsubscribe"}).Expect(http.StatusCreated)
	f.O.Post("/api/suppressions", map[string]any{"email": "cy@example.com", "reason": "complaint"}).Expect(http.StatusCreated)

	res, body := f.submitForm(id, url.Values{"email": {"bea@example.com"}, "company": {"Initech"}})
	expectHTML(t, res, body, http.StatusOK, "Thank you")
	c := f.Key.Get("/api/v1/contacts/" + existing).Expect(http.StatusOK)
	if c.String("data.company") != "Initech" || c.String("data.first_name") != "Bea" {
		t.Fatalf("the existing contact is patched with the non-empty values: %s", c.Body)
	}
	if f.Env.QueryInt(`SELECT count(*) FROM suppressions WHERE email = 'bea@example.com' AND lifted_at IS NULL`) != 0 {
		t.Fatal("the unsubscribe was not lifted")
	}
	f.submitJSON(id, map[string]any{"email": "cy@example.com"})
	if f.Env.QueryInt(`SELECT count(*) FROM suppressions WHERE email = 'cy@example.com' AND lifted_at IS NULL`) != 1 ||
		f.Env.QueryInt(`SELECT count(*) FROM contacts WHERE suppressed_at IS NOT NULL AND emails @> '[{"address":"cy@example.com"}]'`) != 1 {
		t.Fatal("a complaint must stay and keep the new contact suppressed")
	}
	if n := f.mailsTo("cy@example.com") + f.mailsTo("bea@example.com"); n != 0 {
		t.Fatalf("single opt-in sent %d emails", n)
	}
	res, _ = f.submitForm(redirect, url.Values{"email": {"dee@example.com"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "https://example.com/thanks" {
		t.Fatalf("redirect: %d %v", res.StatusCode, res.Header)
	}
	consents := f.Key.Get("/api/v1/contacts/" + existing + "/consents").Expect(http.StatusOK)
	if consents.String("data.0.method") != "single" {
		t.Fatalf("consent: %s", consents.Body)
	}
}

func TestFormPagesEscapeEverything(t *testing.T) {
	t.Parallel()
	f := newFormEnv(t)
	const xss = `<script>alert(1)</script>`
	f.O.Post("/api/books/"+f.Book+"/fields", map[string]any{"key": "tier", "name": xss, "type": "text"}).Expect(http.StatusCreated)
	f.O.Post("/api/books/"+f.Book+"/labels", map[string]any{"name": xss, "public": true, "description": xss}).Expect(http.StatusCreated)
	id := f.form(map[string]any{
		"name": xss, "consent_text": xss, "success_message": xss,
		"fields": []map[string]any{{"key": "first_name"}, {"key": "last_name"}, {"key": "company"}, {"key": "job_title"}, {"key": "phone"}, {"key": "custom.tier"}, {"key": "topics"}},
	})
	res, body := f.raw(http.MethodGet, "/f/"+id, "", nil)
	expectHTML(t, res, body, http.StatusOK, "&lt;script&gt;", `<label for="f-email">Email`, ">Subscribe</button>", `name="company_website"`)

	vals := url.Values{"email": {xss}, "consent": {"on"}}
	for _, k := range []string{"first_name", "last_name", "company", "job_title", "phone", "custom.tier"} {
		vals.Set(k, xss)
	}
	res, body = f.submitForm(id, vals) // the invalid email shows every value again
	expectHTML(t, res, body, http.StatusBadRequest, "&lt;script&gt;")

	vals.Set("email", "xss@example.com")
	vals.Set("phone", "+1 555 0100")
	res, body = f.submitForm(id, vals)
	expectHTML(t, res, body, http.StatusOK, "&lt;script&gt;")
	f.Env.WaitJobs()
	mail := f.Mail.Recipients()
	if len(mail) != 1 || strings.Contains(mail[0].HTML(), "<script") || !strings.Contains(mail[0].HTML(), "&lt;script&gt;") {
		t.Fatalf("the confirmation email must escape the form's name:\n%v", mail)
	}
}

func TestErasureKeepsSuppressionsByHash(t *testing.T) {
	t.Parallel()
	f := newFormEnv(t)
	id := f.form(map[string]any{"name": "N", "double_opt_in": false})
	f.submitJSON(id, map[string]any{"email": "gone@example.com"})
	contact := f.Key.Get("/api/v1/contacts").Expect(http.StatusOK).String("data.0.id")
	f.Key.Enroll(f.Key.NewCampaignIn("Welcome", "active"), contact)
	f.O.Post("/api/suppressions", map[string]any{"email": "gone@example.com", "reason": "manual"}).Expect(http.StatusCreated)

	member := f.Env.Join(f.Owner, "member", "member").InBook(f.Book)
	member.Get("/api/contacts/"+contact+"/data-export").ExpectError(http.StatusForbidden, "FORBIDDEN")
	export := f.Key.Get("/api/v1/contacts/" + contact + "/data-export").Expect(http.StatusOK)
	if export.String("data.contact.id") != contact || export.Len("data.consents") != 1 || export.Len("data.suppressions") != 1 ||
		export.Len("data.campaigns") != 1 || export.Len("data.activity") == 0 {
		t.Fatalf("export: %s", export.Body)
	}
	member.Post("/api/contacts/"+contact+"/erase", nil).ExpectError(http.StatusForbidden, "FORBIDDEN")
	f.O.Post("/api/contacts/"+contact+"/erase", nil).Expect(http.StatusOK)
	f.Key.Get("/api/v1/contacts/"+contact).ExpectError(http.StatusNotFound, "NOT_FOUND")
	if f.Env.QueryInt(`SELECT count(*) FROM consents`) != 0 || f.Env.QueryInt(`SELECT count(*) FROM suppressions WHERE email IS NOT NULL`) != 0 ||
		f.Env.QueryInt(`SELECT count(*) FROM campaign_participants`) != 0 || f.Env.QueryInt(`SELECT count(*) FROM form_submissions`) != 0 ||
		f.Env.QueryInt(`SELECT count(*) FROM suppressions WHERE email_hash = encode(sha256('gone@example.com'), 'hex')`) != 1 {
		t.Fatal("erasure must leave only the suppression's hash")
	}
	// The audit log records the erasure by the contact's id, and no
	// address of it.
	if f.Env.QueryInt(`SELECT count(*) FROM audit_log WHERE action = 'contact.erased' AND actor_type = 'user' AND target_id = '`+contact+`'`) != 1 ||
		f.Env.QueryInt(`SELECT count(*) FROM audit_log WHERE details::text ILIKE '%gone@example.com%'`) != 0 {
		t.Fatal("the erasure's audit entry is missing or holds the address")
	}
	sup := f.O.Get("/api/suppressions").Expect(http.StatusOK)
	if sup.Value("data.0.email") != nil || len(sup.String("data.0.email_hash")) != 64 {
		t.Fatalf("suppression answer: %s", sup.Body)
	}

	// A later form, import or enrollment of the address is still blocked.
	double := f.form(map[string]any{"name": "D"})
	f.submitJSON(double, map[string]any{"email": "GONE@example.com"})
	if f.mailsTo("gone@example.com") != 0 {
		t.Fatal("the erased address got a confirmation email")
	}
	f.submitJSON(id, map[string]any{"email": "gone@example.com"})
	if f.Env.QueryInt(`SELECT count(*) FROM contacts WHERE suppressed_at IS NOT NULL`) != 1 {
		t.Fatal("a single opt-in of the erased address must be suppressed")
	}
}

func TestPreferencePage(t *testing.T) {
	t.Parallel()
	u := newUnsubEnv(t)
	news := u.O.Post("/api/books/"+u.Book+"/labels", map[string]any{"name": "News", "public": true, "description": "Monthly"}).Expect(http.StatusCreated).String("data.id")
	events := u.O.Post("/api/books/"+u.Book+"/labels", map[string]any{"name": "Events", "public": true}).Expect(http.StatusCreated).String("data.id")
	private := u.O.Post("/api/books/"+u.Book+"/labels", map[string]any{"name": "VIP"}).Expect(http.StatusCreated).String("data.id")
	u.Key.Post("/api/v1/contacts/"+u.contact+"/labels", map[string]any{"label_id": news}).Expect(http.StatusOK)
	u.Key.Post("/api/v1/contacts/"+u.contact+"/labels", map[string]any{"label_id": private}).Expect(http.StatusOK)

	res, body := u.raw(http.MethodGet, "/api/unsubscribe?token="+url.QueryEscape(u.token), "", nil)
	expectHTML(t, res, body, http.StatusOK, "Topics you hear about", `value="`+news+`" checked`, `value="`+events+`"`, "Monthly", "Save preferences")
	if strings.Contains(body, `value="`+private+`"`) {
		t.Fatal("a private label is listed")
	}
	// The full set wanted: Events in, News out; VIP (not public) stays.
	res, body = u.raw(http.MethodPost, "/api/preferences", "application/x-www-form-urlencoded",
		[]byte(url.Values{"token": {u.token}, "label_ids": {events, private + "-not-an-id"}}.Encode()))
	expectHTML(t, res, body, http.StatusOK, "Preferences saved")
	labels := u.Key.Get("/api/v1/contacts/" + u.contact).Expect(http.StatusOK)
	var names []string
	for i := range labels.Len("data.labels") {
		names = append(names, labels.String("data.labels."+strconv.Itoa(i)+".name"))
	}
	if strings.Join(names, ",") != "Events,VIP" && strings.Join(names, ",") != "VIP,Events" {
		t.Fatalf("labels after saving: %v", names)
	}
	r := u.Env.Anonymous().Post("/api/preferences", map[string]any{"token": u.token, "label_ids": []string{}}).Expect(http.StatusOK)
	if r.String("data.message") == "" {
		t.Fatalf("json answer: %s", r.Body)
	}
	u.Env.Anonymous().Post("/api/preferences", map[string]any{"token": "nope", "label_ids": []string{}}).ExpectError(http.StatusNotFound, "NOT_FOUND")
}

// The confirmation email goes out at most once: a provider refusal for now
// is retried and sends one email; an attempt that died between the
// provider and its record (the stamp is left) sends nothing more.
func TestConfirmationEmailAtMostOnce(t *testing.T) {
	t.Parallel()
	f := newFormEnv(t)
	id := f.form(map[string]any{"name": "N"})
	f.Mail.FailNext(http.StatusServiceUnavailable, `{"errors":[{"message":"try later"}]}`, 1)
	f.submitJSON(id, map[string]any{"email": "retry@example.com"})
	tok := f.confirmToken("retry@example.com")
	if res, _ := f.raw(http.MethodPost, "/api/forms/confirm", "application/json", []byte(`{"token":"`+tok+`"}`)); res.StatusCode != http.StatusOK {
		t.Fatalf("the retried email's link: %d", res.StatusCode)
	}

	f.submitJSON(id, map[string]any{"email": "stamped@example.com"})
	f.Env.WaitJobs()
	var sub uuid.UUID
	if err := f.Env.App.Pool.QueryRow(t.Context(), `UPDATE form_submissions SET sent_at = NULL, sending_at = now()
		WHERE email = 'stamped@example.com' RETURNING id`).Scan(&sub); err != nil {
		t.Fatal(err)
	}
	if err := f.Env.App.Forms.SendConfirmation(t.Context(), sub); err == nil {
		t.Fatal("a stamped submission must not be sent again")
	}
	if n := f.mailsTo("stamped@example.com"); n != 1 {
		t.Fatalf("%d emails, want the first one only", n)
	}
}
