package httpapi

import (
	"crypto/subtle"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
)

// MetricsHandler serves metrics at /metrics on a listener of their own
// (METRICS_ADDR), to holders of token when one is set. The public port
// serves them only with a token (see routes).
func MetricsHandler(log *slog.Logger, metrics http.Handler, token string) http.Handler {
	s := &Server{log: log}
	r := chi.NewRouter()
	r.Use(middleware.GetHead)
	r.NotFound(s.h(func(http.ResponseWriter, *http.Request, access.Scope) error { return errNoEndpoint }))
	r.Get("/metrics", s.h(func(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
		return serveMetrics(w, r, metrics, token)
	}))
	return r
}

// serveMetrics answers the metrics if the request carries token as its
// bearer credential, or token is empty.
func serveMetrics(w http.ResponseWriter, r *http.Request, metrics http.Handler, token string) error {
	if token != "" {
		cred, err := bearer(r)
		if err != nil {
			return err
		}
		if subtle.ConstantTimeCompare([]byte(cred), []byte(token)) != 1 {
			return apperr.New(apperr.Unauthorized, "This is not the metrics token (METRICS_TOKEN).")
		}
	}
	metrics.ServeHTTP(w, r)
	return nil
}
