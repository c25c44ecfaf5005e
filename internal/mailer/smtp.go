package mailer

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strings"
	"sync"
	"time"

	gomail "github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"
)

// SMTP timeouts: connecting (TCP, TLS, EHLO, AUTH), one transaction
// (MAIL to the answer to the end of data), and idleness.
const (
	smtpDialTimeout = 15 * time.Second
	smtpTxTimeout   = 60 * time.Second
	smtpIdle        = 30 * time.Second // an idle connection is closed after this
)

// smtpPools keeps one pool of connections per book and relay
// configuration on this instance.
type smtpPools struct {
	roots         *x509.CertPool
	allowInsecure bool

	mu    sync.Mutex
	pools map[string]*smtpPool // by Account.Key
}

// smtpPool is up to max open connections to one relay for one book.
type smtpPool struct {
	cfgKey string
	client *gomail.Client // dials; holds TLS and AUTH settings
	slots  chan struct{}  // one token per connection allowed

	mu   sync.Mutex
	idle []*smtpConn
}

type smtpConn struct {
	c        *smtp.Client
	lastUsed time.Time
}

func newSMTPPools(roots *x509.CertPool, allowInsecure bool) *smtpPools {
	return &smtpPools{roots: roots, allowInsecure: allowInsecure, pools: map[string]*smtpPool{}}
}

// errInsecure is the refusal of an unencrypted relay.
var errInsecure = &Error{Permanent: true, Message: "smtp_security none is not allowed on this service (MAIL_ALLOW_INSECURE is off)"}

// mailClient is the go-mail client that dials the relay of a.
func (ps *smtpPools) mailClient(a *Account) (*gomail.Client, error) {
	s := a.SMTP
	if s.Security == SecurityNone && !ps.allowInsecure {
		return nil, errInsecure
	}
	opts := []gomail.Option{
		gomail.WithPort(s.Port), gomail.WithTimeout(smtpDialTimeout),
		gomail.WithTLSConfig(&tls.Config{ServerName: s.Host, RootCAs: ps.roots, MinVersion: tls.VersionTLS12}),
		gomail.WithoutNoop(), gomail.WithoutRset(),
	}
	switch s.Security {
	case SecurityTLS:
		opts = append(opts, gomail.WithSSL())
	case SecurityNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if s.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(s.Username), gomail.WithPassword(s.Password))
	}
	c, err := gomail.NewClient(s.Host, opts...)
	if err != nil {
		return nil, &Error{Permanent: true, Message: "smtp settings: " + err.Error()}
	}
	return c, nil
}

// pool returns the account's pool, replacing one of an older
// configuration (whose connections are closed as they come back).
func (ps *smtpPools) pool(a *Account) (*smtpPool, error) {
	key := a.smtpKey()
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p := ps.pools[a.Key]; p != nil && p.cfgKey == key {
		return p, nil
	}
	client, err := ps.mailClient(a)
	if err != nil {
		return nil, err
	}
	if old := ps.pools[a.Key]; old != nil {
		go old.closeIdle(0)
	}
	n := min(max(a.SMTP.MaxConnections, 1), 20)
	p := &smtpPool{cfgKey: key, client: client, slots: make(chan struct{}, n)}
	ps.pools[a.Key] = p
	return p, nil
}

// connections is how many connections a batch of n may use at once.
func (p *smtpPool) connections(n int) int { return min(n, cap(p.slots)) }

// get returns an open connection (an idle one, or a new one), waiting
// for a free slot when max are in use.
func (p *smtpPool) get(ctx context.Context) (*smtpConn, bool, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	p.mu.Lock()
	for len(p.idle) > 0 {
		c := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if time.Since(c.lastUsed) < smtpIdle {
			p.mu.Unlock()
			return c, true, nil
		}
		go func() { _ = c.c.Close() }()
	}
	p.mu.Unlock()
	c, err := p.client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		<-p.slots
		return nil, false, dialError(err)
	}
	return &smtpConn{c: c}, false, nil
}

