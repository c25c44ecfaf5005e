package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
)

// A right password is not a failure: four wrong second-step codes after
// it never lock the account, and the right code still signs in.
func TestLoginThrottleCountsFailuresOnly(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	ann := env.Signup("ann")
	secret, _ := turnOn2FA(t, env, ann)
	for i := range 4 {
		token := mfaToken(t, env, ann.Email)
		secondStep(env, token, "code", []string{"111111", "222222", "333333", "444444"}[i]).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	}
	token := mfaToken(t, env, ann.Email)
	secondStep(env, token, "code", totp(t, env, secret)).Expect(http.StatusOK)

	// The fifth failure in the window locks: four wrong codes and one
	// wrong password, then even the right password is refused.
	for i := range 4 {
		token := mfaToken(t, env, ann.Email)
		secondStep(env, token, "code", []string{"111111", "222222", "333333", "444444"}[i]).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	}
	env.Anonymous().Post("/api/auth/login", map[string]string{"email": ann.Email, "password": "wrong password"}).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	checkRetryAfter(t, env.Anonymous().Post("/api/auth/login", map[string]string{"email": ann.Email, "password": password}))
}

// Wrong current passwords at the password change count in the login
// throttle: a stolen session cannot guess the password either.
func TestChangePasswordGuessesAreThrottled(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	ann := env.Signup("ann")
	for range 5 {
		ann.Post("/api/auth/password", map[string]string{"current_password": "wrong password", "new_password": "a new password"}).
			ExpectError(http.StatusForbidden, "FORBIDDEN")
	}
	checkRetryAfter(t, ann.Post("/api/auth/password", map[string]string{"current_password": password, "new_password": "a new password"}))
	checkRetryAfter(t, env.Anonymous().Post("/api/auth/login", map[string]string{"email": ann.Email, "password": password}))
}

