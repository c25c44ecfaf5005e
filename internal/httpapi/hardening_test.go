package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
)

// A right password is not a failure: four wrong second-step codes after
// it never lock the account, and the right code still signs in.
func TestLoginThrottleCountsFailuresOnly(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
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
	env := apptest.New(t)
	ann := env.Signup("ann")
	for range 5 {
		ann.Post("/api/auth/password", map[string]string{"current_password": "wrong password", "new_password": "a new password"}).
			ExpectError(http.StatusForbidden, "FORBIDDEN")
	}
	checkRetryAfter(t, ann.Post("/api/auth/password", map[string]string{"current_password": password, "new_password": "a new password"}))
	checkRetryAfter(t, env.Anonymous().Post("/api/auth/login", map[string]string{"email": ann.Email, "password": password}))
}