// put gives a connection back: idle when still usable, closed otherwise.
func (p *smtpPool) put(c *smtpConn, usable bool) {
	if usable {
		c.lastUsed = time.Now()
		p.mu.Lock()
		p.idle = append(p.idle, c)
		p.mu.Unlock()
	} else {
		_ = c.c.Close()
	}
	<-p.slots
}

// closeIdle closes the connections idle for longer than d.
func (p *smtpPool) closeIdle(d time.Duration) {
	p.mu.Lock()
	var keep, drop []*smtpConn
	for _, c := range p.idle {
		if time.Since(c.lastUsed) >= d {
			drop = append(drop, c)
		} else {
			keep = append(keep, c)
		}
	}
	p.idle = keep
	p.mu.Unlock()
	for _, c := range drop {
		_ = c.c.Quit()
		_ = c.c.Close()
	}
}

// sweep closes idle connections of every pool.
func (ps *smtpPools) sweep(d time.Duration) {
	ps.mu.Lock()
	pools := make([]*smtpPool, 0, len(ps.pools))
	for _, p := range ps.pools {
		pools = append(pools, p)
	}
	ps.mu.Unlock()
	for _, p := range pools {
		p.closeIdle(d)
	}
}

// smtpStage says how far a transaction got before it failed, which
// decides whether it may be retried: until the message's last byte is
// handed over nothing was accepted; after it, an unanswered end of data
// may have been delivered.
type smtpStage int

const (
	stageEnvelope smtpStage = iota // MAIL, DATA
	stageRcpt                      // RCPT TO: an answer about the recipient
	stageData                      // writing the message
	stageDone                      // the final "." sent, waiting for the answer
)

// sendOne runs one SMTP transaction on c. The connection's deadline is
// renewed first: the dial set one smtpDialTimeout after it connected, and
// a pooled connection lives far longer than that.
func sendOne(c *smtp.Client, from, to string, raw []byte) (smtpStage, error) {
	if err := c.UpdateDeadline(smtpTxTimeout); err != nil {
		return stageEnvelope, err
	}
	if err := c.Mail(from); err != nil {
		return stageEnvelope, err
	}
	if err := c.Rcpt(to); err != nil {
		_ = c.Reset()
		return stageRcpt, err
	}
	w, err := c.Data()
	if err != nil {
		return stageEnvelope, err
	}
	if _, err := w.Write(raw); err != nil {
		return stageData, err
	}
	if err := w.Close(); err != nil {
		return stageDone, err
	}
	return stageDone, nil
}

// smtpError classifies a failed transaction. 550, 551 and 553 in answer
// to RCPT TO refuse the recipient's address for good (the same codes for
// MAIL FROM or the message's content say nothing about the address).
func smtpError(stage smtpStage, err error) *Error {
	var te *textproto.Error
	if errors.As(err, &te) {
		msg := truncate(strings.TrimSpace(fmt.Sprintf("%d %s", te.Code, te.Msg)), maxMessageLen)
		switch {
		case te.Code >= 500:
			badAddress := stage == stageRcpt && (te.Code == 550 || te.Code == 551 || te.Code == 553)
			return &Error{Permanent: true, Status: te.Code, Message: msg, BadAddress: badAddress}
		case te.Code >= 400:
			return &Error{Status: te.Code, Message: msg}
		}
		return &Error{Status: te.Code, Message: "unexpected answer: " + msg}
	}
	if stage == stageDone {
		// The relay had the whole message: it may have accepted it. Sending
		// it again could deliver it twice, which is worse than a failure.
		return &Error{Permanent: true, Message: "connection lost after the message was handed over (" + err.Error() + "); not sent again so it cannot arrive twice", cause: err}
	}
	return &Error{Message: "smtp connection failed: " + err.Error(), cause: err}
}

