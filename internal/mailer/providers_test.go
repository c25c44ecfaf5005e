package mailer_test

import (
	"context"
	"errors"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

func smtpAccount(s *mailertest.SMTPServer, security string) *mailer.Account {
	return &mailer.Account{Key: "book-1", Provider: mailer.ProviderSMTP, SMTP: mailer.SMTPAccount{
		Host: s.Host, Port: s.Port, Security: security, Username: "relay-user", Password: "relay-pass", MaxConnections: 3,
	}}
}

func batchOf(a *mailer.Account, to ...string) mailer.Batch {
	b := mailer.Batch{
		Account: a, FromEmail: "news@acme.example", FromName: "Acme News", ReplyTo: "help@acme.example",
		HTML: `<p>Hello ~name~, read <a href="https://acme.example/post">this</a>.</p>`,
	}
	for _, addr := range to {
		b.Personalizations = append(b.Personalizations, mailer.Personalization{
			To: addr, ToName: "Ann\r\nBcc: evil@x.example", Subject: "Hi\r\nX-Injected: yes ünïcode",
			Substitutions: map[string]string{"~name~": "Ann"},
			Headers: map[string]string{
				"List-Unsubscribe":      "<https://cb.example/u/one-click?t=abc>",
				"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
			},
		})
	}
	return b
}

func TestSMTPSendsOneWellFormedMessagePerRecipient(t *testing.T) {
	for _, security := range []string{mailer.SecurityStartTLS, mailer.SecurityTLS} {
		t.Run(security, func(t *testing.T) {
			srv := mailertest.NewSMTPServer(t, mailertest.SMTPOptions{Security: security, Username: "relay-user", Password: "relay-pass"})
			d := mailer.NewDispatcher(mailer.DispatcherConfig{RootCAs: srv.Cert.Roots})
			defer d.Close()
			res := d.Deliver(context.Background(), batchOf(smtpAccount(srv, security), "a@x.example", "b@x.example", "c@x.example", "d@x.example"))
			for i, r := range res {
				if r.Err != nil || r.MessageID == "" {
					t.Fatalf("result %d: %+v", i, r)
				}
			}
			msgs := srv.Messages()
			if len(msgs) != 4 || srv.Logins() == 0 || srv.PeakConnections() > 3 {
				t.Fatalf("messages %d, logins %d, peak %d", len(msgs), srv.Logins(), srv.PeakConnections())
			}
			ids := map[string]bool{}
			for _, r := range res {
				ids[r.MessageID] = true
			}
			for _, m := range msgs {
				msg, err := mail.ReadMessage(strings.NewReader(string(m.Data)))
				if err != nil {
					t.Fatal(err)
				}
				h := msg.Header
				if h.Get("X-Injected") != "" || h.Get("Bcc") != "" {
					t.Fatalf("a value added a header: %q", m.Data)
				}
				if !ids[mailer.NormalizeMessageID(h.Get("Message-Id"))] {
					t.Fatalf("Message-ID %q is not a recorded id", h.Get("Message-Id"))
				}
				subj, _ := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
				if subj != "Hi X-Injected: yes ünïcode" {
					t.Fatalf("subject %q", subj)
				}
				if h.Get("List-Unsubscribe") != "<https://cb.example/u/one-click?t=abc>" || h.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
					t.Fatalf("unsubscribe headers %q %q", h.Get("List-Unsubscribe"), h.Get("List-Unsubscribe-Post"))
				}
				if from, _ := mail.ParseAddress(h.Get("From")); from == nil || from.Address != "news@acme.example" || from.Name != "Acme News" {
					t.Fatalf("from %q", h.Get("From"))
				}
				if h.Get("Reply-To") != "<help@acme.example>" {
					t.Fatalf("reply-to %q", h.Get("Reply-To"))
				}
				mt, params, _ := mime.ParseMediaType(h.Get("Content-Type"))
				if mt != "multipart/alternative" {
					t.Fatalf("content type %q", mt)
				}
				mr := multipart.NewReader(msg.Body, params["boundary"])
				var types []string
				var text string
				for {
					p, err := mr.NextPart()
					if err != nil {
						break
					}
					ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
					types = append(types, ct)
					b := new(strings.Builder)
					buf := make([]byte, 4096)
					for {
						n, err := p.Read(buf)
						b.Write(buf[:n])
						if err != nil {
							break
						}
					}
					if ct == "text/plain" {
						text = b.String()
					} else if !strings.Contains(b.String(), "Hello Ann") {
						t.Fatalf("html %q", b.String())
					}
				}
				if strings.Join(types, ",") != "text/plain,text/html" || !strings.Contains(text, "Hello Ann, read this [https://acme.example/post].") {
					t.Fatalf("parts %v, text %q", types, text)
				}
			}
		})
	}
}

