package httpapi

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/contacts"
)

// routes is the service's route table: every path it serves, its method
// and the handler, in one place. Finding an endpoint starts here: the
// handler (in the file of its resource) calls one service method, which
// calls its store.
func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	// GetHead answers HEAD on every GET route as that GET, without the
	// body (net/http drops a HEAD answer's body).
	r.Use(withRequestID, withAccessLog(s.log, s.observe), withTextCheck(s.log), middleware.GetHead)
	r.NotFound(s.h(func(http.ResponseWriter, *http.Request) error { return errNoEndpoint }))
	r.MethodNotAllowed(s.h(func(http.ResponseWriter, *http.Request) error {
		return apperr.New(apperr.MethodNotAllowed, "This endpoint does not take this method.")
	}))

	// Pages and operations, without authentication.
	r.Get("/", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, homePath, http.StatusFound) })
	r.Get("/app", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/app/", http.StatusMovedPermanently)
	})
	r.Get("/app/*", s.dashboardFiles())
	r.Get("/docs", docsPage())
	r.Get("/api/openapi.json", openAPIDocument())
	r.Get("/images/{name}", s.h(s.serveCampaignImage))
	r.Get("/billing/success", s.billingReturnPage(true))
	r.Get("/billing/cancel", s.billingReturnPage(false))
	r.Get("/metrics", s.h(s.metricsOnPublicPort))
	r.Get("/healthz", s.h(s.healthz))
	r.Get("/readyz", s.h(s.readyz))

	r.Get("/api/unsubscribe", s.h(s.unsubscribePage))
	r.Post("/api/unsubscribe/confirm", s.h(s.unsubscribeConfirm))
	r.Post("/api/preferences", s.h(s.savePreferences))
	r.Get("/f/{form_id}", s.h(s.hostedForm))
	r.With(s.clientIP()).Post("/api/forms/{form_id}/submissions", s.h(s.submitForm))
	r.Options("/api/forms/{form_id}/submissions", s.h(s.submissionPreflight))
	r.Get("/api/forms/confirm", s.h(s.confirmSignupPage))
	r.Post("/api/forms/confirm", s.h(s.confirmSignup))
	r.Post("/api/auth/signup", s.h(s.signup))
	r.With(s.clientIP()).Post("/api/auth/login", s.h(s.login))
	r.Post("/api/auth/password-reset", s.h(s.requestReset))
	r.Post("/api/auth/password-reset/confirm", s.h(s.confirmReset))
	r.Get("/api/invitations/{token}", s.h(s.lookupInvitation))
	r.With(s.optionalUser).Post("/api/invitations/accept", s.h(s.acceptInvitation))
	r.Post("/api/payments/webhook", s.h(s.paymentWebhook))
	r.Post("/api/mailer/events/{book_id}", s.h(s.mailerEvents))

	// The public API, for API keys, under /api/v1.
	r.Route("/api/v1", func(r chi.Router) {
		r.Use(s.requireKey)
		s.publicRoutes(r)
	})
	// The internal API, for the dashboard's users, under /api: the public
	// API's endpoints with the same handlers, and the dashboard's own.
	r.Route("/api", func(r chi.Router) {
		r.Group(func(r chi.Router) {
			r.Use(s.requireUser)
			s.publicRoutes(r)
			s.internalRoutes(r)
		})
	})
	return r
}

