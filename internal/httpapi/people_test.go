package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

// newPeopleEnv is the service with account emails going to its fake
// provider and no team yet: these tests sign their users up themselves.
func newPeopleEnv(t *testing.T) (*apptest.Env, *mailertest.Server) {
	t.Helper()
	tm := apptest.Setup(t, apptest.Options{NoTeam: true, AccountMail: true})
	return tm.Env, tm.Mail
}

// mailTo waits for the n-th email (1-based) the fake accepted for to.
func mailTo(t *testing.T, mail *mailertest.Server, to string, n int) mailertest.Recipient {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var got []mailertest.Recipient
		for _, r := range mail.Recipients() {
			if strings.EqualFold(r.Email, to) {
				got = append(got, r)
			}
		}
		if len(got) >= n {
			return got[n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("email %d to %s never arrived (%d did)", n, to, len(got))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// mailsTo counts the emails to an address, sent or still queued.
func mailsTo(env *apptest.Env, mail *mailertest.Server, to string) int {
	n := env.QueryInt(`SELECT count(*) FROM account_emails WHERE lower(to_email) = lower($1)`, to)
	for _, r := range mail.Recipients() {
		if strings.EqualFold(r.Email, to) {
			n++
		}
	}
	return n
}

var emailLink = regexp.MustCompile(regexp.QuoteMeta(apptest.PublicBaseURL) + `(/app/[a-z/-]+)\?token=([A-Za-z0-9_-]+)`)

// linkToken checks that both parts of an account email hold the absolute
// link to path, with the same token, and returns the token.
func linkToken(t *testing.T, r mailertest.Recipient, path string) string {
	t.Helper()
	h, x := emailLink.FindStringSubmatch(r.HTML()), emailLink.FindStringSubmatch(r.Text())
	if h == nil || x == nil {
		t.Fatalf("no link in the email:\nHTML: %s\ntext: %s", r.HTML(), r.Text())
	}
	if h[1] != path || x[1] != path || h[2] != x[2] {
		t.Fatalf("links differ or go elsewhere: HTML %q, text %q, want path %s", h[0], x[0], path)
	}
	if len(x[2]) < 22 { // 128 bits in base64
		t.Fatalf("token %q is too short", x[2])
	}
	return x[2]
}

// checkSender checks who an account email is from and how it was sent.
func checkSender(t *testing.T, r mailertest.Recipient) {
	t.Helper()
	if r.From.Email != apptest.AccountMailSender || r.From.Name != apptest.AccountMailName || r.APIKey != apptest.AccountMailKey {
		t.Fatalf("sent from %+v with key %q", r.From, r.APIKey)
	}
}

func invitationsPath(teamID string) string { return "/api/teams/" + teamID + "/invitations" }

// invite invites email to admin's team and returns the token of the
// email that arrives (the n-th to that address).
func invite(t *testing.T, mail *mailertest.Server, admin *apptest.User, email, role string, n int) string {
	t.Helper()
	admin.Post(invitationsPath(admin.TeamID), map[string]string{"email": email, "role": role}).Expect(http.StatusCreated)
	return linkToken(t, mailTo(t, mail, email, n), "/app/invitations/accept")
}

func TestInvitationNewAccount(t *testing.T) {
	t.Parallel()
	env, mail := newPeopleEnv(t)
	owner := env.Signup("owner")
	team := owner.Get("/api/teams/" + owner.TeamID).Expect(http.StatusOK).String("data.name")

	created := owner.Post(invitationsPath(owner.TeamID), map[string]string{"email": "Bob@Example.com", "role": "member"}).Expect(http.StatusCreated)
	if created.String("data.email") != "Bob@Example.com" || created.String("data.role") != "member" || created.String("data.team_id") != owner.TeamID ||
		created.String("data.invited_by") != owner.ID || created.Has("data.token") {
		t.Fatalf("invitation: %s", created.Body)
	}
	exp, _ := time.Parse(time.RFC3339, created.String("data.expires_at"))
	if want := env.Clock.Now().Add(7 * 24 * time.Hour); !exp.Equal(want) {
		t.Fatalf("expires_at %s, want %s", exp, want)
	}

	email := mailTo(t, mail, "bob@example.com", 1)
	checkSender(t, email)
	if !strings.Contains(email.Subject, team) || !strings.Contains(email.Text(), "member") {
		t.Fatalf("subject %q, text %q", email.Subject, email.Text())
	}
	token := linkToken(t, email, "/app/invitations/accept")
	if env.QueryInt(`SELECT count(*) FROM invitations WHERE token_hash = sha256(convert_to($1, 'UTF8'))`, token) != 1 ||
		env.QueryInt(`SELECT count(*) FROM invitations WHERE token_hash = convert_to($1, 'UTF8')`, token) != 0 {
		t.Fatal("the token is not stored as its SHA-256")
	}
	anon := env.Anonymous()
	view := anon.Get("/api/invitations/" + token).Expect(http.StatusOK)
	if view.String("data.team.id") != owner.TeamID || view.String("data.team.name") != team || view.String("data.email") != "Bob@Example.com" ||
		view.String("data.role") != "member" || view.Bool("data.account_exists") || view.String("data.expires_at") == "" {
		t.Fatalf("lookup: %s", view.Body)
	}
	if n := owner.Get(invitationsPath(owner.TeamID)).Expect(http.StatusOK).Len("data"); n != 1 {
		t.Fatalf("pending invitations = %d", n)
	}

	// Creating the account needs a name and a password of 8 to 72 characters.
	anon.Post("/api/invitations/accept", map[string]string{"token": token}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	anon.Post("/api/invitations/accept", map[string]string{"token": token, "name": "Bob", "password": "short"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	anon.Post("/api/invitations/accept", map[string]string{"token": token, "name": "Bob", "password": strings.Repeat("p", 73)}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	anon.Post("/api/invitations/accept", map[string]string{"name": "Bob", "password": "long enough"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	anon.Post("/api/invitations/accept", map[string]string{"token": token + "x", "name": "Bob", "password": "long enough"}).ExpectError(http.StatusNotFound, "NOT_FOUND")

	acc := anon.Post("/api/invitations/accept", map[string]string{"token": token, "name": "Bob Stone", "password": "bob's password"}).Expect(http.StatusOK)
	if acc.String("data.token") == "" || acc.String("data.team.id") != owner.TeamID || acc.String("data.team.name") != team || acc.String("data.role") != "member" {
		t.Fatalf("accept: %s", acc.Body)
	}
	bob := env.Client(acc.String("data.token"))
	me := bob.Get("/api/me").Expect(http.StatusOK)
	if me.String("data.user.email") != "Bob@Example.com" || me.String("data.user.name") != "Bob Stone" || me.Len("data.teams") != 1 ||
		me.String("data.teams.0.id") != owner.TeamID || me.String("data.teams.0.role") != "member" {
		t.Fatalf("the new account should have the invited team only: %s", me.Body)
	}
	anon.Post("/api/auth/login", map[string]string{"email": "bob@example.com", "password": "bob's password"}).Expect(http.StatusOK)
	if n := env.QueryInt(`SELECT count(*) FROM events WHERE team_id = $1 AND type = 'member.joined' AND convert_from(body, 'UTF8')::jsonb->'data'->>'email' = 'Bob@Example.com'`, owner.TeamID); n != 1 {
		t.Fatalf("member.joined events = %d", n)
	}

	// Single use.
	anon.Get("/api/invitations/"+token).ExpectError(http.StatusNotFound, "NOT_FOUND")
	anon.Post("/api/invitations/accept", map[string]string{"token": token, "name": "Bob", "password": "long enough"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	bob.Post("/api/invitations/accept", map[string]string{"token": token}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	if n := owner.Get(invitationsPath(owner.TeamID)).Expect(http.StatusOK).Len("data"); n != 0 {
		t.Fatalf("pending invitations after acceptance = %d", n)
	}
	// Now a member: inviting the address again is a conflict.
	owner.Post(invitationsPath(owner.TeamID), map[string]string{"email": "BOB@example.com", "role": "admin"}).ExpectError(http.StatusConflict, "CONFLICT")
}

func TestInvitationWithExistingAccount(t *testing.T) {
	t.Parallel()
	env, mail := newPeopleEnv(t)
	owner := env.Signup("owner")
	carol := env.Signup("carol")
	dave := env.Signup("dave")
	token := invite(t, mail, owner, carol.Email, "admin", 1)
	if !env.Anonymous().Get("/api/invitations/" + token).Expect(http.StatusOK).Bool("data.account_exists") {
		t.Fatal("account_exists should be true")
	}
	// Without a login the existing account cannot be created again.
	env.Anonymous().Post("/api/invitations/accept", map[string]string{"token": token, "name": "C", "password": "long enough"}).
		ExpectError(http.StatusConflict, "CONFLICT")
	// Another account's login is refused, and the invitation stays usable.
	dave.Post("/api/invitations/accept", map[string]string{"token": token}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	// An API key is no login.
	owner.NewKey().Post("/api/invitations/accept", map[string]string{"token": token}).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")

	acc := carol.Post("/api/invitations/accept", map[string]string{"token": token}).Expect(http.StatusOK)
	if acc.String("data.role") != "admin" || acc.String("data.team.id") != owner.TeamID || acc.String("data.token") == "" {
		t.Fatalf("accept: %s", acc.Body)
	}
	if n := carol.Get("/api/me").Expect(http.StatusOK).Len("data.teams"); n != 2 {
		t.Fatalf("carol's teams = %d, want her own and the new one", n)
	}
	// The new admin administers the team.
	carol.Get(invitationsPath(owner.TeamID)).Expect(http.StatusOK)
}

func TestInvitationRules(t *testing.T) {
	t.Parallel()
	env, mail := newPeopleEnv(t)
	owner := env.Signup("owner")
	admin := env.Join(owner, "admin", "admin")
	member := env.Join(owner, "member", "member")
	outsider := env.Signup("outsider")
	path := invitationsPath(owner.TeamID)

	// Roles: admins invite and list; only owners invite owners.
	member.Post(path, map[string]string{"email": "x@example.com", "role": "viewer"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	member.Get(path).ExpectError(http.StatusForbidden, "FORBIDDEN")
	outsider.Post(path, map[string]string{"email": "x@example.com", "role": "viewer"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	outsider.Get(path).ExpectError(http.StatusNotFound, "NOT_FOUND")
	admin.Post(path, map[string]string{"email": "x@example.com", "role": "owner"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	admin.Post(path, map[string]string{"email": "not-an-email", "role": "viewer"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	admin.Post(path, map[string]string{"email": "x@example.com", "role": "boss"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	admin.Post(path, map[string]string{"email": member.Email, "role": "viewer"}).ExpectError(http.StatusConflict, "CONFLICT")
	owner.Post(path, map[string]string{"email": "co-owner@example.com", "role": "owner"}).Expect(http.StatusCreated)

	// The rules (replacing, revoking, expiry) are the accounts package's;
	// here, how the API answers them.
	second := invite(t, mail, admin, "X@example.com", "member", 1)
	list := admin.Get(path).Expect(http.StatusOK)
	if list.Len("data") != 2 {
		t.Fatalf("pending: %s", list.Body)
	}

	// Revoking kills the link.
	var id string
	for i := 0; i < list.Len("data"); i++ {
		if strings.EqualFold(list.String(fmt.Sprintf("data.%d.email", i)), "x@example.com") {
			id = list.String(fmt.Sprintf("data.%d.id", i))
		}
	}
	member.Delete(path+"/"+id).ExpectError(http.StatusForbidden, "FORBIDDEN")
	outsider.Delete(path+"/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
	outsider.Delete(invitationsPath(outsider.TeamID)+"/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
	admin.Delete(path+"/not-a-uuid").ExpectError(http.StatusNotFound, "NOT_FOUND")
	admin.Delete(path + "/" + id).Expect(http.StatusNoContent)
	admin.Delete(path+"/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
	env.Anonymous().Get("/api/invitations/"+second).ExpectError(http.StatusNotFound, "NOT_FOUND")
	env.Anonymous().Post("/api/invitations/accept", map[string]string{"token": second, "name": "X", "password": "long enough"}).
		ExpectError(http.StatusNotFound, "NOT_FOUND")
}

// An account registered first with someone else's address gains nothing
// from an invitation to that address: joining takes the emailed token, and
// the token with another address's login is refused.
func TestPreRegisteredAddressGainsNothing(t *testing.T) {
	t.Parallel()
	env, mail := newPeopleEnv(t)
	admin := env.Signup("admin")
	anon := env.Anonymous()
	reg := anon.Post("/api/auth/signup", map[string]string{
		"email": "victim@x.example", "password": "attacker's password", "name": "Victim?", "team_name": "Trap",
	}).Expect(http.StatusCreated)
	squatter := env.Client(reg.String("data.token"))
	attacker := env.Signup("attacker")

	token := invite(t, mail, admin, "victim@x.example", "admin", 1)

	// Nothing reaches the pre-registered account without the token.
	me := squatter.Get("/api/me").Expect(http.StatusOK)
	if me.Len("data.teams") != 1 || me.String("data.teams.0.name") != "Trap" {
		t.Fatalf("the squatter's teams: %s", me.Body)
	}
	squatter.Get("/api/teams/"+admin.TeamID).ExpectError(http.StatusNotFound, "NOT_FOUND")
	squatter.Get("/api/books?team_id="+admin.TeamID).ExpectError(http.StatusNotFound, "NOT_FOUND")
	squatter.Post("/api/invitations/accept", map[string]string{"token": ""}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	squatter.Post("/api/invitations/accept", map[string]string{"token": "guessed-token-0123456789abcdef"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	if n := admin.Get("/api/teams/" + admin.TeamID + "/members").Expect(http.StatusOK).Len("data"); n != 1 {
		t.Fatalf("members = %d", n)
	}
	// With the token, a login of another address is refused.
	attacker.Post("/api/invitations/accept", map[string]string{"token": token}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	if n := admin.Get("/api/teams/" + admin.TeamID + "/members").Expect(http.StatusOK).Len("data"); n != 1 {
		t.Fatalf("members after the refused accept = %d", n)
	}

	// The mailbox's owner takes the account back with a reset (which ends
	// the squatter's sessions) and then joins.
	anon.Post("/api/auth/password-reset", map[string]string{"email": "victim@x.example"}).Expect(http.StatusAccepted)
	reset := linkToken(t, mailTo(t, mail, "victim@x.example", 2), "/app/reset-password")
	victim := env.Client(anon.Post("/api/auth/password-reset/confirm", map[string]string{"token": reset, "password": "victim's own password"}).
		Expect(http.StatusOK).String("data.token"))
	squatter.Get("/api/me").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	victim.Post("/api/invitations/accept", map[string]string{"token": token}).Expect(http.StatusOK)
	if n := admin.Get("/api/teams/" + admin.TeamID + "/members").Expect(http.StatusOK).Len("data"); n != 2 {
		t.Fatalf("members = %d", n)
	}
}

func TestPasswordReset(t *testing.T) {
	t.Parallel()
	env, mail := newPeopleEnv(t)
	ann := env.Signup("ann")
	other := env.Client(env.Anonymous().Post("/api/auth/login", map[string]string{"email": ann.Email, "password": "correct horse battery"}).
		Expect(http.StatusOK).String("data.token"))
	anon := env.Anonymous()

	known := anon.Post("/api/auth/password-reset", map[string]string{"email": strings.ToUpper(ann.Email)}).Expect(http.StatusAccepted)
	unknown := anon.Post("/api/auth/password-reset", map[string]string{"email": "nobody@example.com"}).Expect(http.StatusAccepted)
	if string(known.Body) != string(unknown.Body) || known.String("data.message") == "" {
		t.Fatalf("answers differ: %s vs %s", known.Body, unknown.Body)
	}
	if n := mailsTo(env, mail, "nobody@example.com"); n != 0 {
		t.Fatalf("%d emails to an address without an account", n)
	}
	anon.Post("/api/auth/password-reset", map[string]string{"email": "not-an-email"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")

	email := mailTo(t, mail, ann.Email, 1)
	checkSender(t, email)
	if email.Subject == "" {
		t.Fatal("no subject")
	}
	token := linkToken(t, email, "/app/reset-password")
	anon.Post("/api/auth/password-reset/confirm", map[string]string{"token": token, "password": "short"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	anon.Post("/api/auth/password-reset/confirm", map[string]string{"token": token, "password": strings.Repeat("p", 73)}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	anon.Post("/api/auth/password-reset/confirm", map[string]string{"token": token + "x", "password": "a new password"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	res := anon.Post("/api/auth/password-reset/confirm", map[string]string{"token": token, "password": "a new password"}).Expect(http.StatusOK)
	if res.String("data.token") == "" || res.String("data.expires_at") == "" {
		t.Fatalf("confirm: %s", res.Body)
	}
	// Every earlier token stops working; the answer's works.
	ann.Get("/api/me").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	other.Get("/api/me").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	env.Client(res.String("data.token")).Get("/api/me").Expect(http.StatusOK)
	anon.Post("/api/auth/login", map[string]string{"email": ann.Email, "password": "correct horse battery"}).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	anon.Post("/api/auth/login", map[string]string{"email": ann.Email, "password": "a new password"}).Expect(http.StatusOK)
	// Single use.
	anon.Post("/api/auth/password-reset/confirm", map[string]string{"token": token, "password": "yet another one"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	// The owner of the address hears of the change.
	notice := mailTo(t, mail, ann.Email, 2)
	if !strings.Contains(notice.Subject, "changed") || !strings.Contains(notice.Text(), "changed") || !strings.Contains(notice.HTML(), "changed") {
		t.Fatalf("notice: %q %q", notice.Subject, notice.Text())
	}
}

func TestPasswordChange(t *testing.T) {
	t.Parallel()
	env, mail := newPeopleEnv(t)
	ann := env.Signup("ann")
	other := env.Client(env.Anonymous().Post("/api/auth/login", map[string]string{"email": ann.Email, "password": "correct horse battery"}).
		Expect(http.StatusOK).String("data.token"))

	ann.Post("/api/auth/password", map[string]string{"current_password": "wrong password", "new_password": "a new password"}).
		ExpectError(http.StatusForbidden, "FORBIDDEN")
	ann.Post("/api/auth/password", map[string]string{"current_password": "correct horse battery", "new_password": "short"}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	ann.Post("/api/auth/password", map[string]string{"current_password": "correct horse battery"}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	env.Anonymous().Post("/api/auth/password", map[string]string{"current_password": "correct horse battery", "new_password": "a new password"}).
		ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	ann.Get("/api/me").Expect(http.StatusOK) // nothing changed so far

	res := ann.Post("/api/auth/password", map[string]string{"current_password": "correct horse battery", "new_password": "a new password"}).Expect(http.StatusOK)
	if res.String("data.token") == "" || res.String("data.expires_at") == "" {
		t.Fatalf("change: %s", res.Body)
	}
	ann.Get("/api/me").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	other.Get("/api/me").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	env.Client(res.String("data.token")).Get("/api/me").Expect(http.StatusOK)
	env.Anonymous().Post("/api/auth/login", map[string]string{"email": ann.Email, "password": "a new password"}).Expect(http.StatusOK)
	notice := mailTo(t, mail, ann.Email, 1)
	checkSender(t, notice)
	if !strings.Contains(notice.Text(), "changed") {
		t.Fatalf("notice: %q", notice.Text())
	}
}

func TestLogout(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	ann := env.Signup("ann")
	other := env.Client(env.Anonymous().Post("/api/auth/login", map[string]string{"email": ann.Email, "password": "correct horse battery"}).
		Expect(http.StatusOK).String("data.token"))
	env.Anonymous().Post("/api/auth/logout", nil).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	ann.Post("/api/auth/logout", nil).Expect(http.StatusNoContent)
	ann.Get("/api/me").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	ann.Post("/api/auth/logout", nil).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	// Other sessions of the account go on.
	other.Get("/api/me").Expect(http.StatusOK)
}

// loginAs tries a login from the given client IP (sent as X-Forwarded-For;
// only read with TRUST_PROXY).
func loginAs(env *apptest.Env, email, password, ip string) *apptest.Response {
	return env.Anonymous().Post("/api/auth/login", map[string]string{"email": email, "password": password}, "X-Forwarded-For", ip)
}

func checkRetryAfter(t *testing.T, r *apptest.Response) {
	t.Helper()
	r.ExpectError(http.StatusTooManyRequests, "RATE_LIMITED")
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > 900 {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
}

func TestLoginThrottleAcrossInstances(t *testing.T) {
	t.Parallel()
	a := apptest.Setup(t, apptest.Options{Bare: true}).Env
	b := apptest.Setup(t, apptest.Options{Bare: true, DatabaseURL: a.DBURL}).Env
	ann := a.Signup("ann")
	instances := []*apptest.Env{a, b}

	// A success clears the email's count.
	for round := 0; round < 2; round++ {
		for i := 0; i < 4; i++ {
			loginAs(instances[i%2], ann.Email, "wrong password", "").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
		}
		loginAs(b, ann.Email, "correct horse battery", "").Expect(http.StatusOK)
	}

	// Five failures over both instances, then 429 on either, right
	// password or not.
	for i := 0; i < 5; i++ {
		loginAs(instances[i%2], strings.ToUpper(ann.Email), "wrong password", "").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	}
	checkRetryAfter(t, loginAs(b, ann.Email, "correct horse battery", ""))
	checkRetryAfter(t, loginAs(a, ann.Email, "wrong password", ""))
	// Another account is not affected.
	bob := a.Signup("bob")
	loginAs(b, bob.Email, "correct horse battery", "").Expect(http.StatusOK)

	// Once the window has passed, the right password works again.
	a.Clock.Advance(15*time.Minute - time.Second)
	b.Clock.Advance(15*time.Minute - time.Second)
	checkRetryAfter(t, loginAs(b, ann.Email, "correct horse battery", ""))
	a.Clock.Advance(time.Second)
	b.Clock.Advance(time.Second)
	loginAs(b, ann.Email, "correct horse battery", "").Expect(http.StatusOK)
}

func TestLoginThrottlePerClientIP(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true, Env: map[string]string{"TRUST_PROXY": "true"}}).Env
	ann := env.Signup("ann")
	for i := 0; i < 30; i++ {
		loginAs(env, fmt.Sprintf("guess%d@example.com", i), "wrong password", "203.0.113.7").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	}
	checkRetryAfter(t, loginAs(env, ann.Email, "correct horse battery", "203.0.113.7"))
	// Other addresses (the proxy's X-Forwarded-For) are not affected.
	loginAs(env, ann.Email, "correct horse battery", "203.0.113.8").Expect(http.StatusOK)
	// Successful logins do not count against an address.
	for i := 0; i < 31; i++ {
		loginAs(env, ann.Email, "correct horse battery", "203.0.113.9").Expect(http.StatusOK)
	}
}

// waitRefused polls c until its token is refused, and fails unless that
// happens within a second.
func waitRefused(t *testing.T, c *apptest.Client) {
	t.Helper()
	start := time.Now()
	for {
		r := c.Get("/api/me")
		if r.Status == http.StatusUnauthorized {
			r.ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
			return
		}
		r.Expect(http.StatusOK)
		if time.Since(start) > time.Second {
			t.Fatal("the token still works on the other instance after a second")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRevocationAcrossInstances(t *testing.T) {
	t.Parallel()
	a := apptest.Setup(t, apptest.Options{Bare: true}).Env
	b := apptest.Setup(t, apptest.Options{Bare: true, DatabaseURL: a.DBURL}).Env
	ann := a.Signup("ann")
	onB := b.Client(ann.Token)
	onB.Get("/api/me").Expect(http.StatusOK) // B has seen the session open
	ann.Post("/api/auth/logout", nil).Expect(http.StatusNoContent)
	waitRefused(t, onB)

	// A password change on A ends B's sessions too.
	second := b.Client(b.Anonymous().Post("/api/auth/login", map[string]string{"email": ann.Email, "password": "correct horse battery"}).
		Expect(http.StatusOK).String("data.token"))
	second.Get("/api/me").Expect(http.StatusOK)
	third := a.Client(a.Anonymous().Post("/api/auth/login", map[string]string{"email": ann.Email, "password": "correct horse battery"}).
		Expect(http.StatusOK).String("data.token"))
	fresh := third.Post("/api/auth/password", map[string]string{"current_password": "correct horse battery", "new_password": "a new password"}).
		Expect(http.StatusOK).String("data.token")
	waitRefused(t, second)
	b.Client(fresh).Get("/api/me").Expect(http.StatusOK)
}

// cookies returns the cookies an answer sets, by name.
func cookies(t *testing.T, r *apptest.Response) map[string]*http.Cookie {
	t.Helper()
	out := map[string]*http.Cookie{}
	for _, line := range r.Header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			t.Fatalf("Set-Cookie %q: %v", line, err)
		}
		out[c.Name] = c
	}
	return out
}

func TestCookieSession(t *testing.T) {
	t.Parallel()
	env, _ := newPeopleEnv(t)
	ann := env.Signup("ann")
	anon := env.Anonymous()

	login := anon.Post("/api/auth/login?session=cookie", map[string]string{"email": ann.Email, "password": "correct horse battery"}).Expect(http.StatusOK)
	if login.Has("data.token") || login.String("data.expires_at") == "" {
		t.Fatalf("a cookie login must keep the token out of the body: %s", login.Body)
	}
	set := cookies(t, login)
	sess, csrf := set["cb_session"], set["cb_csrf"]
	if sess == nil || csrf == nil {
		t.Fatalf("cookies: %v", login.Header.Values("Set-Cookie"))
	}
	if !sess.HttpOnly || !sess.Secure || sess.SameSite != http.SameSiteStrictMode || sess.Path != "/api" || sess.Value == "" {
		t.Fatalf("session cookie: %+v", sess)
	}
	if csrf.HttpOnly || !csrf.Secure || csrf.SameSite != http.SameSiteStrictMode || csrf.Value == "" {
		t.Fatalf("csrf cookie: %+v", csrf)
	}
	jar := "cb_session=" + sess.Value + "; cb_csrf=" + csrf.Value
	book := map[string]any{"team_id": ann.TeamID, "name": "Cookies"}

	// Reads need the cookie only.
	if anon.Get("/api/me", "Cookie", jar).Expect(http.StatusOK).String("data.user.id") != ann.ID {
		t.Fatal("cookie read is someone else")
	}
	// Writes need the CSRF token too.
	anon.Post("/api/books", book, "Cookie", jar).ExpectError(http.StatusForbidden, "FORBIDDEN")
	anon.Post("/api/books", book, "Cookie", jar, "X-CSRF-Token", "forged").ExpectError(http.StatusForbidden, "FORBIDDEN")
	anon.Post("/api/books", book, "Cookie", jar, "X-CSRF-Token", csrf.Value).Expect(http.StatusCreated)
	// Bearer clients need no CSRF token.
	ann.Post("/api/books", map[string]any{"team_id": ann.TeamID, "name": "Bearer"}).Expect(http.StatusCreated)
	// A CSRF token of another session does not fit.
	other := cookies(t, anon.Post("/api/auth/login?session=cookie", map[string]string{"email": ann.Email, "password": "correct horse battery"}).Expect(http.StatusOK))
	anon.Post("/api/books", book, "Cookie", jar, "X-CSRF-Token", other["cb_csrf"].Value).ExpectError(http.StatusForbidden, "FORBIDDEN")

	// A password change in cookie mode renews the cookies.
	changed := anon.Post("/api/auth/password", map[string]string{"current_password": "correct horse battery", "new_password": "a new password"},
		"Cookie", jar, "X-CSRF-Token", csrf.Value).Expect(http.StatusOK)
	renewed := cookies(t, changed)
	if changed.Has("data.token") || renewed["cb_session"] == nil || renewed["cb_session"].Value == sess.Value {
		t.Fatalf("password change in cookie mode: %s %v", changed.Body, changed.Header.Values("Set-Cookie"))
	}
	anon.Get("/api/me", "Cookie", jar).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	jar = "cb_session=" + renewed["cb_session"].Value + "; cb_csrf=" + renewed["cb_csrf"].Value
	csrfValue := renewed["cb_csrf"].Value

	// Logout needs the CSRF token, ends the session and clears the cookies.
	anon.Post("/api/auth/logout", nil, "Cookie", jar).ExpectError(http.StatusForbidden, "FORBIDDEN")
	out := anon.Post("/api/auth/logout", nil, "Cookie", jar, "X-CSRF-Token", csrfValue).Expect(http.StatusNoContent)
	if c := cookies(t, out)["cb_session"]; c == nil || c.MaxAge >= 0 || c.Value != "" {
		t.Fatalf("logout did not clear the session cookie: %v", out.Header.Values("Set-Cookie"))
	}
	anon.Get("/api/me", "Cookie", jar).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")

	// Signup can start a cookie session too; without https no Secure flag.
	plain := apptest.Setup(t, apptest.Options{Bare: true}).Env
	up := plain.Anonymous().Post("/api/auth/signup?session=cookie", map[string]string{
		"email": "c@example.com", "password": "long enough", "name": "C", "team_name": "C",
	}).Expect(http.StatusCreated)
	if c := cookies(t, up)["cb_session"]; c == nil || c.Secure || !c.HttpOnly || up.Has("data.token") {
		t.Fatalf("signup in cookie mode: %s %v", up.Body, up.Header.Values("Set-Cookie"))
	}
}

func TestAccountEmailRetriedAfterProviderFailure(t *testing.T) {
	t.Parallel()
	env, mail := newPeopleEnv(t)
	ann := env.Signup("ann")
	mail.FailNext(http.StatusServiceUnavailable, `{"errors":[{"message":"try later"}]}`, 1)
	start := time.Now()
	env.Anonymous().Post("/api/auth/password-reset", map[string]string{"email": ann.Email}).Expect(http.StatusAccepted)
	// The provider answers at once here, so this catches only a request
	// that waits on the provider's retries; a loose bound, since the suite
	// runs under -race beside the browser tests.
	if time.Since(start) > 5*time.Second {
		t.Fatal("the request waited for the provider")
	}
	// The failed attempt leaves the email queued for a retry after the
	// backoff (30 s).
	deadline := time.Now().Add(5 * time.Second)
	for mail.RequestCount() < 1 || env.QueryInt(`SELECT count(*) FROM river_job WHERE kind = 'account_email' AND state = 'retryable'
		AND attempt = 1 AND errors IS NOT NULL AND scheduled_at > now() + interval '20 seconds'`) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("no failed attempt recorded")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The backoff has passed.
	jobID := env.QueryInt(`SELECT id FROM river_job WHERE kind = 'account_email'`)
	if _, err := env.App.Jobs.Client().JobRetry(context.Background(), int64(jobID)); err != nil {
		t.Fatal(err)
	}
	token := linkToken(t, mailTo(t, mail, ann.Email, 1), "/app/reset-password")
	env.Anonymous().Post("/api/auth/password-reset/confirm", map[string]string{"token": token, "password": "a new password"}).Expect(http.StatusOK)
	if n := mail.RequestCount(); n < 2 {
		t.Fatalf("provider requests = %d", n)
	}
}

func TestAccountEmailsWithoutKeyAreLogged(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true, Env: map[string]string{"PUBLIC_BASE_URL": apptest.PublicBaseURL}}).Env
	owner := env.Signup("owner")
	owner.Post(invitationsPath(owner.TeamID), map[string]string{"email": "bob@example.com", "role": "viewer"}).Expect(http.StatusCreated)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(env.Logs(), "account email not sent") {
		if time.Now().After(deadline) {
			t.Fatalf("no warning in the log:\n%s", env.Logs())
		}
		time.Sleep(10 * time.Millisecond)
	}
	var line string
	for _, l := range strings.Split(env.Logs(), "\n") {
		if strings.Contains(l, "account email not sent") {
			line = l
		}
	}
	m := emailLink.FindStringSubmatch(line)
	if !strings.Contains(line, "level=WARN") || m == nil || m[1] != "/app/invitations/accept" {
		t.Fatalf("log line: %s", line)
	}
	// The logged link works.
	env.Anonymous().Get("/api/invitations/" + m[2]).Expect(http.StatusOK)
}

// TestDeadSessionCookie: a browser still carrying the cookie of a session
// that ended (logged out elsewhere, password changed) is told so once and
// loses the cookie, since its scripts cannot remove an HttpOnly cookie;
// public endpoints that also serve logged-in people treat it as anonymous.
func TestDeadSessionCookie(t *testing.T) {
	t.Parallel()
	env, mail := newPeopleEnv(t)
	owner := env.Signup("owner")
	anon := env.Anonymous()

	login := anon.Post("/api/auth/login?session=cookie", map[string]string{"email": owner.Email, "password": "correct horse battery"}).Expect(http.StatusOK)
	set := cookies(t, login)
	jar := "cb_session=" + set["cb_session"].Value + "; cb_csrf=" + set["cb_csrf"].Value
	anon.Post("/api/auth/logout", nil, "Cookie", jar, "X-CSRF-Token", set["cb_csrf"].Value).Expect(http.StatusNoContent)

	refused := anon.Get("/api/me", "Cookie", jar).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	if c := cookies(t, refused)["cb_session"]; c == nil || c.MaxAge >= 0 || c.Value != "" {
		t.Fatalf("a dead session cookie is not cleared: %v", refused.Header.Values("Set-Cookie"))
	}
	// A bearer token that stopped working clears nothing (it is no cookie).
	if got := anon.Get("/api/me", "Authorization", "Bearer "+login.String("data.token")).Header.Values("Set-Cookie"); len(got) != 0 {
		t.Fatalf("bearer 401 set cookies: %v", got)
	}

	// Creating an account from an invitation works with the dead cookie.
	owner.Post(invitationsPath(owner.TeamID), map[string]string{"email": "bob@example.com", "role": "member"}).Expect(http.StatusCreated)
	token := linkToken(t, mailTo(t, mail, "bob@example.com", 1), "/app/invitations/accept")
	accepted := anon.Post("/api/invitations/accept?session=cookie", map[string]string{"token": token, "name": "Bob", "password": "long enough"},
		"Cookie", jar, "X-CSRF-Token", set["cb_csrf"].Value).Expect(http.StatusOK)
	if accepted.String("data.team.id") != owner.TeamID || cookies(t, accepted)["cb_session"].Value == "" {
		t.Fatalf("accept with a dead cookie: %s %v", accepted.Body, accepted.Header.Values("Set-Cookie"))
	}
}
