package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"time"

	"github.com/contactbook/contactbook/internal/httpapi/openapi"
)

// openAPIDocument and docsPage serve the API's description, public like
// the API itself: the OpenAPI document and the reference page that renders
// it. They sit on the root router, outside the authenticated /api group.
func openAPIDocument() http.HandlerFunc {
	return serveEmbedded(openapi.Document(), "application/json; charset=utf-8", "")
}

func docsPage() http.HandlerFunc {
	page := openapi.DocsPage()
	return serveEmbedded(page, "text/html; charset=utf-8", docsPolicy(page))
}

// serveEmbedded answers a fixed body. The ETag is the body's hash, so
// browsers revalidate cheaply (304) and never keep a stale document after
// a deploy.
func serveEmbedded(body []byte, contentType, csp string) http.HandlerFunc {
	sum := sha256.Sum256(body)
	etag := fmt.Sprintf(`"%x"`, sum[:12])
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", contentType)
		h.Set("ETag", etag)
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		if csp != "" {
			h.Set("Content-Security-Policy", csp)
			h.Set("Referrer-Policy", "no-referrer")
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	}
}

// docsPolicy is the page's Content-Security-Policy: nothing may load from
// anywhere but the page's own inline script and style (allowed by hash,
// not by 'unsafe-inline') and the document fetched from this origin.
func docsPolicy(page []byte) string {
	return "default-src 'none'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'" +
		"; script-src " + inlineHash(page, "<script>", "</script>") +
		"; style-src " + inlineHash(page, "<style>", "</style>")
}

// inlineHash is the CSP source of the page's one inline element between
// open and close, or 'none' when there is none.
func inlineHash(page []byte, open, close string) string {
	_, rest, ok := bytes.Cut(page, []byte(open))
	if !ok {
		return "'none'"
	}
	body, _, ok := bytes.Cut(rest, []byte(close))
	if !ok {
		return "'none'"
	}
	sum := sha256.Sum256(body)
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}