// publicRoutes are the public API's endpoints, served under /api/v1 and
// /api alike: only authentication differs, and the services check roles
// through the actor. Routes are registered flat, not as mounted
// sub-routers, so /contacts/{id}/... routes of several domains coexist.
func (s *Server) publicRoutes(r chi.Router) {
	r.Get("/books", s.as(s.listBooks))
	r.Get("/books/{id}", s.withID("id", s.getBook))
	r.Get("/books/{id}/labels", s.withID("id", s.listLabels))

	r.Get("/contacts", s.inBook(s.listContacts))
	r.Get("/contacts/export", s.inBook(s.exportContacts))
	r.Post("/contacts", s.inBook(s.createContact))
	r.Post("/contacts/bulk-delete", s.bulk("deleted", s.contacts.BulkDelete))
	r.Post("/contacts/bulk-add-label", s.bulk("added", s.contacts.BulkAddLabel))
	r.Post("/contacts/bulk-remove-label", s.bulk("removed", s.contacts.BulkRemoveLabel))
	r.Post("/contacts/bulk-update-field", s.bulk("updated", s.contacts.BulkUpdateField))
	r.Get("/contacts/{id}", s.withID("id", s.getContact))
	r.Patch("/contacts/{id}", s.withID("id", s.updateContact))
	r.Delete("/contacts/{id}", s.withID("id", s.deleteContact))
	r.Post("/contacts/{id}/labels", s.withID("id", s.addContactLabel))
	r.Delete("/contacts/{id}/labels/{lid}", s.withID("id", s.removeContactLabel))

	r.Get("/campaign-templates", s.inBook(s.listTemplates))
	r.Post("/campaign-templates", s.inBook(s.createTemplate))
	r.Get("/campaign-templates/{id}", s.inBookWithID("id", s.getTemplate))
	r.Patch("/campaign-templates/{id}", s.inBookWithID("id", s.updateTemplate))
	r.Delete("/campaign-templates/{id}", s.inBookWithID("id", s.deleteTemplate))
	r.Get("/campaigns", s.inBook(s.listCampaigns))
	r.Post("/campaigns", s.inBook(s.createCampaign))
	r.Get("/campaigns/{id}", s.withBookHint("id", s.getCampaign))
	r.Patch("/campaigns/{id}", s.withBookHint("id", s.updateCampaign))
	r.Delete("/campaigns/{id}", s.withBookHint("id", s.deleteCampaign))
	r.Post("/campaigns/{id}/steps", s.withBookHint("id", s.createStep))
	r.Post("/campaigns/{id}/participants", s.withBookHint("id", s.enrollParticipants))

	r.Get("/forms", s.inBook(s.listForms))
	r.Post("/forms", s.inBook(s.createForm))
	r.Get("/forms/{id}", s.withID("id", s.getForm))
	r.Patch("/forms/{id}", s.withID("id", s.updateForm))
	r.Delete("/forms/{id}", s.withID("id", s.deleteForm))
	r.Get("/contacts/{id}/consents", s.withID("id", s.contactConsents))
	r.Get("/contacts/{id}/data-export", s.withID("id", s.contactDataExport))
	r.Post("/contacts/{id}/erase", s.withID("id", s.eraseContact))

	r.Get("/suppressions", s.inBook(s.listSuppressions))
	r.Post("/suppressions", s.inBook(s.addSuppression))
	r.Delete("/suppressions/{id}", s.withID("id", s.liftSuppression))
	r.Get("/deliverability", s.inBook(s.deliverability))
}

// internalRoutes are the dashboard's endpoints beyond the public API,
// under /api only.
func (s *Server) internalRoutes(r chi.Router) {
	r.Get("/me", s.as(s.me))
	r.Post("/auth/password", s.as(s.changePassword))
	r.Post("/auth/logout", s.as(s.logout))

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
		r.Route("/webhooks", func(r chi.Router) {
			r.Get("/", s.withID("team_id", s.listWebhooks))
			r.Post("/", s.withID("team_id", s.createWebhook))
			r.Patch("/{webhook_id}", s.withWebhook(s.updateWebhook))
			r.Delete("/{webhook_id}", s.withWebhook(s.deleteWebhook))
			r.Get("/{webhook_id}/deliveries", s.withWebhook(s.listWebhookDeliveries))
		})
	})
	r.With(s.checkoutRateLimit()).Post("/payments/create-campaign-checkout", s.as(s.createCheckout))

	r.Post("/books", s.as(s.createBook))
	r.Patch("/books/{id}", s.withID("id", s.updateBook))
	r.Delete("/books/{id}", s.withID("id", s.deleteBook))
	r.Post("/books/{id}/labels", s.withID("id", s.createLabel))
	r.Patch("/books/{id}/labels/{lid}", s.withID("id", s.updateLabel))
	r.Delete("/books/{id}/labels/{lid}", s.withID("id", s.deleteLabel))
	r.Get("/books/{id}/fields", s.withID("id", s.listFields))
	r.Post("/books/{id}/fields", s.withID("id", s.createField))
	r.Delete("/books/{id}/fields/{fid}", s.withID("id", s.deleteField))
	r.Post("/books/{id}/imports", s.withID("id", s.startImport))
	r.Post("/books/{id}/imports/preview", s.withID("id", s.previewImport))
	r.Get("/books/{id}/imports", s.withID("id", s.listImports))
	r.Get("/books/{id}/imports/{import_id}", s.withID("id", s.getImport))
	r.Delete("/books/{id}/imports/{import_id}", s.withID("id", s.cancelImport))
	r.Get("/books/{id}/export", s.withID("id", s.exportContacts))
	r.Get("/books/{id}/suppressions/export", s.withID("id", s.exportSuppressions))

	r.Get("/contacts/check-email", s.inBook(s.checkEmail))
	r.Get("/contacts/{id}/campaigns", s.withID("id", s.contactCampaigns))
	r.Get("/contacts/{id}/activity", s.withID("id", s.contactActivity))

	r.Patch("/campaigns/{id}/steps/reorder", s.withBookHint("id", s.reorderSteps))
	r.Patch("/campaigns/{id}/steps/{sid}", s.withID("id", s.updateStep))
	r.Delete("/campaigns/{id}/steps/{sid}", s.withID("id", s.deleteStep))
	r.Get("/campaigns/{id}/participants", s.withBookHint("id", s.listParticipants))
	r.Post("/campaigns/{id}/participants/enroll-label", s.withBookHint("id", s.enrollLabel))
	r.Delete("/campaigns/{id}/participants/{pid}", s.withID("id", s.removeParticipant))
	r.Get("/campaigns/{id}/participants/{pid}/history", s.withID("id", s.participantHistory))
	r.Get("/campaigns/{id}/stats", s.withBookHint("id", s.campaignStats))
	r.Post("/campaigns/{id}/run", s.withBookHint("id", s.runCampaign))
	r.Get("/campaign-step-contacts/{id}/{sid}", s.withID("id", s.stepContacts))
	r.Post("/campaign-templates/preview", s.inBook(s.previewTemplate))
	r.Get("/campaign-templates/merge-fields", s.inBook(s.mergeFields))
	r.Post("/campaign-templates/{id}/send-test", s.inBookWithID("id", s.sendTestEmail))
	r.Get("/campaign-settings", s.inBook(s.getCampaignSettings))
	r.Put("/campaign-settings", s.inBook(s.putCampaignSettings))
	r.Post("/campaign-images", s.inBook(s.uploadCampaignImage))
}

