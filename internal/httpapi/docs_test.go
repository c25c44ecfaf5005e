package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/httpapi/openapi"
)

// TestDocsServesTheDocument checks GET /api/openapi.json: public, JSON,
// exactly the embedded document, revalidated by ETag.
func TestDocsServesTheDocument(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	r := env.Anonymous().Get("/api/openapi.json").Expect(http.StatusOK)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if !bytes.Equal(r.Body, openapi.Document()) {
		t.Errorf("body is not the embedded document")
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Paths["/api/v1/contacts"]["get"] == nil || doc.Paths["/api/openapi.json"]["get"] == nil {
		t.Errorf("unexpected document: openapi %q, %d paths", doc.OpenAPI, len(doc.Paths))
	}
	etag := r.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	env.Anonymous().Get("/api/openapi.json", "If-None-Match", etag).Expect(http.StatusNotModified)

	// Credentials are not needed, and a wrong one changes nothing.
	env.Client("not-a-token").Get("/api/openapi.json").Expect(http.StatusOK)
}

var externalRef = regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:)?//`)

// TestDocsPage checks GET /docs: public HTML that loads nothing from
// elsewhere, under a policy that forbids it.
func TestDocsPage(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	r := env.Anonymous().Get("/docs").Expect(http.StatusOK)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type = %q, want text/html", ct)
	}
	body := string(r.Body)
	if !strings.Contains(body, "<title>contactbook API reference</title>") || !strings.Contains(body, `fetch("/api/openapi.json"`) {
		t.Errorf("page does not look like the reference page: %.200s", body)
	}
	if m := externalRef.FindString(body); m != "" {
		t.Errorf("page references an external asset: %q", m)
	}
	if strings.Contains(body, `src="http://`) || strings.Contains(body, `src="https://`) {
		t.Errorf("page has an http(s) src")
	}
	csp := r.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "connect-src 'self'", "script-src 'sha256-", "style-src 'sha256-"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("Content-Security-Policy allows unsafe-inline: %q", csp)
	}
	// The page's data source answers at the path the page fetches.
	env.Anonymous().Get("/api/openapi.json").Expect(http.StatusOK)
}
