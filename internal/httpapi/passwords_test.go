package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/contactbook/contactbook/internal/apptest"
)

// TestEveryAllowedPasswordSignsUpAndLogsIn: the rules count characters
// (8 to 72), and a character may take up to 4 bytes.
func TestEveryAllowedPasswordSignsUpAndLogsIn(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	anon := env.Anonymous()
	for name, pw := range map[string]string{
		"40 accented": strings.Repeat("é", 40),
		"72 accented": strings.Repeat("ü", 72),
		"72 emoji":    strings.Repeat("\U0001F510", 72),
		"8 ascii":     "12345678",
	} {
		email := env.Unique("pw") + "@example.com"
		anon.Post("/api/auth/signup", map[string]string{"email": email, "password": pw, "name": name, "team_name": name}).
			Expect(http.StatusCreated)
		anon.Post("/api/auth/login", map[string]string{"email": email, "password": pw}).Expect(http.StatusOK)
		// A password that differs past bcrypt's 72 bytes is still wrong.
		r := []rune(pw)
		r[len(r)-1] = 'x'
		anon.Post("/api/auth/login", map[string]string{"email": email, "password": string(r)}).
			ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	}
	anon.Post("/api/auth/signup", map[string]string{"email": "long@example.com", "password": strings.Repeat("é", 73), "name": "N", "team_name": "T"}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	anon.Post("/api/auth/signup", map[string]string{"email": "short@example.com", "password": strings.Repeat("\U0001F510", 7), "name": "N", "team_name": "T"}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")

	// An account whose hash is plain bcrypt (as stored before the
	// pre-hash) still logs in.
	u := env.Signup("old")
	old, err := bcrypt.GenerateFromPassword([]byte("an old password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.Pool.Exec(context.Background(), `UPDATE users SET password_hash = $2 WHERE id = $1`, u.ID, string(old)); err != nil {
		t.Fatal(err)
	}
	anon.Post("/api/auth/login", map[string]string{"email": u.Email, "password": "an old password"}).Expect(http.StatusOK)
	anon.Post("/api/auth/login", map[string]string{"email": u.Email, "password": "an old passworD"}).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	expectNoErrorLogged(t, env)
}
