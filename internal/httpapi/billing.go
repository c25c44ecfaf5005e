package httpapi

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httprate"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/billing"
	"github.com/contactbook/contactbook/web"
)

// Checkout rate limit: 5 requests per minute per client IP (documented in
// the API reference).
const (
	checkoutRequests = 5
	checkoutWindow   = time.Minute
)

// maxWebhookBody bounds a payment provider event. Events carry whole
// objects (a checkout session with its line items) and reach a few
// hundred KB at most; 1 MB leaves room without letting anyone stream.
const maxWebhookBody = 1 << 20

// createCheckout starts a Campaigns add-on checkout for a team named by
// X-Book-ID's book, by team_id (body or query), or the user's only team.
func (s *Server) createCheckout(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in billing.CheckoutInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	given, err := teamParam(r, in.TeamID)
	if err != nil {
		return err
	}
	teamID, err := s.billing.CheckoutTeam(r.Context(), sc, given)
	if err != nil {
		return err
	}
	c, err := s.billing.CreateCheckout(r.Context(), sc.Actor, teamID, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, c)
}

// paymentWebhook receives the payment provider's events. It is not behind
// login: the provider authenticates each event by its Stripe-Signature
// over the exact body bytes, so the body is read raw, never decoded first.
func (s *Server) paymentWebhook(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return apperr.New(apperr.PayloadTooLarge, "The event body is larger than %d MB.", maxWebhookBody>>20)
		}
		return apperr.Wrap(err, apperr.InvalidInput, "The event body could not be read.")
	}
	res, err := s.billing.HandleWebhook(r.Context(), body, r.Header.Get("Stripe-Signature"))
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, res)
}

// checkoutRateLimit allows checkoutRequests per checkoutWindow per client
// IP (IPv6 clients by their /64) and answers 429 RATE_LIMITED with
// Retry-After beyond that. The counters live in PostgreSQL (Deps.RateCounts)
// so the limit holds across instances; a counter that cannot be read or
// written answers the usual 500 envelope.
//
// Which IP is the client's:
//   - By default the TCP peer (RemoteAddr), which no header can forge.
//     Behind a reverse proxy that is the proxy, so every client shares one
//     bucket: set TRUST_PROXY=true there.
//   - With TRUST_PROXY=true, the right-most X-Forwarded-For entry, the one
//     the proxy in front of the service appended for the peer it saw. What
//     a client writes into X-Forwarded-For itself stays to the left of it,
//     and X-Real-IP / True-Client-IP are not read, so clients cannot pick
//     their bucket. This assumes exactly one proxy hop and that only the
//     proxy can reach the service; a request without X-Forwarded-For falls
//     back to the peer address.
func (s *Server) checkoutRateLimit() func(http.Handler) http.Handler {
	opts := []httprate.Option{
		httprate.WithLimitHandler(func(w http.ResponseWriter, r *http.Request) {
			writeError(w, r, s.log, apperr.New(apperr.RateLimited,
				"Too many checkout requests from your address; wait a minute (see Retry-After) and try again."))
		}),
		httprate.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) { writeError(w, r, s.log, err) }),
	}
	if s.rateCounts != nil {
		opts = append(opts, httprate.WithLimitCounter(s.rateCounts))
	}
	limit := httprate.LimitBy(checkoutRequests, checkoutWindow, clientIPKey, opts...)
	resolve := s.clientIP()
	return func(next http.Handler) http.Handler { return resolve(limit(next)) }
}

// clientIPKey is the rate-limit key: the client IP the resolver stored,
// else the peer address.
func clientIPKey(r *http.Request) (string, error) {
	ip := middleware.GetClientIP(r.Context())
	if ip == "" {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		ip = host
	}
	return httprate.CanonicalizeIP(ip), nil
}

// billingReturnPage is the page a checkout returns to (the success and
// cancel URLs given to the payment provider).
func (s *Server) billingReturnPage(success bool) http.HandlerFunc {
	return s.h(func(w http.ResponseWriter, _ *http.Request, _ access.Scope) error {
		return html(w, http.StatusOK, func(out io.Writer) error { return web.RenderBillingReturn(out, success) })
	})
}
