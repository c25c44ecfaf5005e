package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
	"github.com/contactbook/contactbook/internal/transactional"
)

// providerEnv is a team whose service trusts the test SMTP server's and
// SNS's certificates and talks to a fake SES.
type providerEnv struct {
	*campEnv
	SMTP *mailertest.SMTPServer
	SES  *mailertest.SESServer
	SNS  *mailertest.SNS
}

func newProviderEnv(t *testing.T) *providerEnv {
	t.Helper()
	smtp := mailertest.NewSMTPServer(t, mailertest.SMTPOptions{Username: "relay", Password: "relay-secret-1"})
	ses := mailertest.NewSESServer(t, "eu-west-1", "AKIDBOOK", "ses-secret-9999")
	sns := mailertest.NewSNS(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, append(append([]byte{}, smtp.Cert.CAPEM...), sns.TLS.CAPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newCampEnv(t, "active", apptest.Options{Env: map[string]string{
		"MAIL_CA_FILE": ca, "SES_ENDPOINT": ses.URL, "SNS_CERT_HOSTS": sns.Host,
	}})
	return &providerEnv{campEnv: c, SMTP: smtp, SES: ses, SNS: sns}
}

func (p *providerEnv) smtpSettings(extra map[string]any) map[string]any {
	body := map[string]any{
		"sender_name": "Acme News", "sender_email": "news@acme.example", "reply_to_email": "help@acme.example",
		"company_name": "Acme Inc.", "address_line1": "1 Main St", "city": "Springfield", "country": "USA",
		"provider": "smtp", "smtp_host": p.SMTP.Host, "smtp_port": p.SMTP.Port, "smtp_username": "relay",
		"smtp_password": "relay-secret-1", "smtp_max_connections": 2,
	}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

func (p *providerEnv) sesSettings(extra map[string]any) map[string]any {
	body := map[string]any{
		"sender_name": "Acme News", "sender_email": "news@acme.example",
		"company_name": "Acme Inc.", "address_line1": "1 Main St", "city": "Springfield", "country": "USA",
		"provider": "ses", "ses_region": "eu-west-1", "ses_access_key_id": "AKIDBOOK", "ses_secret_access_key": "ses-secret-9999",
	}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

func TestProviderSettingsRules(t *testing.T) {
	t.Parallel()
	p := newProviderEnv(t)
	res := p.O.Put("/api/campaign-settings", p.smtpSettings(map[string]any{"max_send_rate": 50,
		"bounce_mailbox": map[string]any{"imap_host": "imap.acme.example", "imap_username": "bounces", "imap_password": "imap-pass-77"}})).Expect(http.StatusOK)
	if res.String("data.provider") != "smtp" || res.String("data.smtp_password") != "****et-1" || res.Int("data.smtp_port") != p.SMTP.Port ||
		res.String("data.smtp_security") != "starttls" || res.Int("data.max_send_rate") != 50 || !res.Bool("data.ready") ||
		res.String("data.bounce_mailbox.imap_password") != "****s-77" || res.Int("data.bounce_mailbox.imap_port") != 993 ||
		res.String("data.bounce_mailbox.imap_folder") != "INBOX" || res.Has("data.ses_region") {
		t.Fatalf("smtp settings: %s", res.Body)
	}
	if got := res.String("data.ses_notification_url"); got != "https://contacts.example.com/api/mailer/ses/"+p.Book {
		t.Fatalf("ses_notification_url %q", got)
	}
	if bytes.Contains(res.Body, []byte("relay-secret-1")) || bytes.Contains(res.Body, []byte("imap-pass-77")) {
		t.Fatal("a secret is answered")
	}
	var list []map[string]any
	res.Decode("data.checklist", &list)
	if len(list) != 4 || list[0]["key"] != "provider" || list[0]["done"] != true || list[3]["key"] != "feedback" || list[3]["done"] != true {
		t.Fatalf("checklist %v", list)
	}
	// The masked values repeated keep the secrets: verify still logs in.
	again := p.smtpSettings(map[string]any{"smtp_password": "****et-1",
		"bounce_mailbox": map[string]any{"imap_host": "imap.acme.example", "imap_username": "bounces", "imap_password": "****s-77"}})
	p.O.Put("/api/campaign-settings", again).Expect(http.StatusOK)
	if v := p.O.Post("/api/campaign-settings/verify", nil).Expect(http.StatusOK); !v.Bool("data.ok") {
		t.Fatalf("verify after the masked repeat: %s", v.Body)
	}
	// ... but not for another user or host.
	msg := p.O.Put("/api/campaign-settings", p.smtpSettings(map[string]any{"smtp_password": "****et-1", "smtp_username": "other"})).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT").String("error.message")
	if !strings.Contains(msg, "smtp_password") {
		t.Fatalf("masked repeat for another user: %q", msg)
	}
	for field, body := range map[string]map[string]any{
		"mailer_api_key":        p.smtpSettings(map[string]any{"mailer_api_key": "SG.x"}),
		"ses_region":            p.smtpSettings(map[string]any{"ses_region": "us-east-1"}),
		"smtp_host":             p.smtpSettings(map[string]any{"smtp_host": ""}),
		"smtp_port":             p.smtpSettings(map[string]any{"smtp_port": 70000}),
		"smtp_security":         p.smtpSettings(map[string]any{"smtp_security": "none"}),
		"smtp_max_connections":  p.smtpSettings(map[string]any{"smtp_max_connections": 21}),
		"max_send_rate":         p.smtpSettings(map[string]any{"max_send_rate": 0}),
		"provider":              p.smtpSettings(map[string]any{"provider": "mailgun"}),
		"ses_region ":           p.sesSettings(map[string]any{"ses_region": "mars-1"}),
		"smtp_username":         p.sesSettings(map[string]any{"smtp_username": "x"}),
		"ses_secret_access_key": p.sesSettings(map[string]any{"ses_secret_access_key": "****et-1"}),
	} {
		msg := p.O.Put("/api/campaign-settings", body).ExpectError(http.StatusBadRequest, "INVALID_INPUT").String("error.message")
		if !strings.Contains(msg, strings.TrimSpace(field)) {
			t.Errorf("%s: message %q does not name it", field, msg)
		}
	}
	// SES answers only its own fields.
	res = p.O.Put("/api/campaign-settings", p.sesSettings(nil)).Expect(http.StatusOK)
	if res.String("data.ses_secret_access_key") != "****9999" || res.Has("data.smtp_host") || res.Value("data.bounce_mailbox") != nil ||
		res.String("data.mailer_api_key") != "" || !res.Bool("data.ready") {
		t.Fatalf("ses settings: %s", res.Body)
	}
	// Back to SendGrid without a key: not ready, and the checklist says why.
	res = p.O.Put("/api/campaign-settings", map[string]any{"sender_email": "news@acme.example"}).Expect(http.StatusOK)
	if res.String("data.provider") != "sendgrid" || res.Bool("data.ready") || res.String("data.checklist.0.title") != "SendGrid key saved" {
		t.Fatalf("sendgrid without key: %s", res.Body)
	}

	p.O.Post("/api/campaign-settings/verify", nil).Expect(http.StatusOK)
}

func TestProviderVerify(t *testing.T) {
	t.Parallel()
	p := newProviderEnv(t)
	p.O.Put("/api/campaign-settings", p.smtpSettings(nil)).Expect(http.StatusOK)
	v := p.O.Post("/api/campaign-settings/verify", nil).Expect(http.StatusOK)
	if !v.Bool("data.ok") || !strings.Contains(v.String("data.detail"), "STARTTLS") || p.SMTP.Logins() != 1 || p.SMTP.MessageCount() != 0 {
		t.Fatalf("smtp verify: %s (logins %d)", v.Body, p.SMTP.Logins())
	}
	p.O.Put("/api/campaign-settings", p.smtpSettings(map[string]any{"smtp_password": "wrong-pass-0000"})).Expect(http.StatusOK)
	v = p.O.Post("/api/campaign-settings/verify", nil).Expect(http.StatusOK)
	if v.Bool("data.ok") || !strings.Contains(v.String("data.detail"), "535") || strings.Contains(string(v.Body), "wrong-pass") {
		t.Fatalf("smtp verify, wrong password: %s", v.Body)
	}
	p.O.Put("/api/campaign-settings", p.sesSettings(nil)).Expect(http.StatusOK)
	if v := p.O.Post("/api/campaign-settings/verify", nil).Expect(http.StatusOK); !v.Bool("data.ok") {
		t.Fatalf("ses verify: %s", v.Body)
	}
	p.O.Put("/api/campaign-settings", p.sesSettings(map[string]any{"ses_secret_access_key": "not-the-secret"})).Expect(http.StatusOK)
	v = p.O.Post("/api/campaign-settings/verify", nil).Expect(http.StatusOK)
	if v.Bool("data.ok") || !strings.Contains(v.String("data.detail"), "SignatureDoesNotMatch") || strings.Contains(string(v.Body), "not-the-secret") {
		t.Fatalf("ses verify, wrong secret: %s", v.Body)
	}
	p.O.ConfigureEmail()
	if v := p.O.Post("/api/campaign-settings/verify", nil).Expect(http.StatusOK); !v.Bool("data.ok") {
		t.Fatalf("sendgrid verify: %s", v.Body)
	}
}

func TestCampaignThroughSMTP(t *testing.T) {
	t.Parallel()
	p := newProviderEnv(t)
	p.SMTP.FailRecipient("gone@example.com", 550, "5.1.1 no such user")
	p.SMTP.FailRecipient("later@example.com", 451, "4.3.0 try again later")
	p.O.Put("/api/campaign-settings", p.smtpSettings(nil)).Expect(http.StatusOK)
	ann, gone, later := p.contact("Ann", "ann@example.com"), p.contact("Gus", "gone@example.com"), p.contact("Lea", "later@example.com")
	tpl := p.Key.NewTemplateWith("T", "Hi {{first_name}}", `<p>Hi {{first_name}}, <a href="https://acme.example">see</a></p>`)
	campaignID := p.Key.NewCampaignIn("C", "active")
	p.Key.NewEmailStep(campaignID, tpl, nil)
	p.Key.Enroll(campaignID, ann, gone, later)
	r := p.Env.ProcessCampaign(campaignID)
	if r.Sent != 1 || r.Failed != 1 || r.Retrying != 1 {
		t.Fatalf("process: %+v", r)
	}
	msgs := p.SMTP.Messages()
	if len(msgs) != 1 || msgs[0].To[0] != "ann@example.com" || p.Mail.RequestCount() != 0 {
		t.Fatalf("smtp got %d messages, sendgrid %d requests", len(msgs), p.Mail.RequestCount())
	}
	h := msgs[0].Header()
	if !strings.HasPrefix(h.Get("List-Unsubscribe"), "<https://contacts.example.com/api/unsubscribe/confirm?token=") ||
		h.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" || h.Get("Subject") != "Hi Ann" {
		t.Fatalf("headers %v", h)
	}
	id := mailer.NormalizeMessageID(h.Get("Message-Id"))
	if n := p.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE provider_message_id = $1 AND result = 'success'`, id); n != 1 {
		t.Fatalf("provider_message_id %q recorded %d times", id, n)
	}
	if n := p.Env.QueryInt(`SELECT count(*) FROM campaign_email_messages WHERE message_id = $1`, id); n != 1 {
		t.Fatalf("message id kept %d times", n)
	}
	sup := p.O.Get("/api/suppressions?q=gone").Expect(http.StatusOK)
	if sup.Len("data") != 1 || sup.String("data.0.reason") != "bounce" || sup.String("data.0.source") != "provider" {
		t.Fatalf("suppressions: %s", sup.Body)
	}
	detail := p.Env.QueryString(`SELECT result_detail FROM campaign_step_completions c JOIN campaign_participants cp ON cp.id = c.participant_id
		WHERE cp.contact_id = $1`, gone)
	if detail != "550 5.1.1 no such user" {
		t.Fatalf("failed detail %q", detail)
	}
	// Nothing is sent twice: another pass sends nothing new (the 4xx is
	// retried later, after its retry time).
	p.Env.ProcessCampaign(campaignID)
	if p.SMTP.MessageCount() != 1 {
		t.Fatalf("a second pass sent again: %d", p.SMTP.MessageCount())
	}
}

func TestCampaignThroughSESWithFeedback(t *testing.T) {
	t.Parallel()
	p := newProviderEnv(t)
	p.O.Put("/api/campaign-settings", p.sesSettings(nil)).Expect(http.StatusOK)
	ann, bob, cat := p.contact("Ann", "ann@example.com"), p.contact("Bob", "bob@example.com"), p.contact("Cat", "cat@example.com")
	tpl := p.Key.NewTemplateWith("T", "Hi", "<p>Hi {{first_name}}</p>")
	campaignID := p.Key.NewCampaignIn("C", "active")
	p.Key.NewEmailStep(campaignID, tpl, nil)
	p.Key.NewEmailStep(campaignID, tpl, map[string]any{"name": "Later", "schedule_type": "delay", "delay_days": 3})
	p.Key.Enroll(campaignID, ann, bob, cat)
	if r := p.Env.ProcessCampaign(campaignID); r.Sent != 3 {
		t.Fatalf("process: %+v", r)
	}
	ids := map[string]string{}
	for _, m := range p.SES.Messages() {
		ids[m.To[0]] = m.MessageID
	}
	if len(ids) != 3 || p.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE provider_message_id = $1`, ids["ann@example.com"]) != 1 {
		t.Fatalf("ses messages %v", ids)
	}
	post := func(body []byte) *apptest.Response {
		return p.Env.Anonymous().Do(http.MethodPost, "/api/mailer/ses/"+p.Book, apptest.Raw{Body: body, ContentType: "text/plain; charset=UTF-8"})
	}
	// A subscription is confirmed by fetching its SubscribeURL.
	if res := post(p.SNS.SubscriptionConfirmation(1)).Expect(http.StatusOK); len(p.SNS.Confirmed()) != 1 || res.Int("data.applied") != 1 {
		t.Fatalf("confirmation: %s", res.Body)
	}
	bounce := p.SNS.Notification(mailertest.SESBounce(ids["bob@example.com"], "Permanent", "bob@example.com"), 2)
	res := post(bounce).Expect(http.StatusOK)
	if res.Int("data.received") != 1 || res.Int("data.applied") != 1 {
		t.Fatalf("bounce: %s", res.Body)
	}
	if res := post(bounce).Expect(http.StatusOK); res.Int("data.duplicates") != 1 || res.Int("data.applied") != 0 {
		t.Fatalf("redelivered bounce: %s", res.Body)
	}
	post(p.SNS.Notification(mailertest.SESComplaint(ids["cat@example.com"], "cat@example.com"), 1)).Expect(http.StatusOK)
	post(p.SNS.Notification(mailertest.SESDelivery(ids["ann@example.com"], "ann@example.com"), 1)).Expect(http.StatusOK)
	post(p.SNS.Notification(mailertest.SESOpen(ids["ann@example.com"]), 2)).Expect(http.StatusOK)
	post(p.SNS.Notification(mailertest.SESClick(ids["ann@example.com"], "https://acme.example/x"), 2)).Expect(http.StatusOK)
	transient := post(p.SNS.Notification(mailertest.SESBounce(ids["ann@example.com"], "Transient", "ann@example.com"), 1)).Expect(http.StatusOK)
	if transient.Int("data.applied") != 1 {
		t.Fatalf("transient: %s", transient.Body)
	}
	if res := post(p.SNS.Notification(mailertest.SESDelivery("0100-unknown", "x@example.com"), 1)).Expect(http.StatusOK); res.Int("data.ignored") != 1 {
		t.Fatalf("unknown message: %s", res.Body)
	}
	stats := p.O.Get("/api/campaigns/" + campaignID + "/stats").Expect(http.StatusOK)
	for k, want := range map[string]int{"delivered_count": 1, "opened_count": 1, "clicked_count": 1, "bounced_count": 1, "complained_count": 1} {
		if got := stats.Int("data.summary." + k); got != want {
			t.Errorf("summary %s = %d, want %d", k, got, want)
		}
	}
	sup := p.O.Get("/api/suppressions").Expect(http.StatusOK)
	reasons := map[string]string{}
	for i := range sup.Len("data") {
		reasons[sup.String(fmt.Sprintf("data.%d.email", i))] = sup.String(fmt.Sprintf("data.%d.reason", i))
	}
	if reasons["bob@example.com"] != "bounce" || reasons["cat@example.com"] != "complaint" || reasons["ann@example.com"] != "" {
		t.Fatalf("suppressions %v", reasons)
	}
	// Wrong signatures change nothing.
	var m mailertest.SNSMessage
	if err := json.Unmarshal(p.SNS.Notification(mailertest.SESBounce(ids["ann@example.com"], "Permanent", "ann@example.com"), 2), &m); err != nil {
		t.Fatal(err)
	}
	m.Message = strings.Replace(m.Message, "Permanent", "Permanent ", 1)
	tampered, _ := json.Marshal(m)
	post(tampered).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	// A certificate from a host that is not SNS's is not even fetched.
	if err := json.Unmarshal(p.SNS.Notification(mailertest.SESBounce(ids["ann@example.com"], "Permanent", "ann@example.com"), 1), &m); err != nil {
		t.Fatal(err)
	}
	m.SigningCertURL = "https://evil.example/cert.pem"
	evil, _ := json.Marshal(m)
	post(evil).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	m.SigningCertURL, m.Signature = strings.Replace(m.SigningCertURL, "https://evil.example", "https://"+p.SNS.Host, 1), ""
	unsigned, _ := json.Marshal(m)
	post(unsigned).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	post([]byte(`not json`)).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	p.Env.Anonymous().Do(http.MethodPost, "/api/mailer/ses/00000000-0000-4000-8000-000000000000", apptest.Raw{Body: bounce, ContentType: "text/plain"}).
		ExpectError(http.StatusNotFound, "NOT_FOUND")
	if n := p.O.Get("/api/suppressions").Expect(http.StatusOK).Len("data"); n != 2 {
		t.Fatalf("%d suppressions after refused messages", n)
	}
}

func TestSMTPBounceMailbox(t *testing.T) {
	t.Parallel()
	p := newProviderEnv(t)
	imapSrv := mailertest.NewIMAPServer(t, "bounces@acme.example", "imap-pass-1234", p.SMTP.Cert)
	p.O.Put("/api/campaign-settings", p.smtpSettings(map[string]any{"bounce_mailbox": map[string]any{
		"imap_host": imapSrv.Host, "imap_port": imapSrv.Port, "imap_username": imapSrv.Username, "imap_password": imapSrv.Password,
	}})).Expect(http.StatusOK)
	ann, bob := p.contact("Ann", "ann@example.com"), p.contact("Bob", "bob@example.com")
	tpl := p.Key.NewTemplateWith("T", "Hi", "<p>Hi {{first_name}}</p>")
	campaignID := p.Key.NewCampaignIn("C", "active")
	p.Key.NewEmailStep(campaignID, tpl, nil)
	p.Key.NewEmailStep(campaignID, tpl, map[string]any{"name": "Later", "schedule_type": "delay", "delay_days": 3})
	p.Key.Enroll(campaignID, ann, bob)
	if r := p.Env.ProcessCampaign(campaignID); r.Sent != 2 {
		t.Fatalf("process: %+v", r)
	}
	ids := map[string]string{}
	for _, m := range p.SMTP.Messages() {
		ids[m.To[0]] = mailer.NormalizeMessageID(m.Header().Get("Message-Id"))
	}
	imapSrv.Deliver(mailertest.DSN(ids["bob@example.com"], "bob@example.com", "5.1.1"))
	imapSrv.Deliver(mailertest.DSN(ids["ann@example.com"], "ann@example.com", "4.2.2"))
	imapSrv.Deliver([]byte("From: someone@example.com\r\nTo: bounces@acme.example\r\nSubject: hello\r\n\r\nNot a bounce.\r\n"))
	imapSrv.Deliver(mailertest.DSN("someone-else@relay.example", "x@example.com", "5.1.1"))

	boxes, err := p.Env.App.Campaigns.BounceMailboxes(t.Context())
	if err != nil || len(boxes) != 1 || boxes[0].Password != "imap-pass-1234" || boxes[0].Folder != "INBOX" {
		t.Fatalf("mailboxes %+v, %v", boxes, err)
	}
	res, err := p.Env.App.BounceReader.Read(t.Context(), boxes[0])
	if err != nil || res.Applied != 2 || res.Ignored != 1 {
		t.Fatalf("read: %+v, %v", res, err)
	}
	if seen := imapSrv.Seen(); len(seen) != 4 || !seen[0] || !seen[1] || seen[2] || seen[3] {
		t.Fatalf("seen flags %v", seen)
	}
	sup := p.O.Get("/api/suppressions").Expect(http.StatusOK)
	if sup.Len("data") != 1 || sup.String("data.0.email") != "bob@example.com" || sup.String("data.0.reason") != "bounce" || sup.String("data.0.source") != "provider" {
		t.Fatalf("suppressions: %s", sup.Body)
	}
	stats := p.O.Get("/api/campaigns/" + campaignID + "/stats").Expect(http.StatusOK)
	if stats.Int("data.summary.bounced_count") != 1 {
		t.Fatalf("stats: %s", stats.Body)
	}
	// Read again: handled messages are not read twice.
	if res, err := p.Env.App.BounceReader.Read(t.Context(), boxes[0]); err != nil || res.Applied != 0 || res.Received != 1 {
		t.Fatalf("second read: %+v, %v", res, err)
	}
}

func TestAccountEmailsThroughSMTP(t *testing.T) {
	t.Parallel()
	relay := mailertest.NewSMTPServer(t, mailertest.SMTPOptions{Security: "tls", Username: "sys@x", Password: "p:w"})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, relay.Cert.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	tm := apptest.Setup(t, apptest.Options{NoTeam: true, Env: map[string]string{
		"SYSTEM_MAIL_PROVIDER": "smtp", "SYSTEM_SMTP_URL": "smtps://sys%40x:p%3Aw@" + relay.Addr(),
		"SYSTEM_SENDER_EMAIL": "accounts@cb.example", "SYSTEM_SENDER_NAME": "CB", "MAIL_CA_FILE": ca,
	}})
	ann := tm.Env.Signup("ann")
	tm.Env.Anonymous().Post("/api/auth/password-reset", map[string]string{"email": ann.Email}).Expect(http.StatusAccepted)
	tm.Env.WaitJobs()
	var got *mailertest.SMTPMessage
	for _, m := range relay.Messages() {
		if strings.EqualFold(m.To[0], ann.Email) {
			got = &m
		}
	}
	if got == nil || got.From != "accounts@cb.example" || !strings.Contains(string(got.Data), "/app/reset-password?token=") || tm.Mail.RequestCount() != 0 {
		t.Fatalf("reset email through SMTP: %+v (sendgrid requests %d)", got, tm.Mail.RequestCount())
	}
}

// Transactional emails go out through the book's SMTP or SES settings,
// and what those providers report of them reaches each message: an
// address the relay refuses for good is suppressed, a bounce report in
// the mailbox and SES's notifications stamp the message.
func TestTransactionalThroughSMTPAndSES(t *testing.T) {
	t.Parallel()
	p := newProviderEnv(t)
	p.SMTP.FailRecipient("gone@example.com", 550, "5.1.1 no such user")
	imapSrv := mailertest.NewIMAPServer(t, "bounces@acme.example", "imap-pass-1234", p.SMTP.Cert)
	p.O.Put("/api/campaign-settings", p.smtpSettings(map[string]any{"bounce_mailbox": map[string]any{
		"imap_host": imapSrv.Host, "imap_port": imapSrv.Port, "imap_username": imapSrv.Username, "imap_password": imapSrv.Password,
	}})).Expect(http.StatusOK)
	tpl := p.Key.NewTemplateWith("T", "Receipt", "<p>Thanks</p>")
	send := func(to string) string {
		return p.Key.Post("/api/v1/transactional", map[string]any{"template_id": tpl, "to": map[string]any{"email": to}}).
			Expect(http.StatusAccepted).String("data.id")
	}
	gone, bob := send("gone@example.com"), send("bob@example.com")
	if r := waitStatus(t, p.Key, gone); r.String("data.status") != "failed" || !strings.Contains(r.String("data.detail"), "550") {
		t.Fatalf("refused: %s", r.Body)
	}
	sup := p.O.Get("/api/suppressions?q=gone").Expect(http.StatusOK)
	if sup.Len("data") != 1 || sup.String("data.0.reason") != "bounce" || sup.String("data.0.source") != "provider" {
		t.Fatalf("suppressions: %s", sup.Body)
	}
	sent := waitStatus(t, p.Key, bob)
	msgs := p.SMTP.Messages()
	if sent.String("data.status") != "sent" || len(msgs) != 1 {
		t.Fatalf("smtp: %d messages, %s", len(msgs), sent.Body)
	}
	id := mailer.NormalizeMessageID(msgs[0].Header().Get("Message-Id"))
	if sent.String("data.provider_message_id") != id {
		t.Fatalf("provider_message_id %q, the message's id %q", sent.String("data.provider_message_id"), id)
	}
	imapSrv.Deliver(mailertest.DSN(id, "bob@example.com", "5.1.1"))
	boxes, err := p.Env.App.Campaigns.BounceMailboxes(t.Context())
	if err != nil || len(boxes) != 1 {
		t.Fatalf("mailboxes %+v, %v", boxes, err)
	}
	if res, err := p.Env.App.BounceReader.Read(t.Context(), boxes[0]); err != nil || res.Applied != 1 || res.Ignored != 0 {
		t.Fatalf("read: %+v, %v", res, err)
	}
	if seen := imapSrv.Seen(); len(seen) != 1 || !seen[0] {
		t.Fatalf("the report was not marked handled: %v", seen)
	}
	if r := p.Key.Get("/api/v1/transactional/" + bob).Expect(http.StatusOK); r.Value("data.bounced_at") == nil || r.Len("data.events") != 1 {
		t.Fatalf("after the bounce report: %s", r.Body)
	}
	if n := p.O.Get("/api/suppressions?q=bob").Expect(http.StatusOK).Len("data"); n != 1 {
		t.Fatalf("the hard bounce suppressed %d addresses", n)
	}

	p.O.Put("/api/campaign-settings", p.sesSettings(nil)).Expect(http.StatusOK)
	time.Sleep(transactional.SettingsTTL) // the sender keeps a book's settings this long
	cat := send("cat@example.com")
	if r := waitStatus(t, p.Key, cat); r.String("data.status") != "sent" {
		t.Fatalf("ses: %s", r.Body)
	}
	sesMsgs := p.SES.Messages()
	if len(sesMsgs) != 1 {
		t.Fatalf("%d ses messages", len(sesMsgs))
	}
	post := func(body []byte) *apptest.Response {
		return p.Env.Anonymous().Do(http.MethodPost, "/api/mailer/ses/"+p.Book, apptest.Raw{Body: body, ContentType: "text/plain; charset=UTF-8"})
	}
	post(p.SNS.SubscriptionConfirmation(1)).Expect(http.StatusOK)
	res := post(p.SNS.Notification(mailertest.SESDelivery(sesMsgs[0].MessageID, "cat@example.com"), 1)).Expect(http.StatusOK)
	if res.Int("data.applied") != 1 {
		t.Fatalf("delivery: %s", res.Body)
	}
	post(p.SNS.Notification(mailertest.SESComplaint(sesMsgs[0].MessageID, "cat@example.com"), 1)).Expect(http.StatusOK)
	r := p.Key.Get("/api/v1/transactional/" + cat).Expect(http.StatusOK)
	if r.Value("data.delivered_at") == nil || r.Len("data.events") != 2 {
		t.Fatalf("after SES's notifications: %s", r.Body)
	}
	if n := p.O.Get("/api/suppressions?q=cat").Expect(http.StatusOK).Len("data"); n != 1 {
		t.Fatalf("the complaint suppressed %d addresses", n)
	}
}
