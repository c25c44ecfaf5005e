package mailer

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	gomail "github.com/wneessen/go-mail"
)

// Message is one email to one recipient, whatever the provider. It is
// what an SMTP relay and SES receive (as MIME built by Build), and what
// a batch's personalization becomes for them.
type Message struct {
	FromEmail, FromName string
	ReplyTo             string // optional
	To, ToName          string
	Subject             string
	HTML                string
	Text                string // optional: "" sends PlainText(HTML)
	// Headers are extra headers, e.g. List-Unsubscribe and
	// List-Unsubscribe-Post.
	Headers map[string]string
	// Tags name the email for the provider's feedback (SendGrid custom
	// args, SES message tags).
	Tags map[string]string
	// MessageID is the Message-ID without its angle brackets; "" makes a
	// new one (NewMessageID).
	MessageID string
	Date      time.Time // zero: now
}

// NewMessageID is a Message-ID of the service's own: a random UUID at
// the sender's domain, without angle brackets. It is what the email's
// provider_message_id records and what a delivery status notification
// quotes back.
func NewMessageID(fromEmail string) string {
	domain := "contactbook.invalid"
	if at := strings.LastIndexByte(fromEmail, '@'); at >= 0 && at < len(fromEmail)-1 {
		domain = strings.ToLower(headerText(fromEmail[at+1:]))
	}
	return uuid.NewString() + "@" + domain
}

// NormalizeMessageID is a Message-ID as recorded: trimmed, without angle
// brackets.
func NormalizeMessageID(id string) string {
	id = strings.TrimSpace(id)
	id = strings.TrimPrefix(id, "<")
	id = strings.TrimSuffix(id, ">")
	return strings.TrimSpace(id)
}

// build makes the go-mail message: every header value goes through
// headerText first (no value can end its header and start another),
// go-mail encodes (RFC 2047) and folds them, and the body is
// multipart/alternative, text first, then HTML, each quoted-printable.
func (m *Message) build() (*gomail.Msg, error) {
	if m.MessageID == "" {
		m.MessageID = NewMessageID(m.FromEmail)
	}
	msg := gomail.NewMsg(gomail.WithEncoding(gomail.EncodingQP), gomail.WithCharset(gomail.CharsetUTF8), gomail.WithNoDefaultUserAgent())
	if err := msg.FromFormat(headerText(m.FromName), headerText(m.FromEmail)); err != nil {
		return nil, &Error{Permanent: true, Message: "invalid sender address: " + headerText(m.FromEmail)}
	}
	if err := msg.AddToFormat(headerText(m.ToName), headerText(m.To)); err != nil {
		return nil, &Error{Permanent: true, Message: "invalid recipient address: " + headerText(m.To)}
	}
	if m.ReplyTo != "" {
		if err := msg.ReplyTo(headerText(m.ReplyTo)); err != nil {
			return nil, &Error{Permanent: true, Message: "invalid reply-to address: " + headerText(m.ReplyTo)}
		}
	}
	msg.Subject(headerText(m.Subject))
	msg.SetMessageIDWithValue(headerText(m.MessageID))
	if m.Date.IsZero() {
		msg.SetDate()
	} else {
		msg.SetDateWithValue(m.Date)
	}
	for k, v := range m.Headers {
		k = headerName(k)
		if k == "" {
			continue
		}
		switch strings.ToLower(k) {
		case "list-unsubscribe":
			// Angle-bracketed URLs must stay as they are: go-mail would
			// encode a long one as words that clients cannot read.
			msg.SetGenHeaderPreformatted(gomail.HeaderListUnsubscribe, headerText(v))
		case "list-unsubscribe-post":
			msg.SetGenHeaderPreformatted(gomail.HeaderListUnsubscribePost, headerText(v))
		default:
			msg.SetGenHeader(gomail.Header(k), headerText(v))
		}
	}
	text := m.Text
	if text == "" {
		text = PlainText(m.HTML)
	}
	msg.SetBodyString(gomail.TypeTextPlain, text)
	msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	return msg, nil
}

// MIME is the whole email as sent: the bytes an SMTP relay gets after
// DATA and SES gets as raw content. It sets m.MessageID when it was
// empty.
func (m *Message) MIME() ([]byte, error) {
	msg, err := m.build()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := msg.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("mailer: write message: %w", err)
	}
	return buf.Bytes(), nil
}

// headerName keeps a header name to the characters RFC 5322 allows in
// one (printable ASCII but the colon); anything else makes it "".
func headerName(k string) string {
	k = strings.TrimSpace(k)
	for i := 0; i < len(k); i++ {
		if c := k[i]; c <= ' ' || c >= 0x7f || c == ':' {
			return ""
		}
	}
	return k
}

// messages are a batch's recipients as single messages: the shared HTML
// (and text) with each recipient's substitutions applied, as SendGrid
// applies them.
func (b *Batch) messages() []Message {
	out := make([]Message, len(b.Personalizations))
	for i, p := range b.Personalizations {
		html, text := b.HTML, b.Text
		if len(p.Substitutions) > 0 {
			pairs := make([]string, 0, 2*len(p.Substitutions))
			for k, v := range p.Substitutions {
				pairs = append(pairs, k, v)
			}
			r := strings.NewReplacer(pairs...)
			html = r.Replace(html)
			if text != "" {
				text = r.Replace(text)
			}
		}
		out[i] = Message{
			FromEmail: b.FromEmail, FromName: b.FromName, ReplyTo: b.ReplyTo,
			To: p.To, ToName: p.ToName, Subject: p.Subject, HTML: html, Text: text,
			Headers: p.Headers, Tags: p.CustomArgs,
		}
	}
	return out
}
