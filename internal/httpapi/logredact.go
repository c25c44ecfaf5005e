package httpapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"
)

// redacted stands for a secret in a logged path or query.
const redacted = "REDACTED"

// secretParams are the path parameters and query keys that carry a
// secret: invitation, reset, email-confirmation, unsubscribe and
// preference tokens, second-step tokens, and the code and state of a
// single sign-on return. Logs (and whoever reads them) never get them.
var secretParams = map[string]bool{
	"token":     true,
	"mfa_token": true,
	"code":      true,
	"state":     true,
	"key":       true,
	"secret":    true,
	"password":  true,
	"signature": true,
	"sig":       true,
}

// loggedPath is r's path with the values of secret path parameters
// replaced (GET /api/invitations/{token} of older emails).
func loggedPath(r *http.Request) string {
	p := r.URL.Path
	rc := chi.RouteContext(r.Context())
	if rc == nil {
		return p
	}
	for i, k := range rc.URLParams.Keys {
		if secretParams[k] && i < len(rc.URLParams.Values) && rc.URLParams.Values[i] != "" {
			p = strings.ReplaceAll(p, rc.URLParams.Values[i], redacted)
		}
	}
	return p
}

// loggedQuery is r's query with the values of secret keys replaced ("" for
// none). A query that does not parse is not logged: it cannot say where
// its secrets are.
func loggedQuery(r *http.Request) string {
	if r.URL.RawQuery == "" {
		return ""
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "(unparseable)"
	}
	for k, vs := range q {
		if secretParams[strings.ToLower(k)] {
			for i := range vs {
				vs[i] = redacted
			}
		}
	}
	return q.Encode()
}
