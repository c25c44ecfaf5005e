package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/contactbook/contactbook/internal/carddav"
)

// davMux serves the address books (package carddav) beside the router:
// WebDAV's methods (PROPFIND, REPORT) are not the JSON API's, and chi
// refuses methods it was not told of. The request id, security headers,
// access log and client IP apply as on every other path.
type davMux struct {
	chi.Router
	dav http.Handler
}

func (s *Server) withDAV(r chi.Router, dav http.Handler) http.Handler {
	if dav == nil {
		return r
	}
	chain := withRequestID(s.securityHeaders(withAccessLog(s.log, s.observe)(s.clientIP()(dav))))
	return davMux{Router: r, dav: chain}
}

func (m davMux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if p == carddav.WellKnown || p == carddav.WellKnown+"/" || strings.HasPrefix(p, carddav.Root) || p+"/" == carddav.Root {
		// The access log and metrics name these requests by one route.
		rctx := chi.NewRouteContext()
		rctx.RoutePatterns = []string{carddav.Root + "*"}
		m.dav.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, rctx)))
		return
	}
	m.Router.ServeHTTP(w, r)
}

// ClientIP is the client address a request's throttles count (the peer,
// or behind TRUST_PROXY the address the proxy saw), as resolved by the
// router's middleware.
func ClientIP(r *http.Request) string {
	ip, _ := clientIPKey(r)
	return ip
}
