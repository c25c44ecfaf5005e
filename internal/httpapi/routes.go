package httpapi

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
)

// routes is the service's route table: every path it serves, its method
// and the handler, in one place. Finding an endpoint starts here: the
// handler (in the file of its resource) calls one service method, which
// calls its store.
func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	// GetHead answers HEAD on every GET route as that GET, without the
	// body (net/http drops a HEAD answer's body).
	r.Use(withRequestID, s.securityHeaders, withAccessLog(s.log, s.observe), s.withOrigin, withTextCheck(s.log), middleware.GetHead)
	r.NotFound(s.h(func(http.ResponseWriter, *http.Request, access.Scope) error { return errNoEndpoint }))
	r.MethodNotAllowed(s.h(func(http.ResponseWriter, *http.Request, access.Scope) error {
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
	r.Post("/api/auth/login", s.h(s.login))
	r.Post("/api/auth/login/2fa", s.h(s.loginSecondStep))
	r.Get("/api/auth/sso/start", s.h(s.startSSO))
	r.Get("/api/auth/sso/callback", s.h(s.ssoCallback))
	r.Post("/api/auth/password-reset", s.h(s.requestReset))
	r.Post("/api/auth/password-reset/confirm", s.h(s.confirmReset))
	r.Get("/api/invitations/{token}", s.h(s.lookupInvitation))
	r.Post("/api/invitations/lookup", s.h(s.lookupInvitationByBody))
	r.With(s.optionalUser).Post("/api/invitations/accept", s.h(s.acceptInvitation))
	r.Post("/api/payments/webhook", s.h(s.paymentWebhook))
	r.Post("/api/mailer/events/{book_id}", s.h(s.mailerEvents))
	r.Post("/api/mailer/ses/{book_id}", s.h(s.sesNotifications))

	// The public API, for API keys, under /api/v1. Authentication wraps
	// the routes (a group), not the prefix, so a path that names no route
	// is 404 with or without a key, as under /api.
	r.Route("/api/v1", func(r chi.Router) {
		r.Group(func(r chi.Router) {
			r.Use(s.requireKey, s.keyPolicy, s.idempotent)
			s.publicRoutes(r)
		})
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
	return s.withDAV(r, s.dav)
}

// publicRoutes are the public API's endpoints, served under /api/v1 and
// /api alike: only authentication differs, and the services check roles
// through the actor. Routes are registered flat, not as mounted
// sub-routers, so /contacts/{id}/... routes of several domains coexist.
//
// Where a route takes its book from is said once, by the router it is
// registered on (see scope.go): inBook for X-Book-ID (required),
// inPathBook for the book of /books/{id}/imports and exports, theBook for
// /books/{id} itself with its labels and fields, maybeBook for X-Book-ID
// when sent; r for routes that work in no book.
func (s *Server) publicRoutes(r chi.Router) {
	inBook, _, theBook, maybeBook := s.bookRouters(r)

	r.Get("/books", s.h(s.listBooks))
	theBook.Get("/books/{id}", s.h(s.getBook))
	theBook.Get("/books/{id}/labels", s.h(s.listLabels))

	inBook.Get("/contacts", s.h(s.listContacts))
	inBook.Get("/contacts/export", s.h(s.exportContacts))
	inBook.Post("/contacts", s.h(s.createContact))
	inBook.Post("/contacts/bulk-delete", s.h(s.bulk("deleted", s.contacts.BulkDelete)))
	inBook.Post("/contacts/bulk-add-label", s.h(s.bulk("added", s.contacts.BulkAddLabel)))
	inBook.Post("/contacts/bulk-remove-label", s.h(s.bulk("removed", s.contacts.BulkRemoveLabel)))
	inBook.Post("/contacts/bulk-update-field", s.h(s.bulk("updated", s.contacts.BulkUpdateField)))
	r.Get("/contacts/{id}", s.h(s.getContact))
	r.Patch("/contacts/{id}", s.h(s.updateContact))
	r.Delete("/contacts/{id}", s.h(s.deleteContact))
	r.Post("/contacts/{id}/labels", s.h(s.addContactLabel))
	r.Delete("/contacts/{id}/labels/{lid}", s.h(s.removeContactLabel))

	inBook.Get("/campaign-templates", s.h(s.listTemplates))
	inBook.Post("/campaign-templates", s.h(s.createTemplate))
	inBook.Get("/campaign-templates/{id}", s.h(s.getTemplate))
	inBook.Patch("/campaign-templates/{id}", s.h(s.updateTemplate))
	inBook.Delete("/campaign-templates/{id}", s.h(s.deleteTemplate))
	inBook.Get("/campaigns", s.h(s.listCampaigns))
	inBook.Post("/campaigns", s.h(s.createCampaign))
	maybeBook.Get("/campaigns/{id}", s.h(s.getCampaign))
	maybeBook.Patch("/campaigns/{id}", s.h(s.updateCampaign))
	maybeBook.Delete("/campaigns/{id}", s.h(s.deleteCampaign))
	maybeBook.Post("/campaigns/{id}/steps", s.h(s.createStep))
	maybeBook.Post("/campaigns/{id}/participants", s.h(s.enrollParticipants))

	inBook.Get("/segments", s.h(s.listSegments))
	inBook.Post("/segments", s.h(s.createSegment))
	inBook.Post("/segments/preview", s.h(s.previewSegment))
	maybeBook.Get("/segments/{id}", s.h(s.getSegment))
	maybeBook.Patch("/segments/{id}", s.h(s.updateSegment))
	maybeBook.Delete("/segments/{id}", s.h(s.deleteSegment))

	inBook.Get("/forms", s.h(s.listForms))
	inBook.Post("/forms", s.h(s.createForm))
	r.Get("/forms/{id}", s.h(s.getForm))
	r.Patch("/forms/{id}", s.h(s.updateForm))
	r.Delete("/forms/{id}", s.h(s.deleteForm))
	r.Get("/contacts/{id}/consents", s.h(s.contactConsents))
	r.Get("/contacts/{id}/data-export", s.h(s.contactDataExport))
	r.Post("/contacts/{id}/erase", s.h(s.eraseContact))

	inBook.Get("/suppressions", s.h(s.listSuppressions))
	inBook.Post("/suppressions", s.h(s.addSuppression))
	r.Delete("/suppressions/{id}", s.h(s.liftSuppression))
	inBook.Get("/deliverability", s.h(s.deliverability))

	inBook.Post("/transactional", s.h(s.sendTransactional))
	inBook.Get("/transactional", s.h(s.listTransactional))
	r.Get("/transactional/{id}", s.h(s.getTransactional))

	inBook.Post("/events", s.h(s.recordEvent))
	r.Get("/contacts/{id}/events", s.h(s.contactEvents))
}

// internalRoutes are the dashboard's endpoints beyond the public API,
// under /api only.
func (s *Server) internalRoutes(r chi.Router) {
	inBook, inPathBook, theBook, maybeBook := s.bookRouters(r)

	r.Get("/me", s.h(s.me))
	r.Post("/auth/password", s.h(s.changePassword))
	r.Post("/auth/logout", s.h(s.logout))
	r.Post("/auth/2fa/setup", s.h(s.setupTwoFactor))
	r.Post("/auth/2fa/enable", s.h(s.enableTwoFactor))
	r.Post("/auth/2fa/disable", s.h(s.disableTwoFactor))
	r.Get("/auth/sessions", s.h(s.listSessions))
	r.Get("/webhook-event-types", s.h(s.webhookEventTypes))
	r.Delete("/auth/sessions/{id}", s.h(s.endSessionByID))
	r.Get("/auth/app-passwords", s.h(s.listAppPasswords))
	r.Post("/auth/app-passwords", s.h(s.createAppPassword))
	r.Delete("/auth/app-passwords/{id}", s.h(s.revokeAppPassword))

	r.Route("/teams/{team_id}", func(r chi.Router) {
		r = r.With(s.inTeam)
		r.Get("/", s.h(s.getTeam))
		r.Patch("/", s.h(s.updateTeam))
		r.Get("/members", s.h(s.listMembers))
		r.Post("/invitations", s.h(s.invite))
		r.Get("/invitations", s.h(s.listInvitations))
		r.Delete("/invitations/{id}", s.h(s.revokeInvitation))
		r.Get("/sso", s.h(s.getSSO))
		r.Put("/sso", s.h(s.putSSO))
		r.Delete("/sso", s.h(s.deleteSSO))
		r.Patch("/members/{user_id}", s.h(s.changeRole))
		r.Delete("/members/{user_id}", s.h(s.removeMember))
		r.Get("/api-keys", s.h(s.listKeys))
		r.Post("/api-keys", s.h(s.createKey))
		r.Delete("/api-keys/{key_id}", s.h(s.revokeKey))
		r.Post("/addons/campaigns/trial", s.h(s.startTrial))
		r.Get("/audit-log", s.h(s.listAuditLog))
		r.Get("/audit-log/export", s.h(s.exportAuditLog))
		r.Route("/webhooks", func(r chi.Router) {
			r.Get("/", s.h(s.listWebhooks))
			r.Post("/", s.h(s.createWebhook))
			r.Patch("/{webhook_id}", s.h(s.updateWebhook))
			r.Delete("/{webhook_id}", s.h(s.deleteWebhook))
			r.Get("/{webhook_id}/deliveries", s.h(s.listWebhookDeliveries))
			r.Post("/{webhook_id}/deliveries/{delivery_id}/retry", s.h(s.retryWebhookDelivery))
			r.Post("/{webhook_id}/test", s.h(s.testWebhook))
			r.Post("/{webhook_id}/recover", s.h(s.recoverWebhook))
		})
	})
	r.With(s.checkoutRateLimit(), s.scoped(bookIfSent)).Post("/payments/create-campaign-checkout", s.h(s.createCheckout))

	r.Post("/books", s.h(s.createBook))
	theBook.Patch("/books/{id}", s.h(s.updateBook))
	theBook.Delete("/books/{id}", s.h(s.deleteBook))
	theBook.Post("/books/{id}/labels", s.h(s.createLabel))
	theBook.Patch("/books/{id}/labels/{lid}", s.h(s.updateLabel))
	theBook.Delete("/books/{id}/labels/{lid}", s.h(s.deleteLabel))
	theBook.Get("/books/{id}/fields", s.h(s.listFields))
	theBook.Post("/books/{id}/fields", s.h(s.createField))
	theBook.Delete("/books/{id}/fields/{fid}", s.h(s.deleteField))
	inPathBook.Post("/books/{id}/imports", s.h(s.startImport))
	inPathBook.Post("/books/{id}/imports/preview", s.h(s.previewImport))
	inPathBook.Get("/books/{id}/imports", s.h(s.listImports))
	inPathBook.Get("/books/{id}/imports/{import_id}", s.h(s.getImport))
	inPathBook.Delete("/books/{id}/imports/{import_id}", s.h(s.cancelImport))
	inPathBook.Get("/books/{id}/export", s.h(s.exportContacts))
	inPathBook.Get("/books/{id}/suppressions/export", s.h(s.exportSuppressions))

	inBook.Get("/contacts/check-email", s.h(s.checkEmail))
	r.Get("/contacts/{id}/campaigns", s.h(s.contactCampaigns))
	r.Get("/contacts/{id}/activity", s.h(s.contactActivity))

	maybeBook.Patch("/campaigns/{id}/steps/reorder", s.h(s.reorderSteps))
	maybeBook.Patch("/campaigns/{id}/steps/{sid}", s.h(s.updateStep))
	maybeBook.Delete("/campaigns/{id}/steps/{sid}", s.h(s.deleteStep))
	maybeBook.Get("/campaigns/{id}/participants", s.h(s.listParticipants))
	maybeBook.Post("/campaigns/{id}/participants/enroll-label", s.h(s.enrollLabel))
	maybeBook.Delete("/campaigns/{id}/participants/{pid}", s.h(s.removeParticipant))
	maybeBook.Get("/campaigns/{id}/participants/{pid}/history", s.h(s.participantHistory))
	maybeBook.Get("/campaigns/{id}/stats", s.h(s.campaignStats))
	maybeBook.Post("/campaigns/{id}/run", s.h(s.runCampaign))
	maybeBook.Get("/campaign-step-contacts/{id}/{sid}", s.h(s.stepContacts))
	inBook.Post("/campaign-templates/preview", s.h(s.previewTemplate))
	inBook.Get("/campaign-templates/merge-fields", s.h(s.mergeFields))
	inBook.Post("/campaign-templates/{id}/send-test", s.h(s.sendTestEmail))
	inBook.Get("/campaign-settings", s.h(s.getCampaignSettings))
	inBook.Put("/campaign-settings", s.h(s.putCampaignSettings))
	inBook.Post("/campaign-settings/verify", s.h(s.verifyCampaignSettings))
	inBook.Post("/campaign-images", s.h(s.uploadCampaignImage))
}

// healthz answers that the process is up.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request, _ access.Scope) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyz answers whether the instance takes traffic: the database is
// reachable and no stop signal has arrived (an error from ready that is
// already classified says which).
func (s *Server) readyz(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	if err := s.ready(r.Context()); err != nil {
		var classified *apperr.Error
		if errors.As(err, &classified) {
			return err
		}
		return apperr.Wrap(err, apperr.Unavailable, "The database is not reachable.")
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}

// metricsOnPublicPort serves the metrics on the public port only when a
// token guards them; otherwise the path does not exist there.
func (s *Server) metricsOnPublicPort(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	if s.metrics == nil || s.metricsToken == "" {
		return errNoEndpoint
	}
	return serveMetrics(w, r, s.metrics, s.metricsToken)
}
