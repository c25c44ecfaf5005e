package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/apptest/oidctest"
)

const ssoSecret = "client-secret-from-the-provider-x9Qz"

// ssoEnv is a team with an identity provider running beside the service.
type ssoEnv struct {
	*apptest.Team
	idp *oidctest.Provider
}

func newSSOEnv(t *testing.T) *ssoEnv {
	t.Helper()
	tm := apptest.Setup(t)
	return &ssoEnv{Team: tm, idp: oidctest.New(t, "contactbook", ssoSecret, apptest.PublicBaseURL+"/api/auth/sso/callback")}
}

func (e *ssoEnv) path() string { return "/api/teams/" + e.Owner.TeamID + "/sso" }

// configure saves the team's settings with extra fields over the usual.
func (e *ssoEnv) configure(extra map[string]any) *apptest.Response {
	e.Env.T.Helper()
	body := map[string]any{"issuer": e.idp.Issuer, "client_id": "contactbook", "client_secret": ssoSecret, "allowed_domains": []string{"acme.example"}}
	for k, v := range extra {
		body[k] = v
	}
	return e.Owner.Put(e.path(), body).Expect(http.StatusOK)
}

// signIn runs a browser's sign-in from "Sign in with SSO" to the
// service's last redirect, and returns where that leads and the cookies
// the service set.
func (e *ssoEnv) signIn(email string) (string, map[string]string) {
	e.Env.T.Helper()
	return e.browse(e.Env.URL+"/api/auth/sso/start?email="+url.QueryEscape(email), nil)
}