func TestSMTPClassifiesRefusals(t *testing.T) {
	srv := mailertest.NewSMTPServer(t, mailertest.SMTPOptions{Username: "relay-user", Password: "relay-pass"})
	srv.FailRecipient("gone@x.example", 550, "5.1.1 no such user")
	srv.FailRecipient("full@x.example", 452, "4.2.2 mailbox full")
	srv.FailRecipient("policy@x.example", 554, "5.7.1 rejected by policy")
	d := mailer.NewDispatcher(mailer.DispatcherConfig{RootCAs: srv.Cert.Roots})
	defer d.Close()
	a := smtpAccount(srv, mailer.SecurityStartTLS)
	a.SMTP.MaxConnections = 1
	res := d.Deliver(context.Background(), batchOf(a, "gone@x.example", "full@x.example", "policy@x.example", "ok@x.example"))
	var e0, e1, e2 *mailer.Error
	if !errors.As(res[0].Err, &e0) || !e0.Permanent || !e0.BadAddress || e0.Message != "550 5.1.1 no such user" {
		t.Fatalf("550: %+v", res[0].Err)
	}
	if !errors.As(res[1].Err, &e1) || e1.Permanent || e1.Status != 452 {
		t.Fatalf("452: %+v", res[1].Err)
	}
	if !errors.As(res[2].Err, &e2) || !e2.Permanent || e2.BadAddress {
		t.Fatalf("554: %+v", res[2].Err)
	}
	if res[3].Err != nil || srv.MessageCount() != 1 {
		t.Fatalf("ok: %+v, %d messages", res[3], srv.MessageCount())
	}
	if d.Pace().Slowed("book-1") == 0 {
		t.Fatal("a temporary refusal did not slow the book down")
	}

	// A connection lost after the whole message was handed over is not
	// sent again: it may have been delivered.
	srv.DropNext(1)
	res = d.Deliver(context.Background(), batchOf(a, "drop@x.example"))
	var e3 *mailer.Error
	if !errors.As(res[0].Err, &e3) || !e3.Permanent || srv.MessageCount() != 2 {
		t.Fatalf("dropped: %+v, %d messages", res[0].Err, srv.MessageCount())
	}
	// The pool recovers with a new connection.
	res = d.Deliver(context.Background(), batchOf(a, "after@x.example"))
	if res[0].Err != nil || srv.MessageCount() != 3 {
		t.Fatalf("after drop: %+v", res[0])
	}
}

func TestSMTPVerify(t *testing.T) {
	srv := mailertest.NewSMTPServer(t, mailertest.SMTPOptions{Username: "relay-user", Password: "relay-pass"})
	d := mailer.NewDispatcher(mailer.DispatcherConfig{RootCAs: srv.Cert.Roots})
	a := smtpAccount(srv, mailer.SecurityStartTLS)
	if ok, detail := d.Verify(context.Background(), a, ""); !ok {
		t.Fatalf("verify: %s", detail)
	}
	a.SMTP.Password = "wrong-secret"
	ok, detail := d.Verify(context.Background(), a, "")
	if ok || !strings.Contains(detail, "535") || strings.Contains(detail, "wrong-secret") {
		t.Fatalf("bad password: %v %q", ok, detail)
	}
	a.SMTP.Security = mailer.SecurityNone
	if ok, detail := d.Verify(context.Background(), a, ""); ok || !strings.Contains(detail, "MAIL_ALLOW_INSECURE") {
		t.Fatalf("insecure: %v %q", ok, detail)
	}
	// Untrusted certificate.
	other := mailer.NewDispatcher(mailer.DispatcherConfig{})
	if ok, detail := other.Verify(context.Background(), smtpAccount(srv, mailer.SecurityStartTLS), ""); ok || !strings.Contains(detail, "certificate") {
		t.Fatalf("untrusted: %v %q", ok, detail)
	}
}

