package mailertest

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/google/uuid"
)

// IMAPServer is go-imap's in-memory IMAP server behind implicit TLS
// with one user and an INBOX, for bounce mailbox tests.
type IMAPServer struct {
	Host               string
	Port               int
	Username, Password string
	Cert               *Cert
	t                  TB
}

// NewIMAPServer starts the server, closed with the test.
func NewIMAPServer(t TB, username, password string, cert *Cert) *IMAPServer {
	t.Helper()
	if cert == nil {
		cert = NewCert(t)
	}
	mem := imapmemserver.New()
	user := imapmemserver.NewUser(username, password)
	if err := user.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	mem.AddUser(user)
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps: imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}},
	})
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cert.ServerConfig())
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &IMAPServer{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, Username: username, Password: password, Cert: cert, t: t}
}

// Addr is host:port.
func (s *IMAPServer) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

func (s *IMAPServer) client() *imapclient.Client {
	s.t.Helper()
	c, err := imapclient.DialTLS(s.Addr(), &imapclient.Options{TLSConfig: &tls.Config{RootCAs: s.Cert.Roots}})
	if err != nil {
		s.t.Fatal(err)
	}
	if err := c.Login(s.Username, s.Password).Wait(); err != nil {
		s.t.Fatal(err)
	}
	return c
}

// Deliver appends a message to INBOX, unseen.
func (s *IMAPServer) Deliver(raw []byte) {
	s.t.Helper()
	c := s.client()
	defer c.Close()
	cmd := c.Append("INBOX", int64(len(raw)), nil)
	if _, err := cmd.Write(raw); err != nil {
		s.t.Fatal(err)
	}
	if err := cmd.Close(); err != nil {
		s.t.Fatal(err)
	}
	if _, err := cmd.Wait(); err != nil {
		s.t.Fatal(err)
	}
}

// Seen reports, in INBOX order, whether each message is flagged \Seen.
func (s *IMAPServer) Seen() []bool {
	s.t.Helper()
	c := s.client()
	defer c.Close()
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		s.t.Fatal(err)
	}
	if sel.NumMessages == 0 {
		return nil
	}
	var set imap.SeqSet
	set.AddRange(1, sel.NumMessages)
	msgs, err := c.Fetch(set, &imap.FetchOptions{Flags: true}).Collect()
	if err != nil {
		s.t.Fatal(err)
	}
	out := make([]bool, len(msgs))
	for i, m := range msgs {
		for _, f := range m.Flags {
			if f == imap.FlagSeen {
				out[i] = true
			}
		}
	}
	return out
}

// DSN is a delivery status notification (RFC 3464 multipart/report) as
// a relay's MAILER-DAEMON sends it: action failed with status for the
// recipient of the message originalID, the original's headers quoted.
func DSN(originalID, recipient, status string) []byte {
	boundary := "dsn-" + uuid.NewString()
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: Mail Delivery System <MAILER-DAEMON@relay.example>\r\n")
	fmt.Fprintf(&b, "To: bounces@acme.example\r\n")
	fmt.Fprintf(&b, "Subject: Undelivered Mail Returned to Sender\r\n")
	fmt.Fprintf(&b, "Date: %s\r\n", time.Now().UTC().Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Message-ID: <%s@relay.example>\r\n", uuid.NewString())
	fmt.Fprintf(&b, "MIME-Version: 1.0\r\n")
	fmt.Fprintf(&b, "Content-Type: multipart/report; report-type=delivery-status; boundary=\"%s\"\r\n\r\n", boundary)
	fmt.Fprintf(&b, "--%s\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\nYour message could not be delivered to %s.\r\n\r\n", boundary, recipient)
	fmt.Fprintf(&b, "--%s\r\nContent-Type: message/delivery-status\r\n\r\n", boundary)
	fmt.Fprintf(&b, "Reporting-MTA: dns; relay.example\r\nArrival-Date: %s\r\n\r\n", time.Now().UTC().Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Final-Recipient: rfc822; %s\r\nOriginal-Recipient: rfc822;%s\r\nAction: failed\r\nStatus: %s\r\n", recipient, recipient, status)
	fmt.Fprintf(&b, "Diagnostic-Code: smtp; %s %s mailbox unavailable\r\n\r\n", map[bool]string{true: "550", false: "450"}[status[0] == '5'], status)
	fmt.Fprintf(&b, "--%s\r\nContent-Type: text/rfc822-headers\r\n\r\n", boundary)
	fmt.Fprintf(&b, "From: Acme News <news@acme.example>\r\nTo: %s\r\nSubject: Hi\r\nMessage-ID: <%s>\r\n\r\n", recipient, originalID)
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return b.Bytes()
}
