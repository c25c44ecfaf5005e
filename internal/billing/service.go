package billing

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/client"
	"github.com/stripe/stripe-go/v76/webhook"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/validate"
)

// Teams is what billing needs from accounts: the team's add-on and the
// provider ids stored with it, and the one place the add-on is written.
type Teams interface {
	Addon(ctx context.Context, teamID uuid.UUID) (accounts.Addon, error)
	PaymentCustomer(ctx context.Context, teamID uuid.UUID) (string, error)
	PaymentTeam(ctx context.Context, db postgres.DB, subscriptionID string) (uuid.UUID, error)
	ApplyPayment(ctx context.Context, db postgres.DB, u accounts.PaymentUpdate) (bool, error)
	RequestTeam(ctx context.Context, actor *auth.Actor, given uuid.UUID) (uuid.UUID, error)
}

// Config is billing's part of the service configuration.
type Config struct {
	// SecretKey is the provider's secret API key; empty turns checkout off.
	SecretKey string
	// WebhookSecret verifies the provider's webhook signatures; empty turns
	// the webhook off.
	WebhookSecret string
	// APIBase is the provider's API address (stripe-mock in tests).
	APIBase string
	// Prices maps "<plan>_<currency>" to the provider's price id.
	Prices map[string]string
	// PublicBaseURL is where the provider sends the user back after checkout.
	PublicBaseURL string
	// HTTPClient talks to the provider; nil means one with a 30 s timeout.
	HTTPClient *http.Client
}

// Service starts checkouts and handles the provider's webhook events.
type Service struct {
	db            postgres.Pool
	teams         Teams
	api           *client.API // nil when checkout is off
	prices        map[string]string
	publicBaseURL string
	webhookSecret string
	now           func() time.Time
	log           *slog.Logger
	st            store
}

// Deps are what the service works with.
type Deps struct {
	DB     postgres.Pool
	Teams  Teams
	Config Config
	Now    func() time.Time // nil: time.Now
	Log    *slog.Logger
}

// NewService wires the service. Without a secret key checkout answers
// SERVICE_UNAVAILABLE; without a webhook secret so does the webhook.
func NewService(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	s := &Service{
		db: d.DB, teams: d.Teams, prices: d.Config.Prices, webhookSecret: d.Config.WebhookSecret,
		publicBaseURL: strings.TrimRight(d.Config.PublicBaseURL, "/"), now: d.Now, log: d.Log,
	}
	if d.Config.SecretKey != "" {
		s.api = newStripeClient(d.Config.SecretKey, d.Config.APIBase, d.Config.HTTPClient, d.Log)
	}
	return s
}

// CheckoutTeam picks the team a checkout bills: the team of the scope's
// book when the request names one (its membership already proven), else
// the request's team (accounts' rule). The admin rule is CreateCheckout's.
func (s *Service) CheckoutTeam(ctx context.Context, sc access.Scope, given uuid.UUID) (uuid.UUID, error) {
	if !sc.InBook() {
		return s.teams.RequestTeam(ctx, sc.Actor, given)
	}
	b := sc.Book
	if given != uuid.Nil && given != b.TeamID {
		return uuid.Nil, apperr.Invalidf("team_id and the book in X-Book-ID belong to different teams; send only one of them.")
	}
	return b.TeamID, nil
}

// CheckoutEnabled reports whether checkout can talk to the provider.
func (s *Service) CheckoutEnabled() bool { return s.api != nil }

// WebhookEnabled reports whether provider events can be verified.
func (s *Service) WebhookEnabled() bool { return s.webhookSecret != "" }

var (
	errTeamNotFound     = apperr.NotFoundf("No team with this id.")
	errCheckoutDisabled = apperr.New(apperr.Unavailable,
		"Billing is not configured on this server (no payment provider key); the Campaigns add-on cannot be bought here. Ask the operator to set STRIPE_SECRET_KEY.")
	errWebhookDisabled = apperr.New(apperr.Unavailable,
		"Billing webhooks are not configured on this server; the operator must set STRIPE_WEBHOOK_SECRET.")
)

