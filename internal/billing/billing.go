// Package billing sells the paid Campaigns add-on through the payment
// provider (Stripe, through stripe-go): it starts a subscription Checkout
// Session for a team, and turns the provider's signed webhook events into
// the team's add-on state (active on a completed checkout, canceled when
// the subscription ends), handling each event once however often the
// provider delivers it.
package billing

import (
	"bytes"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/enum"
)

// Plan is how often the add-on is billed.
type Plan string

// Currency is the currency a checkout is billed in (ISO 4217, lower case).
type Currency string

// Plans and currencies a checkout may ask for; each pair has its own price
// id in the configuration (STRIPE_PRICE_<PLAN>_<CURRENCY>).
var (
	Plans      = []Plan{"monthly", "yearly"}
	Currencies = []Currency{"usd", "eur", "gbp"}
)

// OneOf lists the plans for the `enum` validation tag.
func (Plan) OneOf() []string { return enum.Strings(Plans) }

// OneOf lists the currencies for the `enum` validation tag.
func (Currency) OneOf() []string { return enum.Strings(Currencies) }

// ParsePlan reads a checkout's `plan`.
func ParsePlan(s string) (Plan, error) {
	return enum.Parse(Plans, "`plan`", s)
}

// ParseCurrency reads a checkout's `currency`.
func ParseCurrency(s string) (Currency, error) {
	return enum.Parse(Currencies, "`currency`", s)
}

// CheckoutInput is the body of POST /api/payments/create-campaign-checkout.
// TeamID is optional: the handler may name the team through X-Book-ID, or
// the user's only team is meant.
type CheckoutInput struct {
	Plan     Plan      `json:"plan" validate:"required,enum"`
	Currency Currency  `json:"currency" validate:"required,enum"`
	TeamID   uuid.UUID `json:"team_id"`
}

// Checkout is a started checkout: the client sends the user to URL.
type Checkout struct {
	URL string `json:"url"`
}

// Webhook outcomes, stored with each handled event and answered to the
// provider (whose dashboard shows the response body to operators).
const (
	OutcomeApplied     = "applied"      // the team's add-on changed (or its provider ids were recorded)
	OutcomeDuplicate   = "duplicate"    // this event id was handled before; nothing changed
	OutcomeIgnored     = "ignored"      // an event type or status that changes nothing
	OutcomeUnknownTeam = "unknown_team" // no team matches the event; logged, not retried
	OutcomeStale       = "stale"        // older than what the team already has, or about a replaced subscription
)

// Outcomes is every webhook outcome.
var Outcomes = []string{OutcomeApplied, OutcomeDuplicate, OutcomeIgnored, OutcomeUnknownTeam, OutcomeStale}

// WebhookResult says what handling a webhook event did.
type WebhookResult struct {
	EventID string `json:"event_id"`
	Type    string `json:"type"`
	Outcome string `json:"outcome"`
}

// Event types acted on; every other type is acknowledged and ignored.
const (
	eventCheckoutCompleted     = "checkout.session.completed"
	eventAsyncPaymentSucceeded = "checkout.session.async_payment_succeeded"
	eventSubscriptionUpdated   = "customer.subscription.updated"
	eventSubscriptionDeleted   = "customer.subscription.deleted"
)

// metadataTeamID is the metadata key carrying the team on sessions and
// subscriptions this service creates.
const metadataTeamID = "team_id"

// checkoutSession holds the few Checkout Session fields the webhook reads.
// They are decoded here rather than into stripe-go's full types so that an
// event of a newer provider API version, whose other fields may have
// changed shape, still decodes.
type checkoutSession struct {
	ID                string            `json:"id"`
	Mode              string            `json:"mode"`
	PaymentStatus     string            `json:"payment_status"`
	ClientReferenceID string            `json:"client_reference_id"`
	Metadata          map[string]string `json:"metadata"`
	Customer          objectID          `json:"customer"`
	Subscription      objectID          `json:"subscription"`
}

// subscription holds the few Subscription fields the webhook reads.
type subscription struct {
	ID       string            `json:"id"`
	Status   string            `json:"status"`
	Metadata map[string]string `json:"metadata"`
	Customer objectID          `json:"customer"`
}

// objectID is a reference the provider sends either as an id string or,
// when expanded, as the object itself.
type objectID string

func (o *objectID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*o = ""
		return nil
	case len(b) > 0 && b[0] == '{':
		var obj struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(b, &obj); err != nil {
			return err
		}
		*o = objectID(obj.ID)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*o = objectID(s)
	return nil
}

// addonForStatus maps a subscription status to the add-on state it means;
// "" means the status changes nothing.
//
//   - active, trialing: the add-on is paid for.
//   - canceled, unpaid, incomplete_expired, paused: the subscription no
//     longer pays; the add-on ends.
//   - past_due: a renewal payment failed and the provider is retrying it
//     (dunning). The team keeps the add-on meanwhile; when retries run out
//     the provider moves the subscription to canceled or unpaid, which ends
//     it then.
//   - incomplete: the first payment is still pending; the checkout event
//     has not activated anything yet, so there is nothing to change.
func addonForStatus(status string) accounts.AddonState {
	switch status {
	case "active", "trialing":
		return accounts.AddonActive
	case "canceled", "unpaid", "incomplete_expired", "paused":
		return accounts.AddonCanceled
	}
	return ""
}
