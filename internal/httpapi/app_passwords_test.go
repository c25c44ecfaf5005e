package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
)

func TestAppPasswordEndpoints(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	ann, bob := env.Signup("ann"), env.Signup("bob")
	ann.Post("/api/auth/app-passwords", map[string]any{"name": ""}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	r := ann.Post("/api/auth/app-passwords", map[string]any{"name": "iPhone"}).Expect(http.StatusCreated)
	id, pw := r.String("data.id"), r.String("data.password")
	if r.String("data.name") != "iPhone" || len(pw) != 23 || r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %s", r.Body)
	}
	list := ann.Get("/api/auth/app-passwords").Expect(http.StatusOK)
	if list.Len("data") != 1 || list.String("data.0.id") != id || list.Has("data.0.password") || strings.Contains(string(list.Body), pw) {
		t.Fatalf("list: %s", list.Body)
	}
	if list.Value("data.0.last_used_at") != nil {
		t.Fatalf("last_used_at before any use: %s", list.Body)
	}
	// Another account neither sees nor revokes it.
	if bob.Get("/api/auth/app-passwords").Expect(http.StatusOK).Len("data") != 0 {
		t.Fatal("bob sees ann's app passwords")
	}
	bob.Delete("/api/auth/app-passwords/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
	ann.Delete("/api/auth/app-passwords/not-a-uuid").ExpectError(http.StatusNotFound, "NOT_FOUND")
	env.Anonymous().Get("/api/auth/app-passwords").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	ann.NewKey().Get("/api/auth/app-passwords").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")

	ann.Delete("/api/auth/app-passwords/" + id).Expect(http.StatusNoContent)
	if ann.Get("/api/auth/app-passwords").Expect(http.StatusOK).Len("data") != 0 {
		t.Fatal("revoked app password still listed")
	}
	ann.Delete("/api/auth/app-passwords/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
}