// browse follows redirects as a browser does, keeping the service's
// cookies (by name: the test server is plain http, the cookies Secure),
// until a redirect into the dashboard; the public base URL of the
// service's links is the test server.
func (e *ssoEnv) browse(start string, cookies map[string]string) (string, map[string]string) {
	e.Env.T.Helper()
	if cookies == nil {
		cookies = map[string]string{}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next := start
	for range 10 {
		req, err := http.NewRequest(http.MethodGet, next, nil)
		if err != nil {
			e.Env.T.Fatal(err)
		}
		ours := strings.HasPrefix(next, e.Env.URL)
		if ours {
			for k, v := range cookies {
				req.AddCookie(&http.Cookie{Name: k, Value: v})
			}
		}
		res, err := client.Do(req)
		if err != nil {
			e.Env.T.Fatal(err)
		}
		res.Body.Close()
		if ours {
			for _, c := range res.Cookies() {
				if c.MaxAge < 0 {
					delete(cookies, c.Name)
				} else {
					cookies[c.Name] = c.Value
				}
			}
		}
		if res.StatusCode != http.StatusFound && res.StatusCode != http.StatusSeeOther {
			e.Env.T.Fatalf("GET %s: %d, want a redirect", next, res.StatusCode)
		}
		loc, err := res.Request.URL.Parse(res.Header.Get("Location"))
		if err != nil {
			e.Env.T.Fatal(err)
		}
		target := loc.String()
		if strings.HasPrefix(target, apptest.PublicBaseURL) {
			target = e.Env.URL + strings.TrimPrefix(target, apptest.PublicBaseURL)
		}
		if strings.HasPrefix(target, e.Env.URL+"/app/") {
			return strings.TrimPrefix(target, e.Env.URL), cookies
		}
		next = target
	}
	e.Env.T.Fatalf("too many redirects from %s", start)
	return "", nil
}

// client is the API client of a cookie session.
func (e *ssoEnv) session(cookies map[string]string) func(method, path string, body any) *apptest.Response {
	return func(method, path string, body any) *apptest.Response {
		hdr := []string{"Cookie", "cb_session=" + cookies["cb_session"] + "; cb_csrf=" + cookies["cb_csrf"], "X-CSRF-Token", cookies["cb_csrf"]}
		return e.Env.Anonymous().Do(method, path, body, hdr...)
	}
}

func TestSSOSettings(t *testing.T) {
	t.Parallel()
	e := newSSOEnv(t)
	e.Owner.Get(e.path()).ExpectError(http.StatusNotFound, "NOT_FOUND")
	saved := e.configure(map[string]any{"allowed_domains": []string{"Acme.example", "@sales.acme.example"}, "groups_claim": "groups",
		"role_map": map[string]string{"crm-admins": "admin"}})
	if saved.String("data.client_secret") != "****x9Qz" || saved.String("data.redirect_uri") != apptest.PublicBaseURL+"/api/auth/sso/callback" ||
		saved.String("data.default_role") != "member" || saved.Bool("data.enforce") || saved.Len("data.allowed_domains") != 2 ||
		saved.String("data.allowed_domains.0") != "acme.example" || saved.String("data.role_map.crm-admins") != "admin" {
		t.Fatalf("saved: %s", saved.Body)
	}
	if strings.Contains(string(saved.Body), ssoSecret) || e.Env.QueryInt(`SELECT count(*) FROM sso_configs WHERE position($1 in encode(client_secret_sealed, 'escape')) > 0`, ssoSecret) != 0 {
		t.Fatal("the client secret is shown or stored in clear")
	}
	// The masked secret keeps the stored one (the sign-in below uses it).
	e.Owner.Put(e.path(), map[string]any{"issuer": e.idp.Issuer, "client_id": "contactbook", "client_secret": "****x9Qz", "allowed_domains": []string{"acme.example"}}).
		Expect(http.StatusOK)
	if loc, _ := e.signIn("ann@acme.example"); loc != "/app/" {
		t.Fatalf("sign-in with the kept secret ended at %s", loc)
	}

	// Only owners; not API keys.
	for _, cl := range []*apptest.Client{e.A, e.M, e.V} {
		cl.Get(e.path()).ExpectError(http.StatusForbidden, "FORBIDDEN")
	}
	e.A.Put(e.path(), map[string]any{"issuer": e.idp.Issuer}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	other := e.AddTeam("Other")
	other.Owner.Get(e.path()).ExpectError(http.StatusNotFound, "NOT_FOUND")

	// The discovery document is checked: another issuer, or none at all.
	for _, issuer := range []string{e.idp.Issuer + "/nope", e.Env.URL, "ftp://login.example.com"} {
		r := e.Owner.Put(e.path(), map[string]any{"issuer": issuer, "client_id": "c", "client_secret": "s", "allowed_domains": []string{"acme.example"}}).
			ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		if !strings.Contains(string(r.Body), `"field":"issuer"`) {
			t.Fatalf("%s: %s", issuer, r.Body)
		}
	}
	for name, body := range map[string]map[string]any{
		"no domains":   {"allowed_domains": []string{}},
		"bad domain":   {"allowed_domains": []string{"not a domain"}},
		"owner role":   {"default_role": "owner"},
		"mapped owner": {"groups_claim": "groups", "role_map": map[string]string{"g": "owner"}},
		"map no claim": {"role_map": map[string]string{"g": "admin"}},
	} {
		full := map[string]any{"issuer": e.idp.Issuer, "client_id": "contactbook", "allowed_domains": []string{"acme.example"}}
		for k, v := range body {
			full[k] = v
		}
		e.Owner.Put(e.path(), full).ExpectError(http.StatusBadRequest, "INVALID_INPUT").String("error.message")
		_ = name
	}
	// One team per domain.
	other.Owner.Put("/api/teams/"+other.Owner.TeamID+"/sso", map[string]any{"issuer": e.idp.Issuer, "client_id": "x", "client_secret": "y",
		"allowed_domains": []string{"acme.example"}}).ExpectError(http.StatusConflict, "CONFLICT")

	e.Owner.Delete(e.path()).Expect(http.StatusNoContent)
	e.Owner.Delete(e.path()).ExpectError(http.StatusNotFound, "NOT_FOUND")
	for action, want := range map[string]int{"sso.updated": 2, "sso.deleted": 1} {
		if n := e.Env.QueryInt(`SELECT count(*) FROM audit_log WHERE action = $1 AND team_id = $2 AND NOT details::text LIKE '%'||$3||'%'`, action, e.Owner.TeamID, ssoSecret); n != want {
			t.Errorf("%d %s entries without the secret, want %d", n, action, want)
		}
	}
	e.Env.Anonymous().Get("/api/auth/sso/start?email=ann@acme.example").ExpectError(http.StatusNotFound, "NOT_FOUND")
}

func TestSSOSignInJustInTimeWithRoles(t *testing.T) {
	t.Parallel()
	e := newSSOEnv(t)
	e.configure(map[string]any{"default_role": "viewer", "groups_claim": "groups", "role_map": map[string]string{"crm-admins": "admin", "sales": "member"}})

	// The start redirect carries state, nonce and PKCE S256.
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).
		Get(e.Env.URL + "/api/auth/sso/start?email=ann@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	q := loc.Query()
	if res.StatusCode != http.StatusFound || !strings.HasPrefix(loc.String(), e.idp.Issuer) || q.Get("state") == "" || q.Get("nonce") == "" ||
		q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 || q.Get("client_id") != "contactbook" ||
		q.Get("redirect_uri") != apptest.PublicBaseURL+"/api/auth/sso/callback" || !strings.Contains(q.Get("scope"), "openid") {
		t.Fatalf("start: %d %s", res.StatusCode, loc)
	}
	if e.Env.QueryInt(`SELECT count(*) FROM sso_states WHERE team_id = $1`, e.Owner.TeamID) != 1 {
		t.Fatal("the state is not stored")
	}

	// A new person: the account is made, without a password, as a viewer.
	e.idp.SignInAs(oidctest.User{Email: "Zoe@Acme.example", Verified: true, Name: "Zoe Zed"})
	dest, cookies := e.signIn("zoe@acme.example")
	if dest != "/app/" || cookies["cb_session"] == "" {
		t.Fatalf("sign-in ended at %s with cookies %v", dest, cookies)
	}
	zoe := e.session(cookies)
	me := zoe("GET", "/api/me", nil).Expect(http.StatusOK)
	if !strings.EqualFold(me.String("data.user.email"), "zoe@acme.example") || me.String("data.user.name") != "Zoe Zed" || me.String("data.teams.0.role") != "viewer" {
		t.Fatalf("me: %s", me.Body)
	}
	// No password: a password login does not get in.
	e.Env.Anonymous().Post("/api/auth/login", map[string]string{"email": "zoe@acme.example", "password": ""}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	e.Env.Anonymous().Post("/api/auth/login", map[string]string{"email": "zoe@acme.example", "password": "anything at all"}).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")

	// The role follows the groups at each sign-in: the highest wins.
	e.idp.SignInAs(oidctest.User{Email: "zoe@acme.example", Verified: true, Name: "Zoe Zed", Groups: []string{"sales", "crm-admins"}})
	_, cookies = e.signIn("zoe@acme.example")
	if r := e.session(cookies)("GET", "/api/me", nil).Expect(http.StatusOK).String("data.teams.0.role"); r != "admin" {
		t.Fatalf("role %s, want admin", r)
	}
	e.idp.SignInAs(oidctest.User{Email: "zoe@acme.example", Verified: true, Groups: []string{"sales"}})
	_, cookies = e.signIn("zoe@acme.example")
	if r := e.session(cookies)("GET", "/api/me", nil).Expect(http.StatusOK).String("data.teams.0.role"); r != "member" {
		t.Fatalf("role %s, want member", r)
	}
	// An owner's role is never changed by single sign-on.
	ownerEmail := e.Owner.Email
	if _, err := e.Env.App.Pool.Exec(t.Context(), `UPDATE users SET email = 'boss@acme.example' WHERE id = $1`, e.Owner.ID); err != nil {
		t.Fatal(err)
	}
	e.idp.SignInAs(oidctest.User{Email: "boss@acme.example", Verified: true, Groups: []string{"sales"}})
	if dest, _ := e.signIn("boss@acme.example"); dest != "/app/" {
		t.Fatalf("owner sign-in: %s", dest)
	}
	if n := e.Env.QueryInt(`SELECT count(*) FROM team_members WHERE user_id = $1 AND role = 'owner'`, e.Owner.ID); n != 1 {
		t.Fatalf("the owner lost the role (%s)", ownerEmail)
	}

	// The audit log: member.joined via sso, sso.login with the role given.
	if n := e.Env.QueryInt(`SELECT count(*) FROM audit_log WHERE action = 'member.joined' AND details->>'via' = 'sso' AND details->>'role' = 'viewer'`); n != 1 {
		t.Errorf("%d member.joined entries via sso", n)
	}
	if n := e.Env.QueryInt(`SELECT count(*) FROM audit_log WHERE action = 'sso.login' AND details ? 'role'`); n != 4 {
		t.Errorf("%d sso.login entries, want 4", n)
	}
	if n := e.Env.QueryInt(`SELECT count(*) FROM audit_log WHERE action = 'sso.login' AND details->>'role' = 'owner'`); n != 1 {
		t.Errorf("the owner's sign-in does not record the role kept")
	}
	// Each completed sign-in used its state up (the one left is the
	// first start's, never completed).
	if n := e.Env.QueryInt(`SELECT count(*) FROM sso_states`); n != 1 {
		t.Errorf("%d states left after completed sign-ins, want 1", n)
	}
}

// Each way a provider's answer can be wrong ends on the login page with
// an error, and no session.
func TestSSOBadTokensEndWithoutSession(t *testing.T) {
	t.Parallel()
	e := newSSOEnv(t)
	e.configure(nil)
	for _, tc := range []struct {
		name  string
		fault oidctest.Fault
		user  oidctest.User
		code  string
	}{
		{"audience", oidctest.WrongAudience, oidctest.User{Email: "ann@acme.example", Verified: true}, "token"},
		{"issuer", oidctest.WrongIssuer, oidctest.User{Email: "ann@acme.example", Verified: true}, "token"},
		{"nonce", oidctest.WrongNonce, oidctest.User{Email: "ann@acme.example", Verified: true}, "token"},
		{"expiry", oidctest.Expired, oidctest.User{Email: "ann@acme.example", Verified: true}, "token"},
		{"key", oidctest.WrongKey, oidctest.User{Email: "ann@acme.example", Verified: true}, "token"},
		{"unverified email", oidctest.None, oidctest.User{Email: "ann@acme.example", Verified: false}, "email_unverified"},
		{"domain", oidctest.None, oidctest.User{Email: "ann@evil.example", Verified: true}, "domain"},
	} {
		e.idp.SetFault(tc.fault)
		e.idp.SignInAs(tc.user)
		dest, cookies := e.signIn("ann@acme.example")
		if dest != "/app/login?sso_error="+tc.code || cookies["cb_session"] != "" {
			t.Errorf("%s: ended at %s with cookies %v", tc.name, dest, cookies)
		}
	}
	if n := e.Env.QueryInt(`SELECT count(*) FROM users WHERE email LIKE 'ann@%'`); n != 0 {
		t.Errorf("%d accounts made by refused sign-ins", n)
	}
	if n := e.Env.QueryInt(`SELECT count(*) FROM audit_log WHERE action = 'sso.login'`); n != 0 {
		t.Errorf("%d sso.login entries for refused sign-ins", n)
	}
	e.idp.SetFault(oidctest.None)
	e.idp.SignInAs(oidctest.User{Email: "ann@acme.example", Verified: true})
	if dest, _ := e.signIn("ann@acme.example"); dest != "/app/" {
		t.Fatalf("a right sign-in ended at %s", dest)
	}

	// A state from another browser, an old one, or none at all.
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).
		Get(e.Env.URL + "/api/auth/sso/start?email=ann@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	state := loc.Query().Get("state")
	if dest, _ := e.browse(e.Env.URL+"/api/auth/sso/callback?code=x&state="+state, map[string]string{"cb_sso_state": "another"}); dest != "/app/login?sso_error=state" {
		t.Errorf("another browser's state: %s", dest)
	}
	if dest, _ := e.browse(e.Env.URL+"/api/auth/sso/callback?code=x&state="+state, map[string]string{"cb_sso_state": state}); dest != "/app/login?sso_error=exchange" {
		t.Errorf("a wrong code: %s", dest)
	}
	if dest, _ := e.browse(e.Env.URL+"/api/auth/sso/callback?code=x&state="+state, map[string]string{"cb_sso_state": state}); dest != "/app/login?sso_error=state" {
		t.Errorf("a used state: %s", dest)
	}
	res, _ = (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).
		Get(e.Env.URL + "/api/auth/sso/start?team_id=" + e.Owner.TeamID)
	res.Body.Close()
	loc, _ = url.Parse(res.Header.Get("Location"))
	state = loc.Query().Get("state")
	e.Env.Clock.Advance(11 * 60 * 1e9)
	if dest, _ := e.browse(e.Env.URL+"/api/auth/sso/callback?code=x&state="+state, map[string]string{"cb_sso_state": state}); dest != "/app/login?sso_error=state" {
		t.Errorf("a state older than 10 minutes: %s", dest)
	}
}

// enforce: the team's resources refuse sessions that did not come from
// its single sign-on, except owners'; keys are unaffected. Sessions of the
// team's single sign-on skip its two-factor requirement.
func TestSSOEnforceAndSecondFactor(t *testing.T) {
	t.Parallel()
	e := newSSOEnv(t)
	e.configure(map[string]any{"enforce": true})
	teamPath := "/api/teams/" + e.Owner.TeamID
	e.M.Get(teamPath).ExpectError(http.StatusForbidden, "SSO_REQUIRED")
	e.A.Get(teamPath+"/members").ExpectError(http.StatusForbidden, "SSO_REQUIRED")
	e.M.Get("/api/contacts").ExpectError(http.StatusForbidden, "SSO_REQUIRED")
	e.M.Get("/api/me").Expect(http.StatusOK) // not a team resource
	e.Owner.Get(teamPath).Expect(http.StatusOK)
	e.Key.Get("/api/v1/contacts").Expect(http.StatusOK)

	// The member signs in through the provider and gets in, with no
	// second factor although the team requires one.
	e.Owner.Patch(teamPath, map[string]any{"require_two_factor": true}).Expect(http.StatusOK)
	memberEmail := e.Member.Email
	if _, err := e.Env.App.Pool.Exec(t.Context(), `UPDATE users SET email = 'mia@acme.example' WHERE id = $1`, e.Member.ID); err != nil {
		t.Fatal(err)
	}
	e.idp.SignInAs(oidctest.User{Email: "mia@acme.example", Verified: true})
	dest, cookies := e.signIn("mia@acme.example")
	if dest != "/app/" {
		t.Fatalf("sign-in ended at %s (was %s)", dest, memberEmail)
	}
	mia := e.session(cookies)
	mia("GET", teamPath, nil).Expect(http.StatusOK)
	mia("GET", "/api/contacts", nil).Expect(http.StatusBadRequest) // no X-Book-ID: past the role check
	// Her password session is still refused.
	e.M.Get(teamPath).ExpectError(http.StatusForbidden, "SSO_REQUIRED")
	// A password session is held to the two-factor requirement, the
	// owner's too.
	e.Owner.Get(teamPath).ExpectError(http.StatusForbidden, "TWO_FACTOR_REQUIRED")
	// A team that does not enforce lets password sessions in again.
	if _, err := e.Env.App.Pool.Exec(t.Context(), `UPDATE teams SET require_two_factor = false WHERE id = $1`, e.Owner.TeamID); err != nil {
		t.Fatal(err)
	}
	e.configure(map[string]any{"enforce": false})
	e.M.Get(teamPath).Expect(http.StatusOK)
}
