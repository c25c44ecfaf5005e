package mailertest

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// SMTPOptions configure an SMTP test server.
type SMTPOptions struct {
	// Security is "starttls" (default: STARTTLS offered and required
	// before AUTH), "tls" (implicit TLS) or "none".
	Security string
	// Username and Password, when set, are required (AUTH PLAIN).
	Username, Password string
	// Cert is the server's certificate (nil: a new one).
	Cert *Cert
}

// SMTPMessage is one message the server accepted.
type SMTPMessage struct {
	From string
	To   []string
	Data []byte
}

// Header parses the message's header.
func (m SMTPMessage) Header() mail.Header {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return mail.Header{}
	}
	return msg.Header
}

// SMTPServer is a real SMTP server (github.com/emersion/go-smtp) for
// tests: STARTTLS or implicit TLS with a generated certificate, AUTH
// PLAIN, and answers scripted per recipient or for the next messages.
type SMTPServer struct {
	Host string
	Port int
	Cert *Cert

	srv  *smtp.Server
	opts SMTPOptions

	mu       sync.Mutex
	messages []SMTPMessage
	rcptFail map[string]*smtp.SMTPError // by lower-cased address
	dataFail []*smtp.SMTPError          // for the next messages' end of data
	drop     int                        // next messages whose answer is never sent
	logins   int

	open, peak atomic.Int64
	delay      atomic.Int64 // per message, nanoseconds
}

// NewSMTPServer starts a server on 127.0.0.1, closed with the test.
func NewSMTPServer(t TB, o SMTPOptions) *SMTPServer {
	t.Helper()
	if o.Security == "" {
		o.Security = "starttls"
	}
	if o.Cert == nil {
		o.Cert = NewCert(t)
	}
	s := &SMTPServer{Cert: o.Cert, opts: o, rcptFail: map[string]*smtp.SMTPError{}}
	srv := smtp.NewServer(smtp.BackendFunc(s.newSession))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 30*time.Second, 30*time.Second
	srv.MaxMessageBytes = 10 << 20
	srv.MaxRecipients = 50
	srv.EnableSMTPUTF8 = true
	var l net.Listener
	var err error
	switch o.Security {
	case "tls":
		l, err = tls.Listen("tcp", "127.0.0.1:0", o.Cert.ServerConfig())
	case "starttls":
		srv.TLSConfig = o.Cert.ServerConfig()
		l, err = net.Listen("tcp", "127.0.0.1:0")
	default:
		srv.AllowInsecureAuth = true
		l, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatal(err)
	}
	s.srv = srv
	addr := l.Addr().(*net.TCPAddr)
	s.Host, s.Port = "127.0.0.1", addr.Port
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// Addr is host:port.
func (s *SMTPServer) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// FailRecipient answers RCPT TO for the address with code and message
// (e.g. 550 "5.1.1 no such user"), every time.
func (s *SMTPServer) FailRecipient(addr string, code int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rcptFail[strings.ToLower(addr)] = smtpErr(code, msg)
}

// FailNextData answers the end of data of the next n messages with code.
func (s *SMTPServer) FailNextData(code int, msg string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.dataFail = append(s.dataFail, smtpErr(code, msg))
	}
}

// DropNext closes the connection of the next n messages after their
// data arrived, without an answer (the client cannot know whether the
// message was taken; it is recorded as accepted).
func (s *SMTPServer) DropNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop += n
}

// SetDelay slows every message's answer.
func (s *SMTPServer) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

// Messages are the accepted messages, in order.
func (s *SMTPServer) Messages() []SMTPMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SMTPMessage(nil), s.messages...)
}

// MessageCount is how many messages were accepted.
func (s *SMTPServer) MessageCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.messages)
}

// Logins is how many AUTH succeeded.
func (s *SMTPServer) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

// PeakConnections is the most connections open at once.
func (s *SMTPServer) PeakConnections() int { return int(s.peak.Load()) }

func smtpErr(code int, msg string) *smtp.SMTPError {
	e := &smtp.SMTPError{Code: code, Message: msg, EnhancedCode: smtp.NoEnhancedCode}
	if f := strings.Fields(msg); len(f) > 0 && strings.Count(f[0], ".") == 2 {
		parts := strings.Split(f[0], ".")
		var ec smtp.EnhancedCode
		ok := true
		for i, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil {
				ok = false
				break
			}
			ec[i] = n
		}
		if ok {
			e.EnhancedCode, e.Message = ec, strings.TrimSpace(strings.TrimPrefix(msg, f[0]))
		}
	}
	return e
}

func (s *SMTPServer) newSession(c *smtp.Conn) (smtp.Session, error) {
	n := s.open.Add(1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			break
		}
	}
	return &smtpSession{s: s, conn: c}, nil
}

type smtpSession struct {
	s      *SMTPServer
	conn   *smtp.Conn
	authed bool
	from   string
	to     []string
}

var errAuthRequired = &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}

func (ss *smtpSession) AuthMechanisms() []string {
	if ss.s.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *smtpSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != ss.s.opts.Username || password != ss.s.opts.Password {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "authentication failed"}
		}
		ss.authed = true
		ss.s.mu.Lock()
		ss.s.logins++
		ss.s.mu.Unlock()
		return nil
	}), nil
}

func (ss *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.opts.Username != "" && !ss.authed {
		return errAuthRequired
	}
	if ss.s.opts.Security == "starttls" {
		if _, ok := ss.conn.TLSConnectionState(); !ok {
			return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Must issue a STARTTLS command first"}
		}
	}
	ss.from = from
	return nil
}

func (ss *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.s.mu.Lock()
	e := ss.s.rcptFail[strings.ToLower(to)]
	ss.s.mu.Unlock()
	if e != nil {
		return e
	}
	ss.to = append(ss.to, to)
	return nil
}

var errDropped = errors.New("connection dropped by the test")

func (ss *smtpSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if d := time.Duration(ss.s.delay.Load()); d > 0 {
		time.Sleep(d)
	}
	ss.s.mu.Lock()
	defer ss.s.mu.Unlock()
	if ss.s.drop > 0 {
		ss.s.drop--
		ss.s.messages = append(ss.s.messages, SMTPMessage{From: ss.from, To: ss.to, Data: data})
		_ = ss.conn.Conn().Close()
		return errDropped
	}
	if len(ss.s.dataFail) > 0 {
		e := ss.s.dataFail[0]
		ss.s.dataFail = ss.s.dataFail[1:]
		return e
	}
	ss.s.messages = append(ss.s.messages, SMTPMessage{From: ss.from, To: ss.to, Data: data})
	return nil
}

func (ss *smtpSession) Reset() { ss.from, ss.to = "", nil }

func (ss *smtpSession) Logout() error {
	ss.s.open.Add(-1)
	return nil
}