// dialError classifies a failure to connect, start TLS or authenticate.
func dialError(err error) *Error {
	var te *textproto.Error
	if errors.As(err, &te) {
		msg := truncate(strings.TrimSpace(fmt.Sprintf("%d %s", te.Code, te.Msg)), maxMessageLen)
		// An authentication refused (535) or a policy refusal will not
		// change by retrying; 4xx will.
		return &Error{Permanent: te.Code >= 500, Status: te.Code, Message: msg, cause: err}
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) {
		return &Error{Message: "smtp server unreachable: " + err.Error(), cause: err}
	}
	msg := err.Error()
	if strings.Contains(msg, "STARTTLS") || strings.Contains(msg, "tls:") || strings.Contains(msg, "x509:") || strings.Contains(msg, "SMTP AUTH") {
		return &Error{Permanent: true, Message: msg, cause: err}
	}
	return &Error{Message: "smtp connection failed: " + msg, cause: err}
}

// deliverSMTP sends every message of the batch through the account's
// pool, up to the pool's connections at once, each message paced.
func (d *Dispatcher) deliverSMTP(ctx context.Context, a *Account, msgs []Message) []Result {
	out := make([]Result, len(msgs))
	p, err := d.smtp.pool(a)
	if err != nil {
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	d.smtp.sweep(smtpIdle)
	sched := d.pace.schedule(a)
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range msgs {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	var left sync.Mutex
	remaining := len(msgs)
	for range p.connections(len(msgs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var conn *smtpConn
			var reused bool
			defer func() {
				if conn != nil {
					p.put(conn, true)
				}
			}()
			for i := range next {
				left.Lock()
				n := remaining
				remaining--
				left.Unlock()
				if err := sched.wait(ctx, n); err != nil {
					out[i].Err = asError(err)
					continue
				}
				raw, err := msgs[i].MIME()
				if err != nil {
					out[i].Err = asError(err)
					continue
				}
				for attempt := 0; ; attempt++ {
					if conn == nil {
						if conn, reused, err = p.get(ctx); err != nil {
							out[i].Err = asError(err)
							break
						}
					}
					stage, serr := sendOne(conn.c, msgs[i].FromEmail, msgs[i].To, raw)
					if serr == nil {
						out[i].MessageID = msgs[i].MessageID
						break
					}
					e := smtpError(stage, serr)
					var te *textproto.Error
					if !errors.As(serr, &te) || te.Code == 421 {
						// 421: the relay is closing the connection.
						// The connection is gone: never reuse it.
						_ = conn.c.Close()
						<-p.slots
						conn = nil
						if reused && (stage == stageEnvelope || stage == stageRcpt) && attempt == 0 {
							// An idle connection the relay had closed: one new
							// connection, as nothing was accepted yet.
							continue
						}
					}
					out[i].Err = e
					break
				}
				if e, ok := out[i].Err.(*Error); ok && !e.Permanent {
					d.pace.slowDown(a)
				}
			}
		}()
	}
	wg.Wait()
	for i := range out {
		if out[i].MessageID == "" && out[i].Err == nil {
			out[i].Err = &Error{Message: "sending stopped: " + context.Cause(ctx).Error(), cause: ctx.Err()}
		}
	}
	return out
}

// verifySMTP connects as sending would (TLS as set, EHLO, AUTH when a
// user is set) and says what failed.
func (d *Dispatcher) verifySMTP(ctx context.Context, a *Account) (bool, string) {
	client, err := d.smtp.mailClient(a)
	if err != nil {
		return false, asError(err).Message
	}
	c, err := client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return false, dialError(err).Message
	}
	defer func() { _ = c.Close() }()
	_ = c.Quit()
	detail := "connected to " + net.JoinHostPort(a.SMTP.Host, fmt.Sprint(a.SMTP.Port))
	switch {
	case a.SMTP.Security == SecurityTLS:
		detail += " with TLS"
	case a.SMTP.Security == SecurityNone:
		detail += " without encryption"
	default:
		detail += " with STARTTLS"
	}
	if a.SMTP.Username != "" {
		detail += ", authenticated as " + a.SMTP.Username
	}
	return true, detail
}

// asError is err as an *Error (an unclassified error is temporary).
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Message: err.Error(), cause: err}
}