// CreateCheckout starts a subscription checkout of the Campaigns add-on
// for the team (team admins only) and returns the address to send the user
// to. The team id travels in the session's client_reference_id and
// metadata, and in the subscription's metadata, so the webhook can find
// the team again.
func (s *Service) CreateCheckout(ctx context.Context, actor *auth.Actor, teamID uuid.UUID, in CheckoutInput) (Checkout, error) {
	if err := actor.Require(ctx, teamID, auth.RoleAdmin, errTeamNotFound); err != nil {
		return Checkout{}, err
	}
	if err := validate.Struct(in); err != nil {
		return Checkout{}, err
	}
	if s.api == nil {
		return Checkout{}, errCheckoutDisabled
	}
	plan, currency := string(in.Plan), string(in.Currency)
	price := s.prices[plan+"_"+currency]
	if price == "" {
		return Checkout{}, apperr.New(apperr.Unavailable,
			"No price is configured for the %s plan in %s; the operator must set STRIPE_PRICE_%s_%s.",
			plan, strings.ToUpper(currency), strings.ToUpper(plan), strings.ToUpper(currency))
	}
	addon, err := s.teams.Addon(ctx, teamID)
	if err != nil {
		return Checkout{}, err
	}
	// A second subscription would bill the team twice for one add-on.
	if addon.Paid() {
		return Checkout{}, apperr.New(apperr.Conflict, "This team already has the paid Campaigns add-on; there is nothing to buy.")
	}
	customer, err := s.teams.PaymentCustomer(ctx, teamID)
	if err != nil {
		return Checkout{}, err
	}

	team := teamID.String()
	params := &stripe.CheckoutSessionParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModeSubscription)),
		LineItems:         []*stripe.CheckoutSessionLineItemParams{{Price: stripe.String(price), Quantity: stripe.Int64(1)}},
		ClientReferenceID: stripe.String(team),
		Metadata:          map[string]string{metadataTeamID: team, "plan": plan},
		SubscriptionData: &stripe.CheckoutSessionSubscriptionDataParams{
			Metadata: map[string]string{metadataTeamID: team, "plan": plan},
		},
		SuccessURL: stripe.String(s.publicBaseURL + "/billing/success?session_id={CHECKOUT_SESSION_ID}"),
		CancelURL:  stripe.String(s.publicBaseURL + "/billing/cancel"),
	}
	// A team that paid before keeps its customer (and payment methods).
	if customer != "" {
		params.Customer = stripe.String(customer)
	}
	params.Context = ctx
	sess, err := s.api.CheckoutSessions.New(params)
	if err != nil {
		return Checkout{}, providerError(err)
	}
	if sess.URL == "" {
		return Checkout{}, apperr.New(apperr.Unavailable, "The payment provider did not return a checkout address; try again in a minute.")
	}
	s.log.InfoContext(ctx, "checkout started", "team_id", teamID, "session_id", sess.ID, "plan", plan, "currency", currency)
	return Checkout{URL: sess.URL}, nil
}

// providerError turns a failed provider call into a 503 whose cause is
// logged: a request the provider refuses (an unknown price id, a bad key)
// is a configuration problem on this side, never the user's fault.
func providerError(err error) error {
	var se *stripe.Error
	if errors.As(err, &se) && se.HTTPStatusCode >= 400 && se.HTTPStatusCode < 500 {
		return apperr.Wrap(err, apperr.Unavailable,
			"The payment provider refused to start a checkout; the billing configuration needs the operator's attention.")
	}
	return apperr.Wrap(err, apperr.Unavailable, "The payment provider is not reachable right now; try again in a minute.")
}

// HandleWebhook verifies a provider event delivered to the webhook and
// applies it: the signature is checked over the exact body bytes, the
// event id is recorded in the same transaction as the change, so a retried
// or replayed event changes nothing. Events that change nothing (other
// types, a team that does not exist) are recorded and acknowledged, so the
// provider stops retrying them.
func (s *Service) HandleWebhook(ctx context.Context, payload []byte, signature string) (WebhookResult, error) {
	if s.webhookSecret == "" {
		return WebhookResult{}, errWebhookDisabled
	}
	// The provider sends events in the API version of the webhook endpoint,
	// which may be newer than stripe-go v76's; only the envelope and a few
	// long-stable fields are read (see checkoutSession), so a version
	// mismatch is no reason to refuse the event.
	ev, err := webhook.ConstructEventWithOptions(payload, signature, s.webhookSecret,
		webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	if err != nil {
		return WebhookResult{}, signatureError(err)
	}
	if ev.ID == "" || ev.Type == "" || ev.Data == nil {
		return WebhookResult{}, apperr.Invalidf("The event has no id, type or data; nothing was changed.")
	}
	res := WebhookResult{EventID: ev.ID, Type: string(ev.Type)}
	ch, err := interpret(ev)
	if err != nil {
		s.log.WarnContext(ctx, "payment event not understood", "event_id", ev.ID, "type", ev.Type, "err", err)
		return WebhookResult{}, apperr.Wrap(err, apperr.InvalidInput, "The event's data object could not be read; nothing was changed.")
	}
	created := time.Unix(ev.Created, 0).UTC()
	if ev.Created == 0 {
		created = s.now()
	}
	ch.update.At = created

	var teamID *uuid.UUID
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		first, err := s.st.claimEvent(ctx, tx, ev.ID, string(ev.Type), created, s.now())
		if err != nil {
			return err
		}
		if !first {
			res.Outcome = OutcomeDuplicate
			return nil
		}
		res.Outcome, teamID, err = s.apply(ctx, tx, ch)
		if err != nil {
			return err
		}
		return s.st.setOutcome(ctx, tx, ev.ID, res.Outcome, teamID)
	})
	if err != nil {
		return WebhookResult{}, err
	}
	switch res.Outcome {
	case OutcomeUnknownTeam:
		// Acknowledged anyway: retrying cannot make the team exist, and a
		// provider that keeps failing deliveries disables the endpoint.
		s.log.WarnContext(ctx, "payment event for an unknown team ignored", "event_id", ev.ID, "type", ev.Type,
			"team_ref", ch.teamRef, "subscription_id", ch.update.SubscriptionID)
	case OutcomeApplied:
		s.log.InfoContext(ctx, "payment event applied", "event_id", ev.ID, "type", ev.Type, "team_id", teamID,
			"addon", ch.update.State, "subscription_id", ch.update.SubscriptionID)
	default:
		s.log.InfoContext(ctx, "payment event acknowledged", "event_id", ev.ID, "type", ev.Type, "outcome", res.Outcome,
			"note", ch.note)
	}
	return res, nil
}

