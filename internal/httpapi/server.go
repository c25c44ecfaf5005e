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

	"github.com/go-chi/httprate"

	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/billing"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/delivery"
	"github.com/contactbook/contactbook/internal/forms"
	"github.com/contactbook/contactbook/internal/idempotency"
	"github.com/contactbook/contactbook/internal/ratelimit"
	"github.com/contactbook/contactbook/internal/segments"
	"github.com/contactbook/contactbook/internal/suppression"
	"github.com/contactbook/contactbook/internal/tracking"
	"github.com/contactbook/contactbook/internal/transactional"
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
	// Segments serves segments and compiles the segments that lists,
	// exports, bulk operations and enrollments name.
	Segments *segments.Service
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
	// SESFeedback takes Amazon SES feedback delivered by Amazon SNS.
	SESFeedback *delivery.SESFeedback
	// Suppressions serves the books' suppression lists.
	Suppressions *suppression.Service
	// Audit serves the teams' audit logs.
	Audit *audit.Service
	// KeyLimits limits each API key's requests a minute; nil for none.
	KeyLimits *ratelimit.PerKey
	// Forms serves sign-up forms, their hosted pages and submissions;
	// Rights the preference page, data export and erasure.
	Forms  *forms.Service
	Rights *forms.Rights
	// DAV serves the address books to CardDAV clients under /dav/ and
	// /.well-known/carddav; nil serves none.
	DAV http.Handler
	// SSO serves the teams' single sign-on settings and sign-ins.
	SSO *accounts.SSO
	// Idempotency keeps the first answers to Idempotency-Key (POST under
	// /api/v1); nil serves the header no meaning.
	Idempotency *idempotency.Store
	// Transactional accepts, lists and reads transactional emails.
	Transactional *transactional.Service
	// Tracking records product events and lists a contact's.
	Tracking *tracking.Service
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
	segments   *segments.Service
	campaigns  *campaigns.Service
	transfer   *transfer.Service

	secureCookies bool

	delivery     *delivery.Service
	sesFeedback  *delivery.SESFeedback
	suppressions *suppression.Service
	audit        *audit.Service
	keyLimits    *ratelimit.PerKey

	forms  *forms.Service
	rights *forms.Rights
	dav    http.Handler
	sso    *accounts.SSO

	idempotency   *idempotency.Store
	transactional *transactional.Service
	tracking      *tracking.Service
}

// New builds the HTTP handler of the whole service.
func New(d Deps) http.Handler {
	s := &Server{log: d.Log, tokens: d.Tokens, accounts: d.Accounts, books: d.Books, ready: d.Ready, observe: d.Observe, metrics: d.Metrics, metricsToken: d.MetricsToken, billing: d.Billing, trustProxy: d.TrustProxy, rateCounts: d.RateCounts, webhooks: d.Webhooks, contacts: d.Contacts, campaigns: d.Campaigns}
	s.secureCookies = d.SecureCookies
	s.delivery, s.suppressions, s.sesFeedback = d.Delivery, d.Suppressions, d.SESFeedback
	s.transfer = d.Transfer
	s.forms, s.rights = d.Forms, d.Rights
	s.segments = d.Segments
	s.audit, s.keyLimits = d.Audit, d.KeyLimits
	s.dav = d.DAV
	s.sso = d.SSO
	s.idempotency, s.transactional, s.tracking = d.Idempotency, d.Transactional, d.Tracking
	return s.routes()
}

// homePath is where a browser opening the service's root lands: the
// dashboard (the API reference is one link away, at /docs).
const homePath = "/app/"

// errNoEndpoint is the answer for a path the service does not serve.
var errNoEndpoint = apperr.NotFoundf("No such endpoint; see /api/openapi.json for the ones there are.")
