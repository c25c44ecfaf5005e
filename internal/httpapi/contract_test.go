package httpapi_test

import (
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/contactbook/contactbook/internal/apptest"
)

// TestContractCoversEveryRoute fails when the router has a route the OpenAPI
// document lacks, or the document describes one the router does not serve.
func TestContractCoversEveryRoute(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	routes, ok := env.App.Handler.(chi.Routes)
	if !ok {
		t.Fatalf("the handler is a %T, not a chi router", env.App.Handler)
	}
	served := map[string]bool{}
	err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		route = strings.TrimSuffix(strings.ReplaceAll(route, "/*/", "/"), "/")
		// A trailing wildcard serves every path below it; the document names it {path}.
		if strings.HasSuffix(route, "/*") {
			route = strings.TrimSuffix(route, "*") + "{path}"
		}
		if route == "" {
			route = "/"
		}
		served[method+" "+normalizeParams(route)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	docRoutes, err := apptest.DocumentedRoutes()
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, r := range docRoutes {
		documented[normalizeParams(r)] = true
	}
	var missing, extra []string
	for r := range served {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for r := range documented {
		if !served[r] {
			extra = append(extra, r)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes the OpenAPI document lacks:\n  %s", strings.Join(missing, "\n  "))
	}
	if len(extra) > 0 {
		t.Errorf("documented routes the router does not serve:\n  %s", strings.Join(extra, "\n  "))
	}
}

var paramName = regexp.MustCompile(`\{[^}]+\}`)

// normalizeParams names every path parameter {} so that /books/{id} and
// /books/{book_id} compare equal.
func normalizeParams(route string) string { return paramName.ReplaceAllString(route, "{}") }
