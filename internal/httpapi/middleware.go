package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
)

type requestIDKey struct{}

// RequestID returns the request's id ("" outside a request).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

var safeRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// withRequestID keeps a caller's sane X-Request-ID or makes one, and
// echoes it on every response.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-ID")
		if !safeRequestID.MatchString(id) {
			id = uuid.NewString()
		}
		w.Header().Set("X-Request-ID", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	return n, err
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// RouteObserver hears about every finished request, by route pattern
// (metrics). It may be nil.
type RouteObserver func(method, route string, status int, elapsed time.Duration)

// withAccessLog logs each request with its id, and recovers panics into a
// logged 500 envelope so one bad request never takes the process down.
func withAccessLog(log *slog.Logger, observe RouteObserver) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec := &statusRecorder{ResponseWriter: w}
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					log.ErrorContext(r.Context(), "panic", "request_id", RequestID(r.Context()), "panic", p, "stack", string(debug.Stack()))
					if rec.status == 0 {
						writeError(rec, r, log, apperr.New(apperr.Internal, "panic"))
					}
				}
				elapsed := time.Since(start)
				route := routePattern(r)
				level := slog.LevelInfo
				if rec.status >= 500 {
					level = slog.LevelError
				}
				if log.Enabled(r.Context(), level) {
					log.Log(r.Context(), level, "request", "request_id", RequestID(r.Context()), "method", r.Method,
						"path", loggedPath(r), "query", loggedQuery(r), "route", route, "status", rec.status, "bytes", rec.bytes,
						"duration_ms", float64(elapsed.Microseconds())/1000)
				}
				if observe != nil {
					observe(r.Method, route, rec.status, elapsed)
				}
			}()
			next.ServeHTTP(rec, r)
		})
	}
}

func routePattern(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			return p
		}
	}
	return "unmatched"
}

// bearer extracts the credential of "Authorization: Bearer <x>".
func bearer(r *http.Request) (string, error) {
	h := r.Header.Get("Authorization")
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(cred) == "" {
		return "", apperr.New(apperr.Unauthorized, "Send credentials as Authorization: Bearer <token or key>.")
	}
	return strings.TrimSpace(cred), nil
}

// requireKey authenticates the public API: team API keys only.
func (s *Server) requireKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cred, err := bearer(r)
		if err == nil && !auth.LooksLikeAPIKey(cred) {
			err = apperr.New(apperr.Unauthorized, "The /api/v1 API takes a team API key (cbk_...), not a login token.")
		}
		var actor *auth.Actor
		if err == nil {
			actor, err = s.accounts.AuthenticateKey(r.Context(), cred)
		}
		if err != nil {
			writeError(w, r, s.log, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(auth.WithActor(r.Context(), actor)))
	})
}

// requireUser authenticates the internal API: login tokens only, as a
// bearer header or the dashboard's session cookie (session.go).
func (s *Server) requireUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, err := s.authenticateUser(r)
		if err != nil {
			s.dropDeadSession(w, r, err)
			writeError(w, r, s.log, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
