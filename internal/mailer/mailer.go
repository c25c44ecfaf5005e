// Package mailer sends emails through the provider a book chose:
// SendGrid, an SMTP relay or Amazon SES. A Dispatcher takes a Batch (one
// shared body, one personalization per recipient) and reports one Result
// per recipient, whatever the provider; Send is the one-recipient form.
//
// SendGrid goes through its v3 mail/send API
// (github.com/sendgrid/sendgrid-go) in batches: one request carries one shared
// HTML body and up to MaxBatch personalizations, each with its own recipient,
// subject, substitutions, headers and custom args, which is what makes high
// throughput possible. The base URL is configurable so tests and benchmarks
// talk to the fake in mailer/mailertest. Failures come back as *Error,
// classified for the caller's retry decision: a provider 4xx is permanent
// (the request itself is wrong and would fail again) and carries the
// provider's own message; 429, 5xx, network errors and timeouts are
// transient.
package mailer

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// MaxBatch is the most personalizations SendGrid accepts in one request.
const MaxBatch = 1000

// SendGrid's limits per personalization: more makes it reject the whole
// request with 400. A recipient whose substitutions would exceed them has to
// be sent on its own with its HTML rendered directly.
const (
	MaxSubstitutions     = 100
	MaxSubstitutionBytes = 10000 // keys and values together
)

// Personalization is one recipient of a batch (SendGrid "personalizations" item).
type Personalization struct {
	To            string            // recipient address
	ToName        string            // optional display name
	Subject       string            // fully rendered subject for this recipient
	Substitutions map[string]string // placeholder -> value, applied by the provider to the shared HTML
	Headers       map[string]string // e.g. List-Unsubscribe, List-Unsubscribe-Post
	CustomArgs    map[string]string // e.g. participant_id, step_id (echoed in provider events)
}

// Batch is one provider request: one shared HTML body, up to MaxBatch recipients.
type Batch struct {
	APIKey           string
	FromEmail        string
	FromName         string
	ReplyTo          string // optional
	HTML             string // shared body containing the placeholders
	Text             string // optional text/plain alternative, sent before the HTML as SendGrid requires
	Personalizations []Personalization
	// Tracking switches the provider's open and click tracking for the
	// batch (sent explicitly, so the book's choice overrides the provider
	// account's defaults); nil leaves the account's defaults.
	Tracking *Tracking
	// Account is the book's provider when a Dispatcher sends the batch;
	// nil (or a SendGrid account) sends it to SendGrid with APIKey.
	Account *Account
}

// Tracking is SendGrid's tracking_settings: open tracking adds a pixel,
// click tracking rewrites links (in the HTML and the text part).
type Tracking struct {
	Opens  bool
	Clicks bool
}

// Sender sends batches. Implementations are safe for concurrent use.
type Sender interface {
	// Send makes one provider request for the whole batch. messageID is the
	// provider's X-Message-Id response header. A failure is an *Error.
	Send(ctx context.Context, b Batch) (messageID string, err error)
}

// Error classifies a failed send.
type Error struct {
	Permanent bool   // provider 4xx: do not retry; Message is the provider's error text
	Status    int    // HTTP status, 0 for network errors and requests never sent
	Message   string // human readable, safe to store as result_detail
	// BadAddress is set when the provider refused the recipient's
	// address itself (SMTP 550, 551, 553): the address is suppressed.
	BadAddress bool
	cause      error // the underlying network or context error, if any
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return "mailer: " + e.Message
	}
	if e.Status < 100 || e.Status >= 600 || strings.HasPrefix(e.Message, fmt.Sprint(e.Status)) {
		return "mailer: " + e.Message
	}
	return fmt.Sprintf("mailer: HTTP %d: %s", e.Status, e.Message)
}

// Unwrap exposes the network or context error, so errors.Is(err,
// context.Canceled) works.
func (e *Error) Unwrap() error { return e.cause }

// statusText is "503 Service Unavailable".
func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return fmt.Sprint(code)
}
