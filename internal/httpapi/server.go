// Package httpapi is the HTTP face of the service: the chi routers of the
// public API (/api/v1, team API keys), the internal API (/api, login tokens
// and roles) and the public pages, plus the request and response helpers
// they share. Handlers parse, call a domain service, and answer; the rules
// live in the services, and errors are mapped to statuses in one place.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httprate"
	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/billing"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/delivery"
	"github.com/contactbook/contactbook/internal/suppression"
	"github.com/contactbook/contactbook/internal/transfer"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// Deps are the services the HTTP layer calls.
type Deps struct {
	Log      *slog.Logger
	Tokens   *auth.Tokens
	Accounts *accounts.Service
	Books    *books.Service
	// Contacts serves the contact endpoints.
	Contacts *contacts.Service
	// Campaigns serves templates, campaigns, settings, images, unsubscribe.
	Campaigns *campaigns.Service
	// Transfer serves imports and exports.
	Transfer *transfer.Service
	// Ready reports whether the service can take traffic (database up).
	Ready func(ctx context.Context) error
	// Observe hears about every request (metrics); optional.
	Observe RouteObserver
	// Metrics serves /metrics; optional.
	Metrics http.Handler
	// MetricsToken is the bearer token that opens /metrics on this handler;
	// empty keeps /metrics off it (see MetricsHandler for a listener of
	// its own).
	MetricsToken string
	// Billing sells the Campaigns add-on (checkout and payment webhook).
	Billing *billing.Service
	// Webhooks manages webhook subscriptions and their delivery log.
	Webhooks *webhooks.Service
	// TrustProxy takes the client IP of rate limits from X-Forwarded-For
	// (see checkoutRateLimit); only behind a proxy that sets it.
	TrustProxy bool
	// RateCounts keeps rate-limit counters where every instance sees them
	// (ratelimit.Counter); nil counts in this process only.
	RateCounts httprate.LimitCounter
	// SecureCookies marks the session cookies Secure (PUBLIC_BASE_URL is
	// https).
	SecureCookies bool
	// Delivery takes the provider's event batches and serves the
	// deliverability and activity reports.
	Delivery *delivery.Service
	// Suppressions serves the books' suppression lists.
	Suppressions *suppression.Service
}

// Server routes requests to handlers.
type Server struct {
	log      *slog.Logger
	tokens   *auth.Tokens
	accounts *accounts.Service
	books    *books.Service
	ready    func(ctx context.Context) error
	observe  RouteObserver
	metrics  http.Handler
	// metricsToken opens /metrics; empty: no /metrics on this handler.
	metricsToken string

	billing    *billing.Service
	trustProxy bool
	rateCounts httprate.LimitCounter
	webhooks   *webhooks.Service
	contacts   *contacts.Service
	campaigns  *campaigns.Service
	transfer   *transfer.Service

	secureCookies bool

	delivery     *delivery.Service
	suppressions *suppression.Service
}

// New builds the HTTP handler of the whole service.
func New(d Deps) http.Handler {
	s := &Server{log: d.Log, tokens: d.Tokens, accounts: d.Accounts, books: d.Books, ready: d.Ready, observe: d.Observe, metrics: d.Metrics, metricsToken: d.MetricsToken, billing: d.Billing, trustProxy: d.TrustProxy, rateCounts: d.RateCounts, webhooks: d.Webhooks, contacts: d.Contacts, campaigns: d.Campaigns}
	s.secureCookies = d.SecureCookies
	s.delivery, s.suppressions = d.Delivery, d.Suppressions
	s.transfer = d.Transfer
	return s.routes()
}

// handlerFunc is a handler that returns its error instead of writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// actorFunc is a handler of an authenticated route.
type actorFunc func(w http.ResponseWriter, r *http.Request, a *auth.Actor) error

// h adapts a handlerFunc, writing any error once, the same way.
func (s *Server) h(fn handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			writeError(w, r, s.log, err)
		}
	}
}

// as adapts an actorFunc; the auth middleware has put the actor in ctx.
func (s *Server) as(fn actorFunc) http.HandlerFunc {
	return s.h(func(w http.ResponseWriter, r *http.Request) error {
		a, err := auth.FromContext(r.Context())
		if err != nil {
			return err
		}
		return fn(w, r, a)
	})
}

// homePath is where a browser opening the service's root lands: the
// dashboard (the API reference is one link away, at /docs).
const homePath = "/app/"

// errNoEndpoint is the answer for a path the service does not serve.
var errNoEndpoint = apperr.NotFoundf("No such endpoint; see /api/openapi.json for the ones there are.")

