package mailer

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"time"

	"github.com/contactbook/contactbook/internal/postgres"
)

// DispatcherConfig is what a Dispatcher is built from.
type DispatcherConfig struct {
	// SendGrid sends the batches of SendGrid accounts (NewSender).
	SendGrid Sender
	// DB holds the books' max_send_rate schedules across instances; nil
	// holds them per instance.
	DB postgres.DB
	// SESEndpoint replaces the region's SES API base (tests); "" is the
	// region's own.
	SESEndpoint string
	// SESHTTP is the HTTP client for SES (nil: one of its own).
	SESHTTP *http.Client
	// RootCAs are the roots trusted for SMTP TLS (nil: the system's).
	RootCAs *x509.CertPool
	// AllowInsecure permits smtp_security none.
	AllowInsecure bool
	Now           func() time.Time
}

// Dispatcher sends through each book's provider. It keeps per book and
// instance the SMTP connection pool, the SES client and the pace.
type Dispatcher struct {
	sendgrid Sender
	smtp     *smtpPools
	ses      *sesClients
	pace     *Pace
}

// NewDispatcher builds a dispatcher.
func NewDispatcher(c DispatcherConfig) *Dispatcher {
	return &Dispatcher{
		sendgrid: c.SendGrid,
		smtp:     newSMTPPools(c.RootCAs, c.AllowInsecure),
		ses:      newSESClients(c.SESEndpoint, c.SESHTTP),
		pace:     NewPace(c.DB, c.Now),
	}
}

// Pace is the dispatcher's pace (to read a book's slowdown).
func (d *Dispatcher) Pace() *Pace { return d.pace }

// Send sends a batch of one recipient (or the first result of a larger
// one) and implements Sender: a transactional or confirmation email goes
// out through the same provider, pace and failure rules as a campaign.
func (d *Dispatcher) Send(ctx context.Context, b Batch) (string, error) {
	if len(b.Personalizations) == 0 {
		return "", &Error{Permanent: true, Message: "a batch needs at least one recipient"}
	}
	if b.Account.provider() == ProviderSendGrid && (b.Account == nil || b.Account.MaxRate == 0) {
		return d.sendgrid.Send(ctx, b)
	}
	res := d.Deliver(ctx, b)
	for _, r := range res {
		if r.Err != nil {
			return "", r.Err
		}
	}
	return res[0].MessageID, nil
}

// SendMessage sends one message through the account a (nil: SendGrid
// with apiKey) and returns its provider message id.
func (d *Dispatcher) SendMessage(ctx context.Context, a *Account, apiKey string, m Message) (string, error) {
	b := Batch{
		APIKey: apiKey, FromEmail: m.FromEmail, FromName: m.FromName, ReplyTo: m.ReplyTo, HTML: m.HTML, Text: m.Text,
		Account:          a,
		Personalizations: []Personalization{{To: m.To, ToName: m.ToName, Subject: m.Subject, Headers: m.Headers, CustomArgs: m.Tags}},
	}
	if a.provider() == ProviderSendGrid {
		return d.Send(ctx, b)
	}
	// One message: keep its own Message-ID, if it has one.
	msgs := b.messages()
	msgs[0].MessageID = m.MessageID
	res := d.deliverMessages(ctx, a, msgs)
	return res[0].MessageID, res[0].Err
}

// Deliver sends the batch through its account's provider and returns one
// Result per personalization, in order. SendGrid takes the batch in one
// request (several when a send rate asks for smaller ones), every
// recipient sharing its message id and error; SMTP and SES send one
// message per recipient, each with its own id (SMTP: the service's own
// Message-ID) and its own error.
func (d *Dispatcher) Deliver(ctx context.Context, b Batch) []Result {
	if b.Account.provider() == ProviderSendGrid {
		return d.deliverSendGrid(ctx, b)
	}
	return d.deliverMessages(ctx, b.Account, b.messages())
}

func (d *Dispatcher) deliverMessages(ctx context.Context, a *Account, msgs []Message) []Result {
	switch a.provider() {
	case ProviderSMTP:
		return d.deliverSMTP(ctx, a, msgs)
	case ProviderSES:
		return d.deliverSES(ctx, a, msgs)
	}
	out := make([]Result, len(msgs))
	for i := range out {
		out[i].Err = &Error{Permanent: true, Message: "unknown email provider " + a.Provider}
	}
	return out
}

// deliverSendGrid sends the batch as one request, or with a send rate
// as requests of at most a tenth of a second's worth of recipients, each
// at its time on the book's schedule.
func (d *Dispatcher) deliverSendGrid(ctx context.Context, b Batch) []Result {
	out := make([]Result, len(b.Personalizations))
	size := len(b.Personalizations)
	var sched *schedule
	if b.Account != nil && b.Account.MaxRate > 0 {
		size = maxTake(b.Account.MaxRate)
		sched = d.pace.schedule(b.Account)
	}
	for start := 0; start < len(out); start += size {
		end := min(start+size, len(out))
		part := b
		part.Personalizations = b.Personalizations[start:end]
		var id string
		var err error
		if sched != nil {
			// The part's first time on the schedule; the schedule took
			// as many times as the part has recipients.
			for k := start; k < end && err == nil; k++ {
				err = sched.wait(ctx, len(out)-k)
			}
		}
		if err == nil {
			id, err = d.sendgrid.Send(ctx, part)
		}
		var me *Error
		if err != nil && b.Account != nil && (!errors.As(err, &me) || !me.Permanent) {
			d.pace.slowDown(b.Account)
		}
		for k := start; k < end; k++ {
			out[k] = Result{MessageID: id, Err: err}
		}
	}
	return out
}

// SweepIdle closes SMTP connections idle for longer than their keep-alive.
func (d *Dispatcher) SweepIdle() { d.smtp.sweep(smtpIdle) }

// Close closes every idle SMTP connection.
func (d *Dispatcher) Close() { d.smtp.sweep(0) }

// Verify tries the account for real without sending an email: SMTP
// connects, starts TLS as set and authenticates; SES asks GetAccount;
// SendGrid asks for the key's scopes. detail says what happened, never a
// secret.
func (d *Dispatcher) Verify(ctx context.Context, a *Account, apiKey string) (ok bool, detail string) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	switch a.provider() {
	case ProviderSMTP:
		return d.verifySMTP(ctx, a)
	case ProviderSES:
		return d.verifySES(ctx, a)
	}
	v, ok := d.sendgrid.(interface {
		Verify(ctx context.Context, apiKey string) (bool, string)
	})
	if !ok {
		return false, "this SendGrid client cannot verify keys"
	}
	if apiKey == "" {
		return false, "mailer_api_key is not set"
	}
	return v.Verify(ctx, apiKey)
}
