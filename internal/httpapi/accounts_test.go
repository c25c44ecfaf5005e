package httpapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
)

func TestAuthSignupLoginMe(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	anon := env.Anonymous()

	r := anon.Post("/api/auth/signup", map[string]string{
		"email": "Ann@Example.com", "password": "s3cret-pass", "name": "Ann", "team_name": "Acme",
	}).Expect(http.StatusCreated)
	for _, p := range []string{"data.token", "data.expires_at", "data.user.id", "data.user.email", "data.user.name", "data.team.id", "data.team.name"} {
		if !r.Has(p) {
			t.Fatalf("signup answer lacks %s: %s", p, r.Body)
		}
	}
	teamID := r.String("data.team.id")
	if got := env.QueryInt(`SELECT count(*) FROM team_members WHERE team_id = $1 AND role = 'owner'`, teamID); got != 1 {
		t.Fatalf("owners = %d, want 1", got)
	}

	// The same email, in another case, is taken.
	anon.Post("/api/auth/signup", map[string]string{"email": "ann@example.COM", "password": "s3cret-pass", "name": "A", "team_name": "B"}).
		ExpectError(http.StatusConflict, "CONFLICT")
	for name, body := range map[string]map[string]string{
		"short password": {"email": "b@example.com", "password": "short", "name": "B", "team_name": "T"},
		"long password":  {"email": "b@example.com", "password": strings.Repeat("x", 73), "name": "B", "team_name": "T"},
		"bad email":      {"email": "not-an-email", "password": "long enough", "name": "B", "team_name": "T"},
		"no team":        {"email": "b@example.com", "password": "long enough", "name": "B"},
	} {
		t.Run(name, func(t *testing.T) {
			anon.Post("/api/auth/signup", body).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		})
	}

	login := anon.Post("/api/auth/login", map[string]string{"email": "ann@example.com", "password": "s3cret-pass"}).Expect(http.StatusOK)
	if login.String("data.token") == "" || login.String("data.expires_at") == "" {
		t.Fatalf("login answer: %s", login.Body)
	}
	wrongPass := anon.Post("/api/auth/login", map[string]string{"email": "ann@example.com", "password": "wrong-pass"}).
		ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	unknown := anon.Post("/api/auth/login", map[string]string{"email": "nobody@example.com", "password": "wrong-pass"}).
		ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	if wrongPass.String("error.message") != unknown.String("error.message") {
		t.Fatalf("login errors differ: %q vs %q", wrongPass.String("error.message"), unknown.String("error.message"))
	}

	me := env.Client(login.String("data.token")).Get("/api/me").Expect(http.StatusOK)
	if me.String("data.user.email") != "Ann@Example.com" || me.Len("data.teams") != 1 ||
		me.String("data.teams.0.role") != "owner" || me.String("data.teams.0.id") != teamID {
		t.Fatalf("me: %s", me.Body)
	}
	// The founding owner's membership is an event too.
	if n := env.QueryInt(`SELECT count(*) FROM events WHERE team_id = $1 AND type = 'member.joined'`, teamID); n != 1 {
		t.Fatalf("member.joined events = %d", n)
	}
}

func TestAuthTokensAndKeysAreKeptApart(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	ann := env.Signup("ann")
	key := ann.NewKey()
	book := ann.CreateBook("Clients")

	// No credentials, garbage, wrong scheme.
	env.Anonymous().Get("/api/me").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	env.Anonymous().Get("/api/v1/books").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	env.Client("garbage").Get("/api/me").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	env.Client("cbk_garbage").Get("/api/v1/books").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	env.Anonymous().Get("/api/me", "Authorization", "Basic "+ann.Token).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")

	// An API key on /api and a JWT on /api/v1 are refused.
	key.Get("/api/me").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	key.Get("/api/books").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	ann.Get("/api/v1/books").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	ann.Get("/api/v1/books/"+book).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")

	// Both work where they belong.
	key.Get("/api/v1/books").Expect(http.StatusOK)
	ann.Get("/api/books").Expect(http.StatusOK)
}