func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	// GetHead answers HEAD on every GET route as that GET, without the
	// body (net/http drops a HEAD answer's body).
	r.Use(withRequestID, withAccessLog(s.log, s.observe), withTextCheck(s.log), middleware.GetHead)
	r.NotFound(s.h(func(http.ResponseWriter, *http.Request) error { return errNoEndpoint }))
	r.MethodNotAllowed(s.h(func(http.ResponseWriter, *http.Request) error {
		return apperr.New(apperr.MethodNotAllowed, "This endpoint does not take this method.")
	}))

	s.campaignPageRoutes(r)
	s.billingPageRoutes(r)
	docsRoutes(r)
	s.dashboardRoutes(r)
	r.Get("/metrics", s.h(func(w http.ResponseWriter, r *http.Request) error {
		if s.metrics == nil || s.metricsToken == "" {
			return errNoEndpoint
		}
		return serveMetrics(w, r, s.metrics, s.metricsToken)
	}))
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/readyz", s.h(func(w http.ResponseWriter, r *http.Request) error {
		if err := s.ready(r.Context()); err != nil {
			return apperr.Wrap(err, apperr.Unavailable, "The database is not reachable.")
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
		return nil
	}))

	r.Route("/api/v1", func(r chi.Router) {
		r.Use(s.requireKey)
		s.publicRoutes(r)
	})
	r.Route("/api", func(r chi.Router) {
		r.Post("/auth/signup", s.h(s.signup))
		r.With(s.clientIP()).Post("/auth/login", s.h(s.login))
		s.peoplePublicRoutes(r)
		r.Post("/payments/webhook", s.h(s.paymentWebhook))
		r.Post("/mailer/events/{book_id}", s.h(s.mailerEvents))
		r.Group(func(r chi.Router) {
			r.Use(s.requireUser)
			s.publicRoutes(r)
			s.internalRoutes(r)
		})
	})
	return r
}

// publicRoutes are the public API's endpoints. The internal API serves
// them too, under /api, with the same handlers: only authentication
// differs, and the services check roles through the actor.
func (s *Server) publicRoutes(r chi.Router) {
	r.Get("/books", s.as(s.listBooks))
	r.Get("/books/{id}", s.withID("id", s.getBook))
	r.Get("/books/{id}/labels", s.withID("id", s.listLabels))
	s.transferPublicRoutes(r)
	s.contactRoutes(r)
	s.campaignPublicRoutes(r)
	s.deliveryRoutes(r)
}

// internalRoutes are the dashboard's endpoints beyond the public API.
func (s *Server) internalRoutes(r chi.Router) {
	r.Get("/me", s.as(s.me))
	r.Post("/auth/password", s.as(s.changePassword))
	r.Post("/auth/logout", s.as(s.logout))
	r.Get("/contacts/check-email", s.inBook(s.checkEmail))
	s.transferRoutes(r)
	s.campaignInternalRoutes(r)
	s.deliveryInternalRoutes(r)
	r.Route("/teams/{team_id}", func(r chi.Router) {
		r.Get("/", s.withID("team_id", s.getTeam))
		r.Patch("/", s.withID("team_id", s.renameTeam))
		r.Get("/members", s.withID("team_id", s.listMembers))
		r.Post("/invitations", s.withID("team_id", s.invite))
		r.Get("/invitations", s.withID("team_id", s.listInvitations))
		r.Delete("/invitations/{id}", s.withID("team_id", s.revokeInvitation))
		r.Patch("/members/{user_id}", s.withID("team_id", s.changeRole))
		r.Delete("/members/{user_id}", s.withID("team_id", s.removeMember))
		r.Get("/api-keys", s.withID("team_id", s.listKeys))
		r.Post("/api-keys", s.withID("team_id", s.createKey))
		r.Delete("/api-keys/{key_id}", s.withID("team_id", s.revokeKey))
		r.Post("/addons/campaigns/trial", s.withID("team_id", s.startTrial))
		r.Route("/webhooks", s.webhookRoutes)
	})
	r.Post("/books", s.as(s.createBook))
	r.Patch("/books/{id}", s.withID("id", s.updateBook))
	r.Delete("/books/{id}", s.withID("id", s.deleteBook))
	r.Post("/books/{id}/labels", s.withID("id", s.createLabel))
	r.Patch("/books/{id}/labels/{lid}", s.withID("id", s.updateLabel))
	r.Delete("/books/{id}/labels/{lid}", s.withID("id", s.deleteLabel))
	r.Get("/books/{id}/fields", s.withID("id", s.listFields))
	r.Post("/books/{id}/fields", s.withID("id", s.createField))
	r.Delete("/books/{id}/fields/{fid}", s.withID("id", s.deleteField))
	r.With(s.checkoutRateLimit()).Post("/payments/create-campaign-checkout", s.as(s.createCheckout))
}

// idFunc is a handler of a route addressed by one UUID path parameter.
type idFunc func(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error

// withID adapts an idFunc, parsing the named path parameter once for all.
func (s *Server) withID(param string, fn idFunc) http.HandlerFunc {
	return s.as(func(w http.ResponseWriter, r *http.Request, a *auth.Actor) error {
		id, err := pathUUID(r, param)
		if err != nil {
			return err
		}
		return fn(w, r, a, id)
	})
}

// bookFunc is a handler of a route that works in the book named by
// X-Book-ID.
type bookFunc func(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error

// inBook adapts a bookFunc, parsing X-Book-ID once for all.
func (s *Server) inBook(fn bookFunc) http.HandlerFunc {
	return s.as(func(w http.ResponseWriter, r *http.Request, a *auth.Actor) error {
		bookID, err := bookHeader(r)
		if err != nil {
			return err
		}
		return fn(w, r, a, bookID)
	})
}

// bookIDFunc is a handler of a route in the X-Book-ID book that also
// names a resource by a UUID path parameter.
type bookIDFunc func(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID, id uuid.UUID) error

// inBookWithID adapts a bookIDFunc.
func (s *Server) inBookWithID(param string, fn bookIDFunc) http.HandlerFunc {
	return s.withID(param, func(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error {
		bookID, err := bookHeader(r)
		if err != nil {
			return err
		}
		return fn(w, r, a, bookID, id)
	})
}
