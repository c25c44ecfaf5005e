package mailer

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Providers a book may send through.
const (
	ProviderSendGrid = "sendgrid"
	ProviderSMTP     = "smtp"
	ProviderSES      = "ses"
)

// SMTP connection security.
const (
	SecurityStartTLS = "starttls" // plain connection upgraded with STARTTLS, which must be offered
	SecurityTLS      = "tls"      // implicit TLS from the first byte (port 465)
	SecurityNone     = "none"     // no encryption: only when insecure mail is allowed
)

// Account is the provider configuration one book sends with, secrets in
// the clear: built by the settings' owner for each send, never logged.
type Account struct {
	// Key names the book: SMTP connection pools, the pace after temporary
	// failures and the shared send-rate schedule are kept per key.
	Key      string
	Provider string // ProviderSendGrid ("" too), ProviderSMTP, ProviderSES
	SMTP     SMTPAccount
	SES      SESAccount
	// MaxRate is the most emails a second the book sends across every
	// instance; 0 is no limit.
	MaxRate int
}

// SMTPAccount is a relay to send through.
type SMTPAccount struct {
	Host     string
	Port     int
	Security string // SecurityStartTLS, SecurityTLS, SecurityNone
	Username string // "" sends without AUTH
	Password string
	// MaxConnections bounds the open connections to the relay per
	// instance (1..20).
	MaxConnections int
}

// SESAccount is an Amazon SES identity to send with.
type SESAccount struct {
	Region           string
	AccessKeyID      string
	SecretAccessKey  string
	ConfigurationSet string // optional: event publishing (opens, clicks) goes through it
}

// provider is a's provider, SendGrid when unset.
func (a *Account) provider() string {
	if a == nil || a.Provider == "" {
		return ProviderSendGrid
	}
	return a.Provider
}

// smtpKey identifies an SMTP pool: a pool serves one book and one
// configuration; a changed configuration gets a new pool.
func (a *Account) smtpKey() string {
	s := a.SMTP
	return strings.Join([]string{a.Key, s.Host, fmt.Sprint(s.Port), s.Security, s.Username, s.Password, fmt.Sprint(s.MaxConnections)}, "\x00")
}

// Result is the outcome of one recipient of a batch: the provider's
// message id, or an *Error.
type Result struct {
	MessageID string
	Err       error
}

// ParseSMTPURL reads a relay given as a URL: smtp://user:pass@host:587
// (STARTTLS, port 587 by default) or smtps://user:pass@host:465
// (implicit TLS, port 465 by default); ?security=none sends unencrypted
// (refused unless insecure mail is allowed). User and password are
// percent-decoded.
func ParseSMTPURL(raw string) (SMTPAccount, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Hostname() == "" {
		return SMTPAccount{}, fmt.Errorf("not an smtp:// or smtps:// URL")
	}
	a := SMTPAccount{Host: u.Hostname(), MaxConnections: 2}
	switch u.Scheme {
	case "smtp":
		a.Security, a.Port = SecurityStartTLS, 587
	case "smtps":
		a.Security, a.Port = SecurityTLS, 465
	default:
		return SMTPAccount{}, fmt.Errorf("scheme %q is not smtp or smtps", u.Scheme)
	}
	if p := u.Port(); p != "" {
		if a.Port, err = strconv.Atoi(p); err != nil || a.Port < 1 || a.Port > 65535 {
			return SMTPAccount{}, fmt.Errorf("port %q is not 1 to 65535", p)
		}
	}
	if u.Query().Get("security") == SecurityNone {
		a.Security = SecurityNone
	}
	if u.User != nil {
		a.Username = u.User.Username()
		a.Password, _ = u.User.Password()
	}
	return a, nil
}
