package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
	dashboard "github.com/contactbook/contactbook/web/app"
)

// get asks the service's own handler, so deep app routes (which the
// contract's router cannot describe) are checked too.
func get(t *testing.T, h http.Handler, path string, headers ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, r *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDashboardServing checks how /app/ is served: the redirects, index.html
// for every app route with no-cache, hashed assets cached for a year and
// sent gzip-compressed when accepted, the strict policy, and 404 for a
// missing file.
func TestDashboardServing(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	h := env.App.Handler
	files := dashboard.Files()
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		t.Fatal(err)
	}

	if r := get(t, h, "/"); r.StatusCode != http.StatusFound || r.Header.Get("Location") != "/app/" {
		t.Errorf("GET / = %d to %q, want 302 to /app/", r.StatusCode, r.Header.Get("Location"))
	}
	if r := get(t, h, "/app"); r.StatusCode != http.StatusMovedPermanently || r.Header.Get("Location") != "/app/" {
		t.Errorf("GET /app = %d to %q, want 301 to /app/", r.StatusCode, r.Header.Get("Location"))
	}

	for _, path := range []string{"/app/", "/app/login", "/app/books/3d9b6f1e-2c4a-4b8e-9f07-6a1c5e8d2b94/contacts", "/app/contacts/x/edit"} {
		r := get(t, h, path)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d", path, r.StatusCode)
		}
		if !bytes.Equal(body(t, r), index) {
			t.Errorf("GET %s is not index.html", path)
		}
		if cc := r.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("GET %s Cache-Control = %q, want no-cache", path, cc)
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("GET %s Content-Type = %q", path, ct)
		}
		csp := r.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s policy %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") {
			t.Errorf("policy allows inline code: %q", csp)
		}
	}

	// The entry script index.html loads.
	m := regexp.MustCompile(`src="/app/(assets/[^"]+\.js)"`).FindSubmatch(index)
	if m == nil {
		t.Fatalf("index.html loads no script: %s", index)
	}
	script := string(m[1])
	raw, err := fs.ReadFile(files, script)
	if err != nil {
		t.Fatal(err)
	}
	r := get(t, h, "/app/"+script, "Accept-Encoding", "br, gzip;q=0.8")
	if r.StatusCode != http.StatusOK || r.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("GET %s with gzip = %d, encoding %q", script, r.StatusCode, r.Header.Get("Content-Encoding"))
	}
	if cc := r.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Errorf("asset Cache-Control = %q", cc)
	}
	if ct := r.Header.Get("Content-Type"); !strings.Contains(ct, "javascript") {
		t.Errorf("asset Content-Type = %q", ct)
	}
	if !strings.Contains(r.Header.Get("Vary"), "Accept-Encoding") {
		t.Error("asset answer does not vary on Accept-Encoding")
	}
	zr, err := gzip.NewReader(bytes.NewReader(body(t, r)))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, raw) {
		t.Errorf("gzip answer does not unpack to the asset (err %v)", err)
	}
	etag := r.Header.Get("ETag")
	if r := get(t, h, "/app/"+script, "Accept-Encoding", "gzip", "If-None-Match", etag); r.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation with the ETag = %d, want 304", r.StatusCode)
	}

	for _, ae := range []string{"", "identity", "gzip;q=0"} {
		r := get(t, h, "/app/"+script, "Accept-Encoding", ae)
		if r.Header.Get("Content-Encoding") != "" || !bytes.Equal(body(t, r), raw) {
			t.Errorf("Accept-Encoding %q: got encoding %q, want the plain asset", ae, r.Header.Get("Content-Encoding"))
		}
	}

	// Through the contract-checked server: a missing file is the JSON 404.
	env.Anonymous().Get("/app/assets/missing-0000.js").ExpectError(http.StatusNotFound, "NOT_FOUND")
	env.Anonymous().Get("/app/login").Expect(http.StatusOK)
}