func signatureError(err error) error {
	switch {
	case errors.Is(err, webhook.ErrNotSigned):
		return apperr.Invalidf("The Stripe-Signature header is missing; nothing was changed.")
	case errors.Is(err, webhook.ErrTooOld):
		return apperr.Invalidf("The Stripe-Signature timestamp is more than 5 minutes old; nothing was changed.")
	case errors.Is(err, webhook.ErrInvalidHeader), errors.Is(err, webhook.ErrNoValidSignature):
		return apperr.Invalidf("The Stripe-Signature header does not match the body for this endpoint's secret; nothing was changed.")
	}
	return apperr.Wrap(err, apperr.InvalidInput, "The body is not a payment provider event; nothing was changed.")
}

// change is what an event asks of a team's add-on.
type change struct {
	act     bool   // false: the event changes nothing
	note    string // why nothing, for the log
	teamRef string // team id as the event carries it ("" when it carries none)
	update  accounts.PaymentUpdate
}

// interpret reads an event into the change it asks for.
func interpret(ev stripe.Event) (change, error) {
	switch ev.Type {
	case eventCheckoutCompleted, eventAsyncPaymentSucceeded:
		var cs checkoutSession
		if err := json.Unmarshal(ev.Data.Raw, &cs); err != nil {
			return change{}, err
		}
		if cs.Mode != string(stripe.CheckoutSessionModeSubscription) {
			return change{note: "checkout of mode " + cs.Mode + " is not an add-on subscription"}, nil
		}
		ref := cs.ClientReferenceID
		if ref == "" {
			ref = cs.Metadata[metadataTeamID]
		}
		state := accounts.AddonActive
		// Paid by a method that settles later (bank debit): the ids are
		// kept, the add-on waits for async_payment_succeeded or for the
		// subscription to turn active.
		if ev.Type == eventCheckoutCompleted && cs.PaymentStatus == string(stripe.CheckoutSessionPaymentStatusUnpaid) {
			state = ""
		}
		return change{act: true, teamRef: ref, update: accounts.PaymentUpdate{
			State: state, CustomerID: string(cs.Customer), SubscriptionID: string(cs.Subscription),
		}}, nil

	case eventSubscriptionUpdated, eventSubscriptionDeleted:
		var sub subscription
		if err := json.Unmarshal(ev.Data.Raw, &sub); err != nil {
			return change{}, err
		}
		state := accounts.AddonCanceled
		if ev.Type == eventSubscriptionUpdated {
			state = addonForStatus(sub.Status)
		}
		if state == "" {
			return change{note: "subscription status " + sub.Status + " keeps the add-on as it is"}, nil
		}
		return change{act: true, teamRef: sub.Metadata[metadataTeamID], update: accounts.PaymentUpdate{
			State: state, CustomerID: string(sub.Customer), SubscriptionID: sub.ID, SameSubscription: true,
		}}, nil
	}
	return change{note: "event type not used"}, nil
}

// apply resolves the event's team and writes the change through accounts.
func (s *Service) apply(ctx context.Context, tx *postgres.Tx, ch change) (string, *uuid.UUID, error) {
	if !ch.act {
		return OutcomeIgnored, nil, nil
	}
	teamID, err := uuid.Parse(ch.teamRef)
	if err != nil {
		if ch.update.SubscriptionID == "" {
			return OutcomeUnknownTeam, nil, nil
		}
		teamID, err = s.teams.PaymentTeam(ctx, tx, ch.update.SubscriptionID)
		if apperr.Is(err, apperr.NotFound) {
			return OutcomeUnknownTeam, nil, nil
		}
		if err != nil {
			return "", nil, err
		}
	}
	ch.update.TeamID = teamID
	applied, err := s.teams.ApplyPayment(ctx, tx, ch.update)
	if apperr.Is(err, apperr.NotFound) {
		return OutcomeUnknownTeam, nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	if !applied {
		return OutcomeStale, &teamID, nil
	}
	return OutcomeApplied, &teamID, nil
}
