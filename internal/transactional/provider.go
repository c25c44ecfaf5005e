package transactional

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/mailer"
)

// Email is one message as a provider sends it: the book whose sending
// settings it goes out with, the recipient, the rendered subject and
// body, and the message id that provider feedback names it by.
type Email struct {
	BookID    uuid.UUID
	MessageID uuid.UUID
	To        string
	ToName    string
	ReplyTo   string // "" takes the book's
	Subject   string
	HTML      string
}

// Provider sends one email with the book's sending settings. A failure is
// temporary (retried) unless it is a *Failure with Permanent set.
type Provider interface {
	Send(ctx context.Context, e Email) (providerMessageID string, err error)
}

// Failure is a send that failed; Detail is safe to show.
type Failure struct {
	Permanent bool
	// BadAddress: the provider refused the recipient's address itself
	// (SMTP 550, 551, 553); the address is suppressed.
	BadAddress bool
	Detail     string
	Err        error
}

func (f *Failure) Error() string { return f.Detail }
func (f *Failure) Unwrap() error { return f.Err }

// BookSenders reads a book's sending settings (campaigns.Service).
type BookSenders interface {
	BookSender(ctx context.Context, bookID uuid.UUID) (campaigns.BookSender, bool, error)
}

// SettingsTTL is how long BookMailer keeps a book's settings between
// sends: a burst to one book reads (and decrypts) them once, and a change
// applies within the TTL.
const SettingsTTL = 5 * time.Second

// BookMailer sends through the book's provider (SendGrid, SMTP or SES,
// mailer.Dispatcher picks), as campaign emails go, one personalization
// per message.
type BookMailer struct {
	mail  mailer.Sender
	books BookSenders
	now   func() time.Time

	mu    sync.Mutex
	cache map[uuid.UUID]cachedSender
}

type cachedSender struct {
	s  campaigns.BookSender
	ok bool
	at time.Time
}

// NewBookMailer returns the provider over the mailer and the books' settings.
func NewBookMailer(mail mailer.Sender, books BookSenders) *BookMailer {
	return &BookMailer{mail: mail, books: books, now: time.Now, cache: map[uuid.UUID]cachedSender{}}
}

func (p *BookMailer) sender(ctx context.Context, bookID uuid.UUID) (campaigns.BookSender, bool, error) {
	now := p.now()
	p.mu.Lock()
	c, hit := p.cache[bookID]
	p.mu.Unlock()
	if hit && now.Sub(c.at) < SettingsTTL {
		return c.s, c.ok, nil
	}
	s, ok, err := p.books.BookSender(ctx, bookID)
	if err != nil {
		return s, false, err
	}
	p.mu.Lock()
	p.cache[bookID] = cachedSender{s: s, ok: ok, at: now}
	p.mu.Unlock()
	return s, ok, nil
}

// Send makes one mail/send request. The message id travels as the
// custom argument transactional_id, which the provider's events echo.
func (p *BookMailer) Send(ctx context.Context, e Email) (string, error) {
	bs, ok, err := p.sender(ctx, e.BookID)
	if err != nil {
		return "", &Failure{Detail: "email settings could not be read", Err: err}
	}
	if !ok {
		return "", &Failure{Permanent: true, Detail: "the book's email settings lack a sender address or a provider"}
	}
	replyTo := e.ReplyTo
	if replyTo == "" {
		replyTo = bs.ReplyTo
	}
	id, err := p.mail.Send(ctx, mailer.Batch{
		APIKey: bs.APIKey, Account: bs.Account, FromEmail: bs.FromEmail, FromName: bs.FromName, ReplyTo: replyTo, HTML: e.HTML,
		Tracking: &mailer.Tracking{Opens: bs.TrackOpens, Clicks: bs.TrackClicks},
		Personalizations: []mailer.Personalization{{
			To: e.To, ToName: e.ToName, Subject: e.Subject,
			CustomArgs: map[string]string{"transactional_id": e.MessageID.String()},
		}},
	})
	if err == nil {
		return id, nil
	}
	var me *mailer.Error
	if errors.As(err, &me) {
		return "", &Failure{Permanent: me.Permanent, BadAddress: me.BadAddress, Detail: me.Message, Err: err}
	}
	return "", &Failure{Detail: err.Error(), Err: err}
}
