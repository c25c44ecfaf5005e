// Package webhooks sends a team's events to the URLs its admins subscribe.
// It has two halves. The Service manages subscriptions and shows the
// delivery log (team admins only). The Engine is the background worker that
// turns the events outbox into signed HTTP POSTs: it fans each new event out
// into one delivery per subscribed active webhook, then a pool of workers
// claims due deliveries from PostgreSQL (FOR UPDATE SKIP LOCKED plus a
// lease), posts them, logs every attempt and schedules retries. Because the
// queue lives in the database, several instances share the work and a
// crashed one loses nothing: its leases run out and the rows are claimed
// again. Delivery is therefore at least once; receivers deduplicate on
// X-Service-Delivery, the delivery's id (or on event, data.id and
// timestamp).
//
// Around that pipeline: admins send a test event, send one delivery again
// or recover every failed one since a time (a River job, operations.go);
// the engine switches off a webhook that has only failed for
// WEBHOOK_DISABLE_AFTER, keeping its pending deliveries (disable.go); and a
// webhook's rate limit spaces its deliveries across every instance (the
// claim in store.go).
package webhooks

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/optional"
)

// Webhook is a URL subscribed to some of a team's event types.
type Webhook struct {
	ID     uuid.UUID `json:"id"`
	TeamID uuid.UUID `json:"team_id"`
	URL    string    `json:"url"`
	Events []string  `json:"events"`
	Active bool      `json:"active"`
	// RateLimit is the most deliveries a second the webhook gets; nil for
	// no limit. Deliveries beyond it wait their turn.
	RateLimit *int `json:"rate_limit"`
	// DisabledAt and DisabledReason say when and why the service switched
	// the webhook off after it failed for too long; nil otherwise.
	DisabledAt     *time.Time `json:"disabled_at"`
	DisabledReason *string    `json:"disabled_reason"`
	CreatedBy      *uuid.UUID `json:"created_by"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

// Created is the answer to a create: the only time the secret is shown.
type Created struct {
	Webhook Webhook `json:"webhook"`
	Secret  string  `json:"secret"`
}

// CreateInput is a new subscription.
type CreateInput struct {
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	RateLimit *int     `json:"rate_limit"`
}

// Patch changes a subscription; omitted fields stay.
type Patch struct {
	URL    optional.Value[string]   `json:"url"`
	Events optional.Value[[]string] `json:"events"`
	Active optional.Value[bool]     `json:"active"`
	// RateLimit null removes the limit.
	RateLimit optional.Value[int] `json:"rate_limit"`
}

// Attempt is one entry of the delivery log: one HTTP POST to the webhook.
type Attempt struct {
	ID        uuid.UUID `json:"id"`
	WebhookID uuid.UUID `json:"webhook_id"`
	// DeliveryID is the delivery (one event sent to this webhook) the
	// attempt belongs to: the X-Service-Delivery header, the same on every
	// attempt of it.
	DeliveryID uuid.UUID       `json:"delivery_id"`
	EventType  string          `json:"event_type"`
	Payload    json.RawMessage `json:"payload"`
	// ResponseStatus is nil when no HTTP response came back (network
	// error, timeout, refused address); ResponseBody then says why.
	ResponseStatus *int   `json:"response_status"`
	ResponseBody   string `json:"response_body"`
	DurationMS     int    `json:"duration_ms"`
	Success        bool   `json:"success"`
	// Manual marks an attempt an admin asked for (a test, a retry or a
	// recovery) rather than an automatic one.
	Manual    bool      `json:"manual"`
	CreatedAt time.Time `json:"created_at"`
}

// Log page sizes (default 50, max 200, as the API reference documents).
const (
	DefaultLogLimit = 50
	MaxLogLimit     = 200
)

// Rate limits a webhook may have, in deliveries a second.
const (
	MinRateLimit = 1
	MaxRateLimit = 1000
)

// checkRateLimit accepts nil (no limit) or a rate within the bounds.
func checkRateLimit(rate *int) error {
	if rate != nil && (*rate < MinRateLimit || *rate > MaxRateLimit) {
		return apperr.Invalidf("`rate_limit` must be from %d to %d deliveries a second, or null for no limit.", MinRateLimit, MaxRateLimit)
	}
	return nil
}

// maxURLLength bounds a webhook URL; browsers and proxies choke beyond it.
const maxURLLength = 2048

// secretPrefix marks signing secrets, as the Standard Webhooks spec does.
const secretPrefix = "whsec_"

// newSecret makes a signing secret: whsec_ + base64 of 32 random bytes.
func newSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", apperr.Wrap(err, apperr.Internal, "could not generate a signing secret")
	}
	return secretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// normalizeURL checks a webhook URL and returns it trimmed. Only https is
// accepted unless insecure (development) mode allows http too. Outside
// insecure mode, a host that is plainly local (localhost, or an IP literal
// in a refused range) is refused at once so the admin sees the problem
// now; names are resolved only when delivering, where the dial guard
// checks every address (DNS can change after creation).
func normalizeURL(raw string, insecure bool) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", apperr.Invalidf("`url` is required: the HTTPS address that receives the events.")
	}
	if len(raw) > maxURLLength {
		return "", apperr.Invalidf("`url` is longer than %d characters.", maxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
		return "", apperr.Invalidf("`url` must be an absolute URL such as https://example.com/hooks.")
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme == "https":
	case scheme == "http" && insecure:
	default:
		return "", apperr.Invalidf("`url` must start with https://.")
	}
	if !insecure {
		host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
		if host == "localhost" || strings.HasSuffix(host, ".localhost") {
			return "", apperr.Invalidf("`url` must not point at this machine (localhost).")
		}
		if ip, err := netip.ParseAddr(host); err == nil {
			if reason := refusedReason(ip); reason != "" {
				return "", apperr.Invalidf("`url` must point at a public address, not a %s one.", reason)
			}
		}
	}
	return raw, nil
}

// maskedPassword stands for the password of a URL's user info wherever a
// webhook URL is shown: in answers, the delivery log and log lines. It is
// what url.URL.Redacted writes. Deliveries use the real URL (the HTTP
// client sends its user info as Basic authentication).
const maskedPassword = "xxxxx"

// redactedURL is raw with the password of its user info masked:
// https://user:xxxxx@host/path; a URL without a password is shown as it
// is. A URL that does not parse cannot say where its password is, so none
// of it is shown.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparseable URL)"
	}
	if _, ok := u.User.Password(); !ok {
		return raw
	}
	return u.Redacted()
}

// redactIn masks rawURL, and its password, wherever text holds them (error
// texts of URL parsing and of HTTP clients quote the URL).
func redactIn(text, rawURL string) string {
	text = strings.ReplaceAll(text, rawURL, redactedURL(rawURL))
	if pw := rawPassword(rawURL); pw != "" {
		text = strings.ReplaceAll(text, ":"+pw+"@", ":"+maskedPassword+"@")
	}
	return text
}

// rawPassword is the password of raw's user info as written, found without
// parsing the whole URL (which may not parse).
func rawPassword(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(rest[:at], ":")
	return pw
}

// keepPassword lets a client send a URL back as it was shown: when next
// carries the masked password, the stored password stays, but only while
// the scheme, host, port and user are the stored URL's; anywhere else the
// password would go to a receiver it was not meant for, so the caller
// must send it (INVALID_INPUT naming url). Any other URL is taken as
// given.
func keepPassword(next, stored string) (string, error) {
	nu, err := url.Parse(next)
	if err != nil || nu.User == nil {
		return next, nil
	}
	if pw, ok := nu.User.Password(); !ok || pw != maskedPassword {
		return next, nil
	}
	refused := apperr.Invalidf("`url` carries the masked password (%s) but points to another address or user than before; send the password itself.", maskedPassword)
	su, err := url.Parse(stored)
	if err != nil || su.User == nil || !sameReceiver(nu, su) {
		return "", refused
	}
	pw, ok := su.User.Password()
	if !ok {
		return "", refused
	}
	nu.User = url.UserPassword(nu.User.Username(), pw)
	return nu.String(), nil
}

// sameReceiver reports whether a and b name one receiver and user:
// scheme, host, port (the scheme's default when absent) and user name.
func sameReceiver(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "http") {
			return "80"
		}
		return "443"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) &&
		port(a) == port(b) && a.User.Username() == b.User.Username()
}

// redacted is w as answers show it.
func (w Webhook) redacted() Webhook {
	w.URL = redactedURL(w.URL)
	return w
}

// normalizeEvents checks event types: at least one, all known. Duplicates
// are dropped, keeping the first occurrence's order.
func normalizeEvents(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, apperr.Invalidf("`events` must list at least one event type: %s.", strings.Join(events.Types, ", "))
	}
	out := make([]string, 0, len(in))
	for _, t := range in {
		t = strings.TrimSpace(t)
		if !events.Known(t) {
			return nil, apperr.Invalidf("`events` holds the unknown event type %q; use any of %s.", t, strings.Join(events.Types, ", "))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}