// Invitation tokens travel in a body; the old GET still answers, and no
// token of any kind reaches the access log, in the path or the query.
func TestTokensStayOutOfTheAccessLog(t *testing.T) {
	t.Parallel()
	env, mail := newPeopleEnv(t)
	owner := env.Signup("owner")
	token := invite(t, mail, owner, "bob@example.com", "member", 1)
	anon := env.Anonymous()
	view := anon.Post("/api/invitations/lookup", map[string]string{"token": token}).Expect(http.StatusOK)
	if view.String("data.team.id") != owner.TeamID || view.String("data.email") != "bob@example.com" || view.String("data.role") != "member" {
		t.Fatalf("lookup: %s", view.Body)
	}
	anon.Post("/api/invitations/lookup", map[string]string{"token": "no-such-token"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	anon.Post("/api/invitations/lookup", map[string]string{}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	anon.Get("/api/invitations/" + token).Expect(http.StatusOK)

	// Tokens of every kind in queries: unsubscribe, sign-up confirmation,
	// a single sign-on return (the dashboard's pages are logged alike).
	secrets := map[string]string{
		"/api/unsubscribe?token=":              "unsub-secret-0123456789",
		"/api/forms/confirm?token=":            "confirm-secret-0123456789",
		"/api/auth/sso/callback?state=s&code=": "sso-code-secret-0123456789",
		"/api/auth/sso/callback?code=c&state=": "sso-state-secret-0123456789",
	}
	for prefix, secret := range secrets {
		anon.Do(http.MethodGet, prefix+secret, nil)
	}
	logs := env.Logs()
	if !strings.Contains(logs, "path=/api/invitations/REDACTED") || !strings.Contains(logs, "token=REDACTED") {
		t.Fatalf("the access log does not show the redacted requests:\n%s", logs)
	}
	for _, secret := range secrets {
		if strings.Contains(logs, secret) {
			t.Errorf("a token reached the log: %q", secret)
		}
	}
}

// Test emails go only to the team's members and the book's contacts, at
// most 20 per book and hour.
func TestTestSendsAreLimitedAndKnownOnly(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "trial")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "Hi", "<p>x</p>")
	path := "/api/campaign-templates/" + tpl + "/send-test"
	c.contact("Ann", "ann@example.com")
	stranger := c.O.Post(path, map[string]any{"email": "stranger@example.org"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if !strings.Contains(string(stranger.Body), `"field":"email"`) {
		t.Fatalf("the refusal does not name email: %s", stranger.Body)
	}
	// A contact of another book of the team is a stranger to this one.
	other := c.Owner.CreateBook("Other")
	c.Owner.Client.InBook(other).NewContact("Olga", "olga@example.com")
	c.O.Post(path, map[string]any{"email": "olga@example.com"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if n := len(c.Mail.Recipients()); n != 0 {
		t.Fatalf("%d emails went to strangers", n)
	}

	for i := range 20 {
		to := []string{c.Owner.Email, "ANN@example.com"}[i%2]
		c.O.Post(path, map[string]any{"email": to}).Expect(http.StatusOK)
	}
	over := c.O.Post(path, map[string]any{"email": c.Owner.Email}).ExpectError(http.StatusTooManyRequests, "RATE_LIMITED")
	if secs, err := strconv.Atoi(over.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 3600 {
		t.Fatalf("Retry-After %q", over.Header.Get("Retry-After"))
	}
	if n := len(c.Mail.Recipients()); n != 20 {
		t.Fatalf("%d test emails sent, want 20", n)
	}
	// An hour later (two windows on), the book may send again.
	c.Env.Clock.Advance(2 * time.Hour)
	c.O.Post(path, map[string]any{"email": c.Owner.Email}).Expect(http.StatusOK)
}

// A member's step sends only from the domain of the book's sender; the
// owner, who sets the book's sender, may pick any.
func TestStepSenderStaysOnTheBooksDomain(t *testing.T) {
	t.Parallel()
	tm := apptest.Setup(t, apptest.Options{Addon: "active"})
	tpl := tm.Key.NewTemplateWith("T", "Hi", "<p>x</p>")
	cid := tm.Key.NewCampaign("C")
	steps := "/api/campaigns/" + cid + "/steps"
	step := func(sender string) map[string]any {
		return map[string]any{"step_type": "email", "name": "S", "schedule_type": "immediate", "email_template_id": tpl, "sender_email": sender}
	}
	// No book sender yet: a member may not choose one.
	tm.M.Post(steps, step("ceo@acme.example")).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	tm.O.ConfigureEmail() // news@acme.example
	for cl, path := range map[*apptest.Client]string{tm.M: steps, tm.A: steps, tm.Key: "/api/v1" + steps[len("/api"):]} {
		r := cl.Post(path, step("ceo@bank.example")).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		if !strings.Contains(string(r.Body), `"field":"sender_email"`) {
			t.Fatalf("the refusal does not name sender_email: %s", r.Body)
		}
	}
	id := tm.M.Post(steps, step("ceo@ACME.example")).Expect(http.StatusOK).String("data.id")
	tm.M.Patch(steps+"/"+id, map[string]any{"sender_email": "ceo@bank.example"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	// The owner may; a member's later edit of another field keeps it.
	tm.O.Patch(steps+"/"+id, map[string]any{"sender_email": "ceo@bank.example"}).Expect(http.StatusOK)
	tm.O.Post(steps, step("ann@elsewhere.example")).Expect(http.StatusOK)
	if got := tm.M.Patch(steps+"/"+id, map[string]any{"name": "Renamed"}).Expect(http.StatusOK).String("data.sender_email"); got != "ceo@bank.example" {
		t.Fatalf("sender_email %q after a member's rename", got)
	}
}

// Form posts are limited per IPv6 /64, as logins are: one host holds a
// whole /64 and can pick any address in it.
func TestFormPostsLimitedPerIPv6Prefix(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active", apptest.Options{Env: map[string]string{"TRUST_PROXY": "true"}})
	c.O.ConfigureEmail()
	f := &formEnv{unsubEnv: &unsubEnv{campEnv: c}}
	id := f.form(map[string]any{"name": "Newsletter", "double_opt_in": false})
	post := func(i int, ip string) *http.Response {
		b, _ := json.Marshal(map[string]string{"email": fmt.Sprintf("p%d@example.com", i)})
		res, _ := f.raw(http.MethodPost, "/api/forms/"+id+"/submissions", "application/json", b, "X-Forwarded-For", ip)
		return res
	}
	for i := range 10 {
		if res := post(i, fmt.Sprintf("2001:db8:1:2:%x::1", i+1)); res.StatusCode != http.StatusAccepted {
			t.Fatalf("post %d: %d", i, res.StatusCode)
		}
	}
	if res := post(10, "2001:db8:1:2:ffff:ffff:ffff:fffe"); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the 11th post from the same /64: %d, want 429", res.StatusCode)
	}
	if res := post(11, "2001:db8:1:3::1"); res.StatusCode != http.StatusAccepted {
		t.Fatalf("another /64: %d", res.StatusCode)
	}
}

// A read key may export (a read); the export's audit entry records the
// filters used, and a person's data export is audited too.
func TestExportsAreAuditedAndOpenToReadKeys(t *testing.T) {
	t.Parallel()
	tm := apptest.Setup(t)
	contact := tm.Key.NewContact("Ada", "ada@example.com")
	label := tm.Owner.Post("/api/books/"+tm.Book+"/labels", map[string]any{"name": "VIP"}).Expect(http.StatusCreated).String("data.id")
	segment := tm.Key.Post("/api/v1/segments", map[string]any{"name": "Acme", "rule": map[string]any{"field": "company", "op": "contains", "value": "acme"}}).
		Expect(http.StatusCreated).String("data.id")
	read := tm.Env.Client(tm.Owner.Post("/api/teams/"+tm.Owner.TeamID+"/api-keys", map[string]any{"name": "reporting", "scope": "read"}).
		Expect(http.StatusCreated).String("data.key")).InBook(tm.Book)
	r := read.Get("/api/v1/contacts/export?format=csv&q=ad&label_id=" + label + "&segment_id=" + segment).Expect(http.StatusOK)
	if r.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("export: %s", r.Header.Get("Content-Type"))
	}
	read.Get("/api/v1/contacts/export?format=vcard").Expect(http.StatusOK)
	// Still no writes.
	read.Post("/api/v1/contacts", map[string]any{"first_name": "X"}).ExpectError(http.StatusForbidden, "FORBIDDEN")

	got := tm.Env.QueryInt(`SELECT count(*) FROM audit_log WHERE action = 'contacts.exported' AND actor_type = 'api_key'
		AND details->>'q' = 'ad' AND details->>'label_id' = $1 AND details->>'segment_id' = $2`, label, segment)
	if got != 1 {
		t.Fatalf("%d export entries with the filters, want 1", got)
	}

	tm.O.Get("/api/contacts/" + contact + "/data-export").Expect(http.StatusOK)
	entries := tm.Owner.Get("/api/teams/" + tm.Owner.TeamID + "/audit-log?action=contact.data_exported").Expect(http.StatusOK)
	if entries.Len("data") != 1 || entries.String("data.0.target.id") != contact || entries.String("data.0.target.type") != "contact" ||
		entries.String("data.0.actor.id") != tm.Owner.ID {
		t.Fatalf("data export entry: %s", entries.Body)
	}
}
