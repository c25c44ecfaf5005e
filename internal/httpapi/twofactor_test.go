package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/auth"
)

const password = "correct horse battery"

// turnOn2FA sets up and enables two-factor sign-in for u and returns the
// secret and the recovery codes. The clock then moves to the next step,
// so that the next code is not the one enabling used.
func turnOn2FA(t *testing.T, env *apptest.Env, u *apptest.User) (string, []string) {
	t.Helper()
	secret := u.Post("/api/auth/2fa/setup", nil).Expect(http.StatusOK).String("data.secret")
	code := totp(t, env, secret)
	var codes []string
	u.Post("/api/auth/2fa/enable", map[string]string{"code": code}).Expect(http.StatusOK).Decode("data.recovery_codes", &codes)
	env.Clock.Advance(30 * time.Second)
	return secret, codes
}

// totp is the current code of secret on env's clock.
func totp(t *testing.T, env *apptest.Env, secret string) string {
	t.Helper()
	code, err := auth.TOTPCode(secret, env.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// mfaToken logs in with the password and returns the second step's token.
func mfaToken(t *testing.T, env *apptest.Env, email string) string {
	t.Helper()
	r := env.Anonymous().Post("/api/auth/login", map[string]string{"email": email, "password": password}).Expect(http.StatusOK)
	if !r.Bool("data.mfa_required") || r.Has("data.token") {
		t.Fatalf("login of an account with 2FA: %s", r.Body)
	}
	return r.String("data.mfa_token")
}

func secondStep(env *apptest.Env, token, field, value string) *apptest.Response {
	return env.Anonymous().Post("/api/auth/login/2fa", map[string]string{"mfa_token": token, field: value})
}

func TestTwoFactorSignIn(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	ann := env.Signup("ann")
	if ann.Get("/api/me").Expect(http.StatusOK).Bool("data.user.two_factor_enabled") {
		t.Fatal("two_factor_enabled before setup")
	}
	// Setting up is pending: logins stay one step until a code enables it.
	r := ann.Post("/api/auth/2fa/setup", nil).Expect(http.StatusOK)
	secret := r.String("data.secret")
	if !strings.HasPrefix(r.String("data.otpauth_url"), "otpauth://totp/") || !strings.Contains(r.String("data.otpauth_url"), "secret="+secret) ||
		!strings.HasPrefix(r.String("data.qr_code"), "data:image/png;base64,") {
		t.Fatalf("setup: %s", r.Body)
	}
	env.Anonymous().Post("/api/auth/login", map[string]string{"email": ann.Email, "password": password}).Expect(http.StatusOK).String("data.token")
	// A second setup replaces the pending secret: the first one's code no
	// longer enables.
	secret2 := ann.Post("/api/auth/2fa/setup", nil).Expect(http.StatusOK).String("data.secret")
	wrong := ann.Post("/api/auth/2fa/enable", map[string]string{"code": totp(t, env, secret)}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if !strings.Contains(string(wrong.Body), `"field":"code"`) {
		t.Fatalf("a wrong code does not name the field: %s", wrong.Body)
	}
	var codes []string
	ann.Post("/api/auth/2fa/enable", map[string]string{"code": totp(t, env, secret2)}).Expect(http.StatusOK).Decode("data.recovery_codes", &codes)
	if len(codes) != 10 {
		t.Fatalf("%d recovery codes, want 10", len(codes))
	}
	if !ann.Get("/api/me").Expect(http.StatusOK).Bool("data.user.two_factor_enabled") {
		t.Fatal("two_factor_enabled is false after enabling")
	}
	if n := env.QueryInt(`SELECT count(*) FROM recovery_codes WHERE code_hash = $1`, []byte(codes[0])); n != 0 {
		t.Fatal("a recovery code is stored in clear")
	}

	// The password alone starts no session; the code that enabled it is
	// used (same time step), the next step's code signs in.
	before := env.QueryInt(`SELECT count(*) FROM sessions`)
	token := mfaToken(t, env, ann.Email)
	if env.QueryInt(`SELECT count(*) FROM sessions`) != before {
		t.Fatal("the first step started a session")
	}
	secondStep(env, token, "code", totp(t, env, secret2)).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	env.Clock.Advance(30 * time.Second)
	code := totp(t, env, secret2)
	sess := secondStep(env, token, "code", code).Expect(http.StatusOK).String("data.token")
	env.Client(sess).Get("/api/me").Expect(http.StatusOK)
	// The same code again, with a new challenge: refused (replay).
	secondStep(env, mfaToken(t, env, ann.Email), "code", code).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")

	// A reset leaves 2FA on: its confirm answers a challenge.
	resetToken, hash, err := auth.NewLinkToken()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.Pool.Exec(context.Background(), `INSERT INTO password_resets (user_id, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		ann.ID, hash, env.Clock.Now(), env.Clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	rr := env.Anonymous().Post("/api/auth/password-reset/confirm", map[string]string{"token": resetToken, "password": password}).Expect(http.StatusOK)
	if !rr.Bool("data.mfa_required") || rr.Has("data.token") {
		t.Fatalf("reset of an account with 2FA: %s", rr.Body)
	}
	env.Clock.Advance(30 * time.Second)
	// The reset ended every earlier session.
	me := env.Client(secondStep(env, rr.String("data.mfa_token"), "code", totp(t, env, secret2)).Expect(http.StatusOK).String("data.token"))
	env.Client(sess).Get("/api/me").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")

	// Turning it off takes the password and a code; wrong is FORBIDDEN.
	env.Clock.Advance(30 * time.Second)
	me.Post("/api/auth/2fa/disable", map[string]string{"password": "wrong password", "code": totp(t, env, secret2)}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	me.Post("/api/auth/2fa/disable", map[string]string{"password": password, "code": "000000"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	me.Post("/api/auth/2fa/disable", map[string]string{"password": password, "recovery_code": codes[3]}).Expect(http.StatusNoContent)
	env.Anonymous().Post("/api/auth/login", map[string]string{"email": ann.Email, "password": password}).Expect(http.StatusOK).String("data.token")
}

func TestRecoveryCodeWorksOnce(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	ann := env.Signup("ann")
	_, codes := turnOn2FA(t, env, ann)
	// Typed with capitals and without dashes, it is the same code.
	typed := strings.ToUpper(strings.ReplaceAll(codes[0], "-", ""))
	secondStep(env, mfaToken(t, env, ann.Email), "recovery_code", typed).Expect(http.StatusOK)
	secondStep(env, mfaToken(t, env, ann.Email), "recovery_code", codes[0]).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	secondStep(env, mfaToken(t, env, ann.Email), "recovery_code", codes[1]).Expect(http.StatusOK)
	// Another account's codes are not this one's.
	bob := env.Signup("bob")
	_, bobCodes := turnOn2FA(t, env, bob)
	secondStep(env, mfaToken(t, env, ann.Email), "recovery_code", bobCodes[2]).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
}

func TestMFATokenWorksOnceAndExpires(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	ann := env.Signup("ann")
	secret, codes := turnOn2FA(t, env, ann)
	token := mfaToken(t, env, ann.Email)
	// A wrong code does not use it up.
	secondStep(env, token, "code", "000000").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	secondStep(env, token, "code", totp(t, env, secret)).Expect(http.StatusOK)
	// A success does.
	secondStep(env, token, "recovery_code", codes[0]).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	// It lives 5 minutes.
	late := mfaToken(t, env, ann.Email)
	env.Clock.Advance(5*time.Minute + time.Second)
	secondStep(env, late, "code", totp(t, env, secret)).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	secondStep(env, "made-up", "recovery_code", codes[1]).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
}

func TestTOTPGuessesAreThrottled(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	ann := env.Signup("ann")
	secret, _ := turnOn2FA(t, env, ann)
	token := mfaToken(t, env, ann.Email)
	// The right password is not a failure: five wrong codes reach the
	// limit of five.
	for i := range 5 {
		secondStep(env, token, "code", []string{"111111", "222222", "333333", "444444", "555555"}[i]).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	}
	checkRetryAfter(t, secondStep(env, token, "code", "666666"))
	// Right or not, and with a fresh challenge too.
	checkRetryAfter(t, secondStep(env, token, "code", totp(t, env, secret)))
	checkRetryAfter(t, env.Anonymous().Post("/api/auth/login", map[string]string{"email": ann.Email, "password": password}))
	// After the window, the right code signs in and clears the count.
	env.Clock.Advance(15 * time.Minute)
	token = mfaToken(t, env, ann.Email)
	secondStep(env, token, "code", totp(t, env, secret)).Expect(http.StatusOK)
	if n := env.QueryInt(`SELECT count(*) FROM auth_throttles WHERE key = $1`, "login:email:"+ann.Email); n != 0 {
		t.Fatalf("the email's count survived a completed login")
	}
}

func TestSessionsListAndEnd(t *testing.T) {
	t.Parallel()
	a := apptest.Setup(t, apptest.Options{Bare: true, Env: map[string]string{"TRUST_PROXY": "true"}}).Env
	b := apptest.Setup(t, apptest.Options{Bare: true, DatabaseURL: a.DBURL}).Env
	ann := a.Signup("ann")
	other := b.Client(a.Anonymous().Post("/api/auth/login", map[string]string{"email": ann.Email, "password": password},
		"X-Forwarded-For", "198.51.100.4", "User-Agent", "TestBrowser/1.0").Expect(http.StatusOK).String("data.token"))
	other.Get("/api/me").Expect(http.StatusOK) // b has seen the session open

	var list []struct {
		ID        string `json:"id"`
		IP        string `json:"ip"`
		UserAgent string `json:"user_agent"`
		Current   bool   `json:"current"`
	}
	ann.Get("/api/auth/sessions").Expect(http.StatusOK).Decode("data", &list)
	if len(list) != 2 {
		t.Fatalf("%d sessions, want 2", len(list))
	}
	var otherID string
	for _, s := range list {
		if !s.Current {
			otherID = s.ID
			if s.IP != "198.51.100.4" || s.UserAgent != "TestBrowser/1.0" {
				t.Fatalf("other session: %+v", s)
			}
		}
	}
	if otherID == "" {
		t.Fatalf("no session other than the current one: %+v", list)
	}
	// Another user cannot end it.
	bob := a.Signup("bob")
	bob.Delete("/api/auth/sessions/"+otherID).ExpectError(http.StatusNotFound, "NOT_FOUND")
	ann.Delete("/api/auth/sessions/" + otherID).Expect(http.StatusNoContent)
	waitRefused(t, other)
	ann.Get("/api/me").Expect(http.StatusOK)
	if n := ann.Get("/api/auth/sessions").Expect(http.StatusOK).Len("data"); n != 1 {
		t.Fatalf("%d sessions after ending one, want 1", n)
	}
}

func TestTeamRequiresTwoFactor(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	admin := env.Join(owner, "admin", "admin")
	member := env.Join(owner, "member", "member")
	bookID := owner.CreateBook("Leads")
	team := "/api/teams/" + owner.TeamID

	admin.Patch(team, map[string]bool{"require_two_factor": true}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	// An owner without two-factor sign-in may require it: they are held
	// like everyone else until they turn it on, which stays open to them.
	if !owner.Patch(team, map[string]bool{"require_two_factor": true}).Expect(http.StatusOK).Bool("data.require_two_factor") {
		t.Fatal("require_two_factor not set")
	}
	owner.Get(team).ExpectError(http.StatusForbidden, "TWO_FACTOR_REQUIRED")
	turnOn2FA(t, env, owner)
	owner.Get(team).Expect(http.StatusOK)

	for _, path := range []string{team, team + "/members", "/api/books?team_id=" + owner.TeamID, "/api/books/" + bookID} {
		member.Get(path).ExpectError(http.StatusForbidden, "TWO_FACTOR_REQUIRED")
	}
	member.InBook(bookID).Get("/api/contacts").ExpectError(http.StatusForbidden, "TWO_FACTOR_REQUIRED")
	// What the member needs to turn it on keeps working.
	member.Get("/api/me").Expect(http.StatusOK)
	member.Get("/api/auth/sessions").Expect(http.StatusOK)
	turnOn2FA(t, env, member)
	member.Get("/api/books/" + bookID).Expect(http.StatusOK)
	owner.Get("/api/books/" + bookID).Expect(http.StatusOK)
	// API keys have no second factor to ask for.
	key := owner.NewKey()
	key.InBook(bookID).Get("/api/v1/contacts").Expect(http.StatusOK)

	owner.Patch(team, map[string]bool{"require_two_factor": false}).Expect(http.StatusOK)
	admin.Get(team).Expect(http.StatusOK)
	var actions []string
	for _, e := range owner.Get(team + "/audit-log?action=security.2fa_required").Expect(http.StatusOK).Value("data").([]any) {
		actions = append(actions, e.(map[string]any)["action"].(string))
	}
	if len(actions) != 2 {
		t.Fatalf("security.2fa_required entries: %v", actions)
	}
}