// healthz answers that the process is up.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyz answers whether the database is reachable.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if err := s.ready(r.Context()); err != nil {
		return apperr.Wrap(err, apperr.Unavailable, "The database is not reachable.")
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}

// metricsOnPublicPort serves the metrics on the public port only when a
// token guards them; otherwise the path does not exist there.
func (s *Server) metricsOnPublicPort(w http.ResponseWriter, r *http.Request) error {
	if s.metrics == nil || s.metricsToken == "" {
		return errNoEndpoint
	}
	return serveMetrics(w, r, s.metrics, s.metricsToken)
}

// The handler adapters: each parses what its routes share (the actor, a
// path ID, X-Book-ID) once, and writes any error the same way.

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

// hintFunc is a handler of a resource addressed by id, where X-Book-ID is
// optional (hint is nil when absent).
type hintFunc func(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error

// withBookHint adapts a hintFunc, parsing the id and X-Book-ID once.
func (s *Server) withBookHint(param string, fn hintFunc) http.HandlerFunc {
	return s.withID(param, func(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error {
		hint, err := bookHint(r)
		if err != nil {
			return err
		}
		return fn(w, r, a, id, hint)
	})
}

// webhookFunc is a handler of a route addressed by team and webhook id.
type webhookFunc func(w http.ResponseWriter, r *http.Request, a *auth.Actor, teamID, webhookID uuid.UUID) error

// withWebhook adapts a webhookFunc.
func (s *Server) withWebhook(fn webhookFunc) http.HandlerFunc {
	return s.withID("team_id", func(w http.ResponseWriter, r *http.Request, a *auth.Actor, teamID uuid.UUID) error {
		id, err := pathUUID(r, "webhook_id")
		if err != nil {
			return err
		}
		return fn(w, r, a, teamID, id)
	})
}

// bulkOp is one of the contacts service's bulk operations.
type bulkOp func(ctx context.Context, a *auth.Actor, bookID uuid.UUID, in contacts.BulkInput) (int, error)

// bulk adapts a bulk operation on the X-Book-ID book; it answers
// {data: {<count>: n}}.
func (s *Server) bulk(count string, op bulkOp) http.HandlerFunc {
	return s.inBook(func(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error {
		var in contacts.BulkInput
		if err := decodeJSON(w, r, &in); err != nil {
			return err
		}
		n, err := op(r.Context(), a, bookID, in)
		if err != nil {
			return err
		}
		return data(w, http.StatusOK, map[string]int{count: n})
	})
}
