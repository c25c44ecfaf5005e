package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
)

// securityHeaders sets what every answer carries: no content sniffing, no
// framing by any page (the dashboard's and the preview's own policies,
// set by their handlers, replace this one; the preview may be framed by
// the app), no referrer beyond this origin, since tokens travel in some
// URLs, and HSTS when the service is served over https.
func (s *Server) securityHeaders(next http.Handler) http.Handler {
	// The values are built once and shared by every answer: each slice's
	// length is its capacity, so an Add elsewhere copies it, never
	// changes it.
	set := http.Header{
		"X-Content-Type-Options":  {"nosniff"},
		"Content-Security-Policy": {"frame-ancestors 'none'"},
		"X-Frame-Options":         {"DENY"},
		"Referrer-Policy":         {"same-origin"},
	}
	if s.secureCookies {
		set["Strict-Transport-Security"] = []string{"max-age=31536000; includeSubDomains"}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for k, v := range set {
			h[k] = v
		}
		next.ServeHTTP(w, r)
	})
}

// withOrigin resolves the client's address (see clientIP) and keeps it
// with the User-Agent in the request context, where audit entries and new
// sessions find it.
func (s *Server) withOrigin(next http.Handler) http.Handler {
	resolve := s.clientIP()
	return resolve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip, _ := clientIPKey(r)
		ctx := audit.WithOrigin(r.Context(), audit.Origin{IP: ip, UserAgent: r.UserAgent()})
		next.ServeHTTP(w, r.WithContext(ctx))
	}))
}

// keyPolicy applies what an API key's settings ask of every /api/v1
// request after authentication: a read key may only GET and HEAD, and the
// key's requests a minute are limited (RateLimit-* headers on every
// answer; 429 with Retry-After past the limit).
func (s *Server) keyPolicy(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, err := auth.FromContext(r.Context())
		if err != nil {
			writeError(w, r, s.log, err)
			return
		}
		// The limit is counted first: a refused request is a request too,
		// and its answer carries the headers like every other.
		if s.keyLimits.Enabled() {
			d, err := s.keyLimits.Allow(r.Context(), a.KeyID.String())
			if err != nil {
				// The shared counter is out of reach: the request goes
				// through rather than the API going down with it.
				s.log.WarnContext(r.Context(), "api key rate limit unavailable", "err", err)
			} else {
				reset := strconv.Itoa(int((d.Reset + time.Second - 1) / time.Second))
				h := w.Header()
				h.Set("RateLimit-Limit", strconv.Itoa(d.Limit))
				h.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
				h.Set("RateLimit-Reset", reset)
				if !d.Allowed {
					h.Set("Retry-After", reset)
					writeError(w, r, s.log, apperr.New(apperr.RateLimited,
						"This API key has made %d requests this minute, its limit; wait (see Retry-After) and try again.", d.Limit))
					return
				}
			}
		}
		if a.ReadOnly() && r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeError(w, r, s.log, apperr.Forbiddenf("This API key may only read (GET, HEAD); use a key of scope full to change data."))
			return
		}
		next.ServeHTTP(w, r)
	})
}
