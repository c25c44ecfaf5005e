package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
)

// The dashboard's cookie session (docs/accounts.md). The login token
// travels in sessionCookie, which scripts cannot read (HttpOnly) and no
// other site's request carries (SameSite=Strict). Writes authenticated
// by the cookie must also echo csrfCookie's value in csrfHeader: a signed
// double submit, since the value is an HMAC of the session id. Bearer
// requests need none of this: a browser never adds that header by itself.
const (
	sessionCookie = "cb_session"
	csrfCookie    = "cb_csrf"
	csrfHeader    = "X-CSRF-Token"
	// sessionQuery=cookie on a request that logs in asks for the cookie
	// session instead of a token in the body.
	sessionQuery = "session"
)

type cookieAuthKey struct{}

// viaCookie reports whether the request was authenticated by the session
// cookie.
func viaCookie(ctx context.Context) bool {
	v, _ := ctx.Value(cookieAuthKey{}).(bool)
	return v
}

// hasCredentials reports whether the request carries a login credential
// (a bearer header or the session cookie).
func hasCredentials(r *http.Request) bool {
	if r.Header.Get("Authorization") != "" {
		return true
	}
	c, err := r.Cookie(sessionCookie)
	return err == nil && c.Value != ""
}

// authenticateUser checks the request's login token: its signature and
// expiry, that its session is still open (logout and password changes end
// sessions), and for a cookie-authenticated write the CSRF token. It
// returns the context carrying the actor.
func (s *Server) authenticateUser(r *http.Request) (context.Context, error) {
	cred, cookie, err := userCredential(r)
	if err != nil {
		return nil, err
	}
	if auth.LooksLikeAPIKey(cred) {
		return nil, apperr.New(apperr.Unauthorized, "The /api API takes a login token, not an API key; use /api/v1 with keys.")
	}
	claims, err := s.tokens.Parse(cred)
	if err != nil {
		return nil, err
	}
	if cookie && !safeMethod(r.Method) && !s.tokens.CheckCSRF(claims.SessionID, r.Header.Get(csrfHeader)) {
		return nil, apperr.Forbiddenf("A request authenticated by the session cookie must send the %s cookie's value in the %s header.", csrfCookie, csrfHeader)
	}
	if err := s.accounts.CheckSession(r.Context(), claims); err != nil {
		return nil, err
	}
	actor := auth.UserActor(claims.UserID, s.accounts)
	actor.SessionID = claims.SessionID
	actor.SSOTeamID = claims.SSOTeamID
	ctx := auth.WithActor(r.Context(), actor)
	if cookie {
		ctx = context.WithValue(ctx, cookieAuthKey{}, true)
	}
	return ctx, nil
}

// userCredential is the bearer credential, else the session cookie's.
func userCredential(r *http.Request) (cred string, cookie bool, err error) {
	if r.Header.Get("Authorization") == "" {
		if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
			return c.Value, true, nil
		}
	}
	cred, err = bearer(r)
	return cred, false, err
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// optionalUser authenticates a request that carries credentials, and lets
// one without any through without an actor (public endpoints that also
// serve logged-in people).
func (s *Server) optionalUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hasCredentials(r) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, err := s.authenticateUser(r)
		if err != nil {
			if s.dropDeadSession(w, r, err) {
				// A session cookie that no longer works is no identity:
				// the endpoint serves the request as anonymous.
				next.ServeHTTP(w, r)
				return
			}
			writeError(w, r, s.log, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// dropDeadSession clears the cookies of a session that no longer works
// (logged out, ended by a password change elsewhere, expired): a page
// cannot remove an HttpOnly cookie itself, and every later request would
// carry it. It reports whether it did.
func (s *Server) dropDeadSession(w http.ResponseWriter, r *http.Request, err error) bool {
	if r.Header.Get("Authorization") != "" || apperr.CodeOf(err) != apperr.Unauthorized {
		return false
	}
	if c, cerr := r.Cookie(sessionCookie); cerr != nil || c.Value == "" {
		return false
	}
	s.endSession(w, r)
	return true
}

// optionalActor is the request's actor, nil when it has none.
func optionalActor(ctx context.Context) *auth.Actor {
	a, err := auth.FromContext(ctx)
	if err != nil {
		return nil
	}
	return a
}

// wantsCookie reports whether the answer should set the cookie session:
// asked for with ?session=cookie, or the request already uses one.
func wantsCookie(r *http.Request) bool {
	return r.URL.Query().Get(sessionQuery) == "cookie" || viaCookie(r.Context())
}

// startSession answers a request that logged someone in. In cookie mode
// the token goes into the session cookie and out of the body, so the
// dashboard's scripts never hold it.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, sess *accounts.Session) {
	if !wantsCookie(r) {
		return
	}
	s.setSessionCookies(w, sess)
}

// setSessionCookies puts the session into the cookies and out of sess.
func (s *Server) setSessionCookies(w http.ResponseWriter, sess *accounts.Session) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: sess.Token, Path: "/api", Expires: sess.ExpiresAt,
		HttpOnly: true, Secure: s.secureCookies, SameSite: http.SameSiteStrictMode,
	})
	http.SetCookie(w, &http.Cookie{
		Name: csrfCookie, Value: s.tokens.CSRFToken(sess.SessionID), Path: "/", Expires: sess.ExpiresAt,
		Secure: s.secureCookies, SameSite: http.SameSiteStrictMode,
	})
	sess.Token = ""
}

// endSession clears the cookie session, if the request has one.
func (s *Server) endSession(w http.ResponseWriter, r *http.Request) {
	if _, err := r.Cookie(sessionCookie); err != nil {
		return
	}
	for _, c := range []struct{ name, path string }{{sessionCookie, "/api"}, {csrfCookie, "/"}} {
		http.SetCookie(w, &http.Cookie{
			Name: c.name, Value: "", Path: c.path, MaxAge: -1, Expires: time.Unix(0, 0),
			HttpOnly: c.name == sessionCookie, Secure: s.secureCookies, SameSite: http.SameSiteStrictMode,
		})
	}
}

// clientIP resolves the client's IP for rate limits and throttles (see
// checkoutRateLimit for which address counts) into the request context,
// where clientIPKey reads it.
func (s *Server) clientIP() func(http.Handler) http.Handler {
	if s.trustProxy {
		return middleware.ClientIPFromXFFTrustedProxies(1)
	}
	return middleware.ClientIPFromRemoteAddr
}