func signToken(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tokenClaims reads a JWT's claims without checking it.
func tokenClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAuthJWTTampering(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	ann := env.Signup("ann")
	now := env.Clock.Now()
	sid := tokenClaims(t, ann.Token)["sid"]
	valid := jwt.MapClaims{"sub": ann.ID, "sid": sid, "iss": "contactbook", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	secret := []byte("test-secret-0123456789abcdef")
	noSession := jwt.MapClaims{"sub": ann.ID, "iss": "contactbook", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	otherSession := jwt.MapClaims{"sub": ann.ID, "sid": uuid.NewString(), "iss": "contactbook", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}

	// Control: a token we sign the same way is accepted.
	env.Client(signToken(t, jwt.SigningMethodHS256, secret, valid)).Get("/api/me").Expect(http.StatusOK)

	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	payload, _ := json.Marshal(valid)
	algNone := header + "." + base64.RawURLEncoding.EncodeToString(payload) + "."

	// Flip one character of the signature of a real token.
	real := ann.Token
	flipped := real[:len(real)-2] + map[bool]string{true: "A", false: "B"}[real[len(real)-2] != 'A'] + real[len(real)-1:]

	expired := jwt.MapClaims{"sub": ann.ID, "iss": "contactbook", "iat": now.Add(-2 * time.Hour).Unix(), "exp": now.Add(-time.Hour).Unix()}
	noExp := jwt.MapClaims{"sub": ann.ID, "iss": "contactbook", "iat": now.Unix()}
	otherIss := jwt.MapClaims{"sub": ann.ID, "iss": "someone-else", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	badSub := jwt.MapClaims{"sub": "not-a-uuid", "iss": "contactbook", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}

	cases := map[string]string{
		"alg none":       algNone,
		"HS512":          signToken(t, jwt.SigningMethodHS512, secret, valid),
		"HS384":          signToken(t, jwt.SigningMethodHS384, secret, valid),
		"other key":      signToken(t, jwt.SigningMethodHS256, []byte("another-secret-0123456789"), valid),
		"flipped sig":    flipped,
		"expired":        signToken(t, jwt.SigningMethodHS256, secret, expired),
		"no exp":         signToken(t, jwt.SigningMethodHS256, secret, noExp),
		"other issuer":   signToken(t, jwt.SigningMethodHS256, secret, otherIss),
		"bad subject":    signToken(t, jwt.SigningMethodHS256, secret, badSub),
		"no session":     signToken(t, jwt.SigningMethodHS256, secret, noSession),
		"ended session":  signToken(t, jwt.SigningMethodHS256, secret, otherSession),
		"truncated":      real[:len(real)/2],
		"three dots":     "a.b.c",
		"empty segments": "..",
	}
	for name, tok := range cases {
		t.Run(name, func(t *testing.T) {
			env.Client(tok).Get("/api/me").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
		})
	}

	// Tokens expire with the (injected) clock.
	env.Clock.Advance(25 * time.Hour)
	ann.Get("/api/me").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
}

func TestTeamMembersAndRoles(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	admin := env.Join(owner, "admin", "admin")
	member := env.Join(owner, "member", "member")
	viewer := env.Join(owner, "viewer", "viewer")
	team := "/api/teams/" + owner.TeamID

	// Everyone in the team reads the team and its members.
	for _, u := range []*apptest.User{owner, admin, member, viewer} {
		r := u.Get(team).Expect(http.StatusOK)
		if r.String("data.campaign_addon") != "none" || !r.Has("data.trial_ends_at") {
			t.Fatalf("team: %s", r.Body)
		}
		if n := u.Get(team + "/members").Expect(http.StatusOK).Len("data"); n != 4 {
			t.Fatalf("members = %d", n)
		}
	}
	m := owner.Get(team + "/members").Expect(http.StatusOK)
	for _, p := range []string{"user_id", "email", "name", "role", "joined_at"} {
		if !m.Has("data.0." + p) {
			t.Fatalf("member lacks %s: %s", p, m.Body)
		}
	}

	// Only admins rename the team.
	member.Patch(team, map[string]string{"name": "X"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	if admin.Patch(team, map[string]string{"name": "Renamed"}).Expect(http.StatusOK).String("data.name") != "Renamed" {
		t.Fatal("rename did not stick")
	}
	admin.Patch(team, map[string]string{"name": ""}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")

	// Nobody is added by address any more: people join by accepting an
	// invitation (people_test.go).
	admin.Post(team+"/members", map[string]string{"email": member.Email, "role": "viewer"}).
		ExpectError(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
	carol := env.Signup("carol")
	env.AddMember(admin, carol, "viewer")
	if n := env.QueryInt(`SELECT count(*) FROM events WHERE team_id = $1 AND type = 'member.joined'`, owner.TeamID); n != 5 {
		t.Fatalf("member.joined events = %d, want 5", n)
	}

	// Changing roles.
	member.Patch(team+"/members/"+carol.ID, map[string]string{"role": "member"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	if admin.Patch(team+"/members/"+carol.ID, map[string]string{"role": "member"}).Expect(http.StatusOK).String("data.role") != "member" {
		t.Fatal("role not changed")
	}
	admin.Patch(team+"/members/"+owner.ID, map[string]string{"role": "member"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	owner.Patch(team+"/members/"+owner.ID, map[string]string{"role": "admin"}).ExpectError(http.StatusConflict, "CONFLICT")
	owner.Patch(team+"/members/"+viewer.ID, map[string]string{"role": "nope"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	owner.Patch(team+"/members/"+carol.ID+"0", map[string]string{"role": "viewer"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	owner.Patch(team+"/members/00000000-0000-0000-0000-000000000001", map[string]string{"role": "viewer"}).ExpectError(http.StatusNotFound, "NOT_FOUND")

	// Removing members: never the last owner.
	owner.Delete(team+"/members/"+owner.ID).ExpectError(http.StatusConflict, "CONFLICT")
	viewer.Delete(team+"/members/"+carol.ID).ExpectError(http.StatusForbidden, "FORBIDDEN")
	admin.Delete(team + "/members/" + carol.ID).Expect(http.StatusNoContent)
	admin.Delete(team+"/members/"+carol.ID).ExpectError(http.StatusNotFound, "NOT_FOUND")
	carol.Get(team).ExpectError(http.StatusNotFound, "NOT_FOUND")
	var payload string
	if err := env.App.Pool.QueryRow(context.Background(),
		`SELECT convert_from(body, 'UTF8') FROM events WHERE team_id = $1 AND type = 'member.removed'`, owner.TeamID).Scan(&payload); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(payload, carol.ID) || !strings.Contains(payload, `"role":"member"`) || !strings.Contains(payload, `"event":"member.removed"`) {
		t.Fatalf("member.removed payload: %s", payload)
	}

	// With a second owner, the first may step down.
	owner.Patch(team+"/members/"+admin.ID, map[string]string{"role": "owner"}).Expect(http.StatusOK)
	owner.Patch(team+"/members/"+owner.ID, map[string]string{"role": "admin"}).Expect(http.StatusOK)
	admin.Delete(team+"/members/"+admin.ID).ExpectError(http.StatusConflict, "CONFLICT")
}

func TestTeamLastOwnerUnderConcurrency(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	a := env.Signup("a")
	b := env.Join(a, "b", "owner")
	team := "/api/teams/" + a.TeamID
	// Both owners demote themselves at once: exactly one may succeed.
	results := make(chan int, 2)
	for _, u := range []*apptest.User{a, b} {
		go func() {
			results <- u.Patch(team+"/members/"+u.ID, map[string]string{"role": "admin"}).Status
		}()
	}
	got := []int{<-results, <-results}
	ok := 0
	for _, s := range got {
		if s == http.StatusOK {
			ok++
		}
	}
	if ok != 1 || env.QueryInt(`SELECT count(*) FROM team_members WHERE team_id = $1 AND role = 'owner'`, a.TeamID) != 1 {
		t.Fatalf("statuses %v; the team must keep exactly one owner", got)
	}
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	member := env.Join(owner, "member", "member")
	keys := fmt.Sprintf("/api/teams/%s/api-keys", owner.TeamID)

	member.Post(keys, map[string]string{"name": "x"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	member.Get(keys).ExpectError(http.StatusForbidden, "FORBIDDEN")
	owner.Post(keys, map[string]string{}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")

	r := owner.Post(keys, map[string]string{"name": "CI"}).Expect(http.StatusCreated)
	key := r.String("data.key")
	if !strings.HasPrefix(key, "cbk_") || len(key) < 4+43 {
		t.Fatalf("key %q", key)
	}
	if !strings.HasPrefix(key, r.String("data.api_key.prefix")) || r.String("data.api_key.name") != "CI" || !r.Has("data.api_key.last_used_at") {
		t.Fatalf("created: %s", r.Body)
	}
	// Stored only as a hash.
	if n := env.QueryInt(`SELECT count(*) FROM api_keys WHERE position($1::bytea in key_hash) > 0 OR prefix = $2`, []byte(key), key); n != 0 {
		t.Fatal("the key is stored in clear")
	}
	list := owner.Get(keys).Expect(http.StatusOK)
	if list.Len("data") != 1 || strings.Contains(string(list.Body), key) || list.Has("data.0.key") {
		t.Fatalf("list: %s", list.Body)
	}

	kc := env.Client(key)
	kc.Get("/api/v1/books").Expect(http.StatusOK)
	if env.QueryInt(`SELECT count(*) FROM api_keys WHERE last_used_at IS NOT NULL`) != 1 {
		t.Fatal("last_used_at not recorded")
	}

	id := r.String("data.api_key.id")
	member.Delete(keys+"/"+id).ExpectError(http.StatusForbidden, "FORBIDDEN")
	owner.Delete(keys + "/" + id).Expect(http.StatusNoContent)
	// Revocation takes effect at once.
	kc.Get("/api/v1/books").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	owner.Delete(keys+"/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
}

func TestAddonTrial(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	member := env.Join(owner, "member", "member")
	trial := fmt.Sprintf("/api/teams/%s/addons/campaigns/trial", owner.TeamID)

	member.Post(trial, nil).ExpectError(http.StatusForbidden, "FORBIDDEN")
	r := owner.Post(trial, nil).Expect(http.StatusOK)
	if r.String("data.campaign_addon") != "trial" {
		t.Fatalf("trial: %s", r.Body)
	}
	ends, err := time.Parse(time.RFC3339, r.String("data.trial_ends_at"))
	if err != nil || !ends.Equal(env.Clock.Now().Add(14*24*time.Hour)) {
		t.Fatalf("trial_ends_at %q (%v)", r.String("data.trial_ends_at"), err)
	}
	// Once per team.
	owner.Post(trial, nil).ExpectError(http.StatusConflict, "CONFLICT")
	// After 14 days the trial is over.
	env.Clock.Advance(14*24*time.Hour + time.Second)
	owner.Token = env.Anonymous().Post("/api/auth/login", map[string]string{"email": owner.Email, "password": "correct horse battery"}).
		Expect(http.StatusOK).String("data.token")
	if got := owner.Get("/api/teams/" + owner.TeamID).Expect(http.StatusOK).String("data.campaign_addon"); got != "none" {
		t.Fatalf("after the trial: %q", got)
	}
	owner.Post(trial, nil).ExpectError(http.StatusConflict, "CONFLICT")
}

func TestCrossTeamAccountsAreRefused(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	a := env.Signup("a")
	b := env.Signup("b")
	bKey := b.Post("/api/teams/"+b.TeamID+"/api-keys", map[string]string{"name": "k"}).Expect(http.StatusCreated).String("data.api_key.id")
	other := "/api/teams/" + b.TeamID
	a.Get(other).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Patch(other, map[string]string{"name": "pwned"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Get(other+"/members").ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Post(other+"/invitations", map[string]string{"email": a.Email, "role": "owner"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Get(other+"/invitations").ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Patch(other+"/members/"+b.ID, map[string]string{"role": "viewer"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Delete(other+"/members/"+b.ID).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Get(other+"/api-keys").ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Post(other+"/api-keys", map[string]string{"name": "x"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Delete(other+"/api-keys/"+bKey).ExpectError(http.StatusNotFound, "NOT_FOUND")
	a.Post(other+"/addons/campaigns/trial", nil).ExpectError(http.StatusNotFound, "NOT_FOUND")
	// Team A cannot revoke B's key through its own team either.
	a.Delete("/api/teams/"+a.TeamID+"/api-keys/"+bKey).ExpectError(http.StatusNotFound, "NOT_FOUND")
	if env.QueryInt(`SELECT count(*) FROM api_keys WHERE id = $1`, bKey) != 1 {
		t.Fatal("B's key is gone")
	}
}