func TestSESSendsSignedRawMessages(t *testing.T) {
	ses := mailertest.NewSESServer(t, "eu-west-1", "AKIDTEST", "secret-key")
	ses.Reject("bad@x.example", "Email address is not verified.")
	d := mailer.NewDispatcher(mailer.DispatcherConfig{SESEndpoint: ses.URL})
	a := &mailer.Account{Key: "book-2", Provider: mailer.ProviderSES, SES: mailer.SESAccount{
		Region: "eu-west-1", AccessKeyID: "AKIDTEST", SecretAccessKey: "secret-key", ConfigurationSet: "tracking",
	}}
	b := batchOf(a, "a@x.example", "bad@x.example")
	b.Personalizations[0].CustomArgs = map[string]string{"campaign_id": "c-1"}
	res := d.Deliver(context.Background(), b)
	var rej *mailer.Error
	if res[0].Err != nil || res[0].MessageID == "" || !errors.As(res[1].Err, &rej) || !rej.Permanent || !strings.Contains(rej.Message, "MessageRejected") {
		t.Fatalf("results %+v", res)
	}
	msgs := ses.Messages()
	if len(msgs) != 1 || msgs[0].MessageID != res[0].MessageID || msgs[0].ConfigurationSet != "tracking" || msgs[0].Tags["campaign_id"] != "c-1" {
		t.Fatalf("ses got %+v", msgs)
	}
	if m, err := mail.ReadMessage(strings.NewReader(string(msgs[0].Raw))); err != nil || m.Header.Get("List-Unsubscribe-Post") == "" {
		t.Fatalf("raw: %v", err)
	}
	ses.Throttle(1)
	res = d.Deliver(context.Background(), batchOf(a, "c@x.example"))
	var thr *mailer.Error
	if !errors.As(res[0].Err, &thr) || thr.Permanent {
		t.Fatalf("throttled: %+v", res[0].Err)
	}
	if ok, detail := d.Verify(context.Background(), a, ""); !ok {
		t.Fatalf("verify: %s", detail)
	}
	a.SES.SecretAccessKey = "wrong"
	if ok, detail := d.Verify(context.Background(), a, ""); ok || strings.Contains(detail, "wrong") || ses.Unsigned() != 1 {
		t.Fatalf("bad key verify: %v %q unsigned=%d", ok, detail, ses.Unsigned())
	}
}

func TestSendGridWithASendRateSendsSmallerRequestsOnSchedule(t *testing.T) {
	sg := mailertest.NewServer(t)
	d := mailer.NewDispatcher(mailer.DispatcherConfig{SendGrid: mailer.NewSender(sg.URL, nil)})
	a := &mailer.Account{Key: "book-sg", Provider: mailer.ProviderSendGrid, MaxRate: 20}
	b := batchOf(a, "a@x.example", "b@x.example", "c@x.example", "d@x.example", "e@x.example", "f@x.example", "g@x.example", "h@x.example")
	b.APIKey = "SG.k"
	start := time.Now()
	res := d.Deliver(context.Background(), b)
	for i, r := range res {
		if r.Err != nil || r.MessageID == "" {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	// 20 a second: requests of 2 (a tenth of a second's worth), 8 emails
	// spread over at least 0.35 s.
	if n := sg.RequestCount(); n != 4 || sg.RecipientCount() != 8 {
		t.Fatalf("%d requests, %d recipients", n, sg.RecipientCount())
	}
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Fatalf("8 emails at 20/s took %v", el)
	}
	// Without a rate the batch is one request, as before.
	a.MaxRate = 0
	d.Deliver(context.Background(), b)
	if sg.RequestCount() != 5 {
		t.Fatalf("%d requests", sg.RequestCount())
	}
}

// A pooled connection outlives the deadline its dial set (15 s): a
// campaign through SMTP takes minutes, and every connection must keep
// working on it.
func TestSMTPConnectionOutlivesItsDial(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 16 s")
	}
	t.Parallel()
	srv := mailertest.NewSMTPServer(t, mailertest.SMTPOptions{Username: "relay-user", Password: "relay-pass"})
	d := mailer.NewDispatcher(mailer.DispatcherConfig{RootCAs: srv.Cert.Roots})
	defer d.Close()
	a := smtpAccount(srv, mailer.SecurityStartTLS)
	a.SMTP.MaxConnections = 1
	deadline := time.Now().Add(16 * time.Second)
	sent := 0
	for time.Now().Before(deadline) {
		for i, r := range d.Deliver(context.Background(), batchOf(a, "a@x.example")) {
			if r.Err != nil {
				t.Fatalf("after %d messages, %s in: result %d: %v", sent, time.Since(deadline.Add(-16*time.Second)).Round(time.Second), i, r.Err)
			}
		}
		sent++
		time.Sleep(500 * time.Millisecond) // within the idle time: the connection is reused
	}
	if srv.Logins() != 1 {
		t.Fatalf("%d logins: the connection was not kept", srv.Logins())
	}
}
