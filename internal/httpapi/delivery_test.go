package httpapi_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
	"github.com/contactbook/contactbook/internal/suppression"
)

// eventSigner signs Event Webhook batches as SendGrid does: ECDSA P-256
// over SHA-256 of the timestamp followed by the raw body, base64 DER.
type eventSigner struct {
	priv *ecdsa.PrivateKey
	pub  string // base64 PKIX, as SendGrid shows it
}

func newEventSigner(t *testing.T) *eventSigner {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return &eventSigner{priv: priv, pub: base64.StdEncoding.EncodeToString(der)}
}

func (s *eventSigner) sign(t *testing.T, at time.Time, body []byte) (sig, ts string) {
	t.Helper()
	ts = strconv.FormatInt(at.Unix(), 10)
	sum := sha256.Sum256(append([]byte(ts), body...))
	raw, err := ecdsa.SignASN1(rand.Reader, s.priv, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(raw), ts
}

// post sends a signed batch for the book.
func (s *eventSigner) post(c *campEnv, bookID string, events []map[string]any) *apptest.Response {
	c.t.Helper()
	body, err := json.Marshal(events)
	if err != nil {
		c.t.Fatal(err)
	}
	body = append(body, '\r', '\n')
	sig, ts := s.sign(c.t, c.Env.Clock.Now(), body)
	return c.Env.Anonymous().Post("/api/mailer/events/"+bookID, apptest.Raw{ContentType: "application/json", Body: body},
		"X-Twilio-Email-Event-Webhook-Signature", sig, "X-Twilio-Email-Event-Webhook-Timestamp", ts)
}

// providerEvent is an event about a sent email, carrying its custom args.
// configure saves the book's email settings with SendGrid and the
// signer's key for the Event Webhook.
func (s *eventSigner) configure(c *campEnv) {
	c.O.Put("/api/campaign-settings", map[string]any{
		"sender_name": "Acme", "sender_email": "news@acme.example", "company_name": "Acme Inc.", "address_line1": "1 Main St",
		"mailer_api_key": apptest.MailerKey, "event_webhook_public_key": s.pub,
	}).Expect(http.StatusOK)
}

func providerEvent(r mailertest.Recipient, id, kind string, at time.Time, extra map[string]any) map[string]any {
	e := map[string]any{"event": kind, "email": r.Email, "timestamp": at.Unix(), "sg_event_id": id, "sg_message_id": r.MessageID}
	for k, v := range r.CustomArgs {
		e[k] = v
	}
	for k, v := range extra {
		e[k] = v
	}
	return e
}

// sentCampaign configures the book with the signer's key and tracking,
// and sends one email step to ann and bob.
func sentCampaign(t *testing.T, c *campEnv, signer *eventSigner) (campaignID, stepID string, ann, bob string, byEmail map[string]mailertest.Recipient) {
	t.Helper()
	c.O.ConfigureEmail()
	c.O.Put("/api/campaign-settings", map[string]any{
		"sender_name": "Acme News", "sender_email": "news@acme.example", "company_name": "Acme Inc.", "address_line1": "1 Main St",
		"mailer_api_key": apptest.MailerKey, "event_webhook_public_key": signer.pub, "track_opens": true,
	}).Expect(http.StatusOK)
	ann, bob = c.contact("Ann", "ann@example.com"), c.contact("Bob", "bob@example.com")
	tpl := c.Key.NewTemplateWith("T", "Hi", "<p>Hi {{first_name}}</p>")
	campaignID = c.Key.NewCampaignIn("C", "active")
	stepID = c.Key.NewEmailStep(campaignID, tpl, nil)
	// A later step keeps the participants active after the first email.
	c.Key.NewEmailStep(campaignID, tpl, map[string]any{"name": "Later", "schedule_type": "delay", "delay_days": 3})
	c.Key.Enroll(campaignID, ann, bob)
	if r := c.Env.ProcessCampaign(campaignID); r.Sent != 2 {
		t.Fatalf("process: %+v", r)
	}
	byEmail = map[string]mailertest.Recipient{}
	for _, r := range c.Mail.Recipients() {
		byEmail[r.Email] = r
	}
	return campaignID, stepID, ann, bob, byEmail
}

func TestMailerEventsApplyOnceAndFeedTheReports(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	signer := newEventSigner(t)
	campaignID, stepID, ann, bob, rcpt := sentCampaign(t, c, signer)

	settings := c.O.Get("/api/campaign-settings").Expect(http.StatusOK)
	if got, want := settings.String("data.event_webhook_url"), "https://contacts.example.com/api/mailer/events/"+c.Book; got != want {
		t.Fatalf("event_webhook_url %q, want %q", got, want)
	}
	if !settings.Bool("data.track_opens") || settings.Bool("data.track_clicks") || settings.String("data.event_webhook_public_key") != signer.pub {
		t.Fatal("settings do not keep the key and the tracking switches")
	}
	if settings.Value("data.events_received_at") != nil {
		t.Fatalf("events_received_at before any batch: %s", settings.Body)
	}
	reqs := c.Mail.Requests()
	if ts := reqs[0].TrackingSettings; ts == nil || ts.OpenTracking == nil || !ts.OpenTracking.Enable || ts.ClickTracking == nil || ts.ClickTracking.Enable {
		t.Fatalf("tracking_settings sent: %+v", ts)
	}

	now := c.Env.Clock.Now()
	a, b := rcpt["ann@example.com"], rcpt["bob@example.com"]
	batch := []map[string]any{
		providerEvent(a, "a1", "processed", now, nil),
		providerEvent(a, "a2", "delivered", now.Add(time.Second), nil),
		providerEvent(a, "a3", "open", now.Add(2*time.Second), map[string]any{"sg_machine_open": true}),
		providerEvent(a, "a4", "open", now.Add(3*time.Second), map[string]any{"sg_machine_open": false}),
		providerEvent(a, "a5", "open", now.Add(4*time.Second), nil),
		providerEvent(a, "a6", "click", now.Add(5*time.Second), map[string]any{"url": "https://acme.example/pricing"}),
		providerEvent(b, "b1", "bounce", now.Add(time.Second), map[string]any{"type": "bounce", "reason": "550 5.1.1 no such user"}),
		{"event": "delivered", "email": "x@example.com", "timestamp": now.Unix(), "sg_event_id": "x1"}, // names no email
	}
	res := signer.post(c, c.Book, batch).Expect(http.StatusOK)
	if res.Int("data.received") != 8 || res.Int("data.applied") != 6 || res.Int("data.duplicates") != 0 || res.Int("data.ignored") != 2 {
		t.Fatalf("first batch: %s", res.Body)
	}
	if got := c.O.Get("/api/campaign-settings").Expect(http.StatusOK).String("data.events_received_at"); got != c.Env.Clock.Now().UTC().Format(time.RFC3339Nano) && got != c.Env.Clock.Now().Format(time.RFC3339Nano) {
		t.Fatalf("events_received_at %q after a batch at %s", got, c.Env.Clock.Now())
	}
	// A replay (SendGrid retries what it did not see acknowledged) changes nothing.
	before := c.Env.QueryInt(`SELECT count(*) FROM delivery_events`) + 1000*c.Env.QueryInt(`SELECT sum(opened + delivered + bounced) FROM delivery_step_counts`)
	res = signer.post(c, c.Book, batch).Expect(http.StatusOK)
	if res.Int("data.applied") != 0 || res.Int("data.duplicates") != 6 {
		t.Fatalf("replay: %s", res.Body)
	}
	if after := c.Env.QueryInt(`SELECT count(*) FROM delivery_events`) + 1000*c.Env.QueryInt(`SELECT sum(opened + delivered + bounced) FROM delivery_step_counts`); after != before {
		t.Fatalf("replay changed the data: %d -> %d", before, after)
	}

	stats := c.O.Get("/api/campaigns/" + campaignID + "/stats").Expect(http.StatusOK)
	for k, want := range map[string]int{"delivered_count": 1, "opened_count": 1, "clicked_count": 1, "bounced_count": 1, "complained_count": 0, "unsubscribed_count": 0} {
		if got := stats.Int("data.summary." + k); got != want {
			t.Errorf("summary %s = %d, want %d", k, got, want)
		}
		if got := stats.Int("data.steps.0." + k); got != want {
			t.Errorf("step %s = %d, want %d", k, got, want)
		}
	}
	// The contacts behind the numbers.
	for result, want := range map[string]string{"delivered": "ann@example.com", "opened": "ann@example.com", "clicked": "ann@example.com", "bounced": "bob@example.com"} {
		sc := c.O.Get("/api/campaign-step-contacts/" + campaignID + "/" + stepID + "?result=" + result).Expect(http.StatusOK)
		if sc.Int("meta.total") != 1 || sc.String("data.0.contact_email") != want {
			t.Errorf("step contacts %s: %s", result, sc.Body)
		}
	}
	if sc := c.O.Get("/api/campaign-step-contacts/" + campaignID + "/" + stepID + "?result=complained").Expect(http.StatusOK); sc.Int("meta.total") != 0 {
		t.Errorf("step contacts complained: %s", sc.Body)
	}
	c.O.Get("/api/campaign-step-contacts/"+campaignID+"/"+stepID+"?result=maybe").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	d := c.Key.Get("/api/v1/deliverability?days=7").Expect(http.StatusOK)
	if d.Int("data.sent") != 2 || d.Int("data.delivered") != 1 || d.Int("data.bounced") != 1 || d.Int("data.opened") != 1 ||
		d.Value("data.bounce_rate").(float64) != 0.5 || d.Int("data.days") != 7 {
		t.Fatalf("deliverability: %s", d.Body)
	}
	// The daily series covers the whole window, oldest first, ending today.
	if d.Len("data.daily") != 7 || d.String("data.daily.6.day") != c.Env.Clock.Now().UTC().Format(time.DateOnly) ||
		d.Int("data.daily.6.sent")+d.Int("data.daily.5.sent") != 2 || d.Int("data.daily.0.sent") != 0 {
		t.Fatalf("daily: %s", d.Body)
	}
	c.O.Get("/api/deliverability?days=0").ExpectError(http.StatusBadRequest, "INVALID_INPUT")

	// The hard bounce suppressed bob's address and took him out of the campaign.
	sup := c.O.Get("/api/suppressions").Expect(http.StatusOK)
	if sup.Int("meta.total") != 1 || sup.String("data.0.email") != "bob@example.com" || sup.String("data.0.reason") != "bounce" || sup.String("data.0.source") != "provider" {
		t.Fatalf("suppressions: %s", sup.Body)
	}
	if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE contact_id = $1 AND status = 'removed'`, bob); n != 1 {
		t.Fatal("the bounced contact stays in the campaign")
	}
	if n := c.Env.QueryInt(`SELECT count(*) FROM contacts WHERE id = $1 AND suppressed_at IS NOT NULL`, bob); n != 1 {
		t.Fatal("the contact whose only address bounced is not suppressed")
	}

	act := c.O.Get("/api/contacts/" + ann + "/activity").Expect(http.StatusOK)
	var items []struct {
		Type, Detail string
		StepID       *string `json:"step_id"`
	}
	act.Decode("data", &items)
	var types []string
	for _, it := range items {
		types = append(types, it.Type)
	}
	if fmt.Sprint(types) != "[clicked opened opened delivered sent enrolled]" || items[0].Detail != "https://acme.example/pricing" || *items[0].StepID != stepID {
		t.Fatalf("activity: %v %s", types, act.Body)
	}

	// A soft bounce (blocked) is the email's state only: no bounce counted
	// or shown, no suppression; the timeline shows it as deferred.
	signer.post(c, c.Book, []map[string]any{providerEvent(a, "a9", "bounce", now.Add(10*time.Second), map[string]any{"type": "blocked", "reason": "mailbox busy"})}).
		Expect(http.StatusOK)
	act = c.O.Get("/api/contacts/" + ann + "/activity").Expect(http.StatusOK)
	act.Decode("data", &items)
	if items[0].Type != "deferred" || items[0].Detail != "blocked (soft bounce): mailbox busy" {
		t.Fatalf("a blocked bounce in the activity: %s", act.Body)
	}
	if got := c.O.Get("/api/campaigns/" + campaignID + "/stats").Expect(http.StatusOK).Int("data.summary.bounced_count"); got != 1 {
		t.Fatalf("bounced_count after a soft bounce: %d", got)
	}
	if c.O.Get("/api/suppressions?q=ann").Expect(http.StatusOK).Int("meta.total") != 0 {
		t.Fatal("a soft bounce suppressed the address")
	}
}

func TestMailerEventsRefusals(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	signer := newEventSigner(t)
	_, _, _, _, rcpt := sentCampaign(t, c, signer)
	a := rcpt["ann@example.com"]
	now := c.Env.Clock.Now()
	batch := []map[string]any{providerEvent(a, "e1", "delivered", now, nil), providerEvent(a, "e2", "open", now, nil)}
	body, _ := json.Marshal(batch)
	post := func(book string, body []byte, sig, ts string) *apptest.Response {
		return c.Env.Anonymous().Post("/api/mailer/events/"+book, apptest.Raw{ContentType: "application/json", Body: body},
			"X-Twilio-Email-Event-Webhook-Signature", sig, "X-Twilio-Email-Event-Webhook-Timestamp", ts)
	}
	sig, ts := signer.sign(t, now, body)
	// One altered byte (the batch is signed whole) refuses it whole.
	altered := append([]byte{}, body...)
	altered[len(altered)-3] = ' '
	post(c.Book, altered, sig, ts).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	post(c.Book, body, "", ts).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	other := newEventSigner(t)
	osig, _ := other.sign(t, now, body)
	post(c.Book, body, osig, ts).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	oldSig, oldTS := signer.sign(t, now.Add(-11*time.Minute), body)
	post(c.Book, body, oldSig, oldTS).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	if n := c.Env.QueryInt(`SELECT count(*) FROM delivery_events`); n != 0 {
		t.Fatalf("%d events applied from refused batches", n)
	}
	post("9d2a4c6e-8f0b-4d1a-b3c5-e7f9a1b2c3d4", body, sig, ts).ExpectError(http.StatusNotFound, "NOT_FOUND")
	notArray := []byte(`{"event":"open"}`)
	nsig, nts := signer.sign(t, now, notArray)
	post(c.Book, notArray, nsig, nts).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	big := make([]byte, 5<<20+10)
	post(c.Book, big, sig, ts).ExpectError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")

	// Another book of the same team with its own key: ann's email is not
	// one of its emails, so the events are ignored there.
	book2 := c.Owner.CreateBook("Other")
	c.Owner.InBook(book2).Put("/api/campaign-settings", map[string]any{"event_webhook_public_key": signer.pub}).Expect(http.StatusOK)
	res := signer.post(c, book2, batch).Expect(http.StatusOK)
	if res.Int("data.ignored") != 2 || res.Int("data.applied") != 0 {
		t.Fatalf("another book's events: %s", res.Body)
	}
	// A book without a key refuses every batch.
	book3 := c.Owner.CreateBook("Keyless")
	post(book3, body, sig, ts).ExpectError(http.StatusForbidden, "FORBIDDEN")
	// A key that is not a P-256 public key is refused when saved.
	c.O.Put("/api/campaign-settings", map[string]any{"event_webhook_public_key": "bm90IGEga2V5"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
}

// Two instances given the same batch at once apply it once.
func TestMailerEventsConcurrentSameBatch(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	signer := newEventSigner(t)
	_, _, _, _, rcpt := sentCampaign(t, c, signer)
	now := c.Env.Clock.Now()
	var batch []map[string]any
	for i := range 200 {
		r := rcpt["ann@example.com"]
		if i%2 == 1 {
			r = rcpt["bob@example.com"]
		}
		batch = append(batch, providerEvent(r, fmt.Sprint("ev", i), "open", now.Add(time.Duration(i)*time.Second), nil))
	}
	var wg sync.WaitGroup
	applied := make([]int, 4)
	for i := range applied {
		wg.Add(1)
		go func() {
			defer wg.Done()
			applied[i] = signer.post(c, c.Book, batch).Expect(http.StatusOK).Int("data.applied")
		}()
	}
	wg.Wait()
	if total := applied[0] + applied[1] + applied[2] + applied[3]; total != 200 {
		t.Fatalf("applied %v, want 200 in all", applied)
	}
	if n := c.Env.QueryInt(`SELECT opened FROM delivery_step_counts`); n != 2 {
		t.Fatalf("unique opens %d, want 2", n)
	}
}

func TestSuppressionEndpoints(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	ann := c.contact("Ann", "ann@example.com")

	res := c.Key.Post("/api/v1/suppressions", map[string]any{"email": " Ann@Example.com "}).Expect(http.StatusCreated)
	id := res.String("data.id")
	if res.String("data.reason") != "manual" || res.String("data.source") != "api" || res.String("data.email") != "ann@example.com" {
		t.Fatalf("added: %s", res.Body)
	}
	if again := c.O.Post("/api/suppressions", map[string]any{"email": "ann@example.com", "reason": "complaint"}).Expect(http.StatusOK); again.String("data.id") != id {
		t.Fatal("an address already suppressed must answer the record in force")
	}
	c.O.Post("/api/suppressions", map[string]any{"email": "not an address"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.O.Post("/api/suppressions", map[string]any{"email": "x@example.com", "reason": "whim"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if c.O.Get("/api/suppressions?reason=manual&q=ann").Expect(http.StatusOK).Int("meta.total") != 1 ||
		c.O.Get("/api/suppressions?reason=bounce").Expect(http.StatusOK).Int("meta.total") != 0 {
		t.Fatal("filters")
	}
	// The contact's only address is suppressed: its campaign email is not sent.
	tpl := c.Key.NewTemplateWith("T", "Hi", "<p>Hi</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	step := c.Key.NewEmailStep(cid, tpl, nil)
	c.Env.App.Pool.Exec(t.Context(), `UPDATE contacts SET suppressed_at = NULL WHERE id = $1`, ann) //nolint:errcheck // enrol despite the mark
	c.Key.Enroll(cid, ann)
	c.Env.ProcessCampaign(cid)
	if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result = 'failed' AND result_detail = 'address suppressed (manual)'`, step); n != 1 {
		t.Fatal("a suppressed address was emailed")
	}
	if c.Mail.RecipientCount() != 0 {
		t.Fatal("the provider got the email")
	}

	// Lifting needs an admin under /api, or the team's key under /api/v1;
	// the record stays with who lifted it.
	member := c.Env.Join(c.Owner, "member", "member")
	member.Delete("/api/suppressions/"+id).ExpectError(http.StatusForbidden, "FORBIDDEN")
	c.O.Delete("/api/suppressions/" + id).Expect(http.StatusNoContent)
	c.O.Delete("/api/suppressions/" + id).Expect(http.StatusNoContent)
	if n := c.Env.QueryInt(`SELECT count(*) FROM suppressions WHERE id = $1 AND lifted_at IS NOT NULL AND lifted_by IS NOT NULL`, id); n != 1 {
		t.Fatal("the lifted record is not kept with who lifted it")
	}
	byKey := c.Key.Post("/api/v1/suppressions", map[string]any{"email": "key@example.com"}).Expect(http.StatusCreated).String("data.id")
	c.Key.Delete("/api/v1/suppressions/" + byKey).Expect(http.StatusNoContent)
	if n := c.Env.QueryInt(`SELECT count(*) FROM audit_log WHERE action = 'suppression.lifted' AND target_id = $1 AND actor_type = 'api_key'`, byKey); n != 1 {
		t.Fatal("a lift by the API key is not in the audit log as the key's")
	}
	if c.O.Get("/api/suppressions").Expect(http.StatusOK).Int("meta.total") != 0 {
		t.Fatal("a lifted suppression is still listed")
	}
	other := c.Env.Signup("stranger")
	other.InBook(c.Book).Get("/api/suppressions").ExpectError(http.StatusForbidden, "FORBIDDEN")
	other.Delete("/api/suppressions/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
}

// An event may arrive while the email's outcome is not yet recorded (the
// provider answered, the runner has not written the result): the email's
// row exists from the claim on, so the event applies. A spam report
// suppresses the address with reason complaint.
func TestMailerEventsBeforeTheSendIsRecorded(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	signer := newEventSigner(t)
	_, stepID, ann, _, rcpt := sentCampaign(t, c, signer)
	// Back to the state of a claim in flight: no result yet.
	if _, err := c.Env.App.Pool.Exec(t.Context(), `
		UPDATE campaign_step_completions c SET result = NULL, completed_at = NULL, lease_until = now() + interval '1 minute'
		FROM campaign_participants p WHERE p.id = c.participant_id AND p.contact_id = $1 AND c.step_id = $2`, ann, stepID); err != nil {
		t.Fatal(err)
	}
	a := rcpt["ann@example.com"]
	now := c.Env.Clock.Now()
	res := signer.post(c, c.Book, []map[string]any{
		providerEvent(a, "s1", "delivered", now, nil),
		providerEvent(a, "s2", "spamreport", now.Add(time.Minute), nil),
	}).Expect(http.StatusOK)
	if res.Int("data.applied") != 2 {
		t.Fatalf("events before the outcome is recorded: %s", res.Body)
	}
	if n := c.Env.QueryInt(`SELECT complained FROM delivery_step_counts WHERE step_id = $1`, stepID); n != 1 {
		t.Fatalf("complaints %d", n)
	}
	sup := c.O.Get("/api/suppressions?reason=complaint").Expect(http.StatusOK)
	if sup.Int("meta.total") != 1 || sup.String("data.0.email") != "ann@example.com" {
		t.Fatalf("suppressions: %s", sup.Body)
	}
	if d := c.O.Get("/api/deliverability").Expect(http.StatusOK); d.Int("data.complained") != 1 || d.Value("data.complaint_rate").(float64) != 0.5 {
		t.Fatalf("deliverability: %s", d.Body)
	}
}

// The export streams every suppression in force that the filters select,
// past one statement's batch, newest first, and leaves out lifted ones.
func TestSuppressionExport(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	n := suppression.ExportBatch + 3
	if _, err := c.Env.App.Pool.Exec(t.Context(), `
		INSERT INTO suppressions (book_id, email, reason, source, created_at)
		SELECT $1, 'bulk' || g || '@example.com', 'bounce', 'provider', timestamptz '2026-01-01' + g * interval '1 second'
		FROM generate_series(1, $2) g`, c.Book, n); err != nil {
		t.Fatal(err)
	}
	c.O.Post("/api/suppressions", map[string]any{"email": "ann@example.com"}).Expect(http.StatusCreated)
	lifted := c.O.Post("/api/suppressions", map[string]any{"email": "gone@example.com"}).Expect(http.StatusCreated).String("data.id")
	c.O.Delete("/api/suppressions/" + lifted).Expect(http.StatusNoContent)

	viewer := c.Env.Join(c.Owner, "viewer", "viewer").InBook(c.Book)
	res := viewer.Get("/api/books/" + c.Book + "/suppressions/export?reason=bounce").Expect(http.StatusOK)
	if ct, cd := res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"); ct != "text/csv; charset=utf-8" || cd != `attachment; filename=suppressions.csv` {
		t.Fatalf("headers %q %q", ct, cd)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Body)), "\n")
	if len(lines) != n+1 || lines[0] != "email,reason,source,created_at" {
		t.Fatalf("%d lines, header %q", len(lines), lines[0])
	}
	if want := fmt.Sprintf("bulk%d@example.com,bounce,provider,%s", n, time.Date(2026, 1, 1, 0, 0, n, 0, time.UTC).Format(time.RFC3339)); lines[1] != want {
		t.Fatalf("first row %q, want the newest %q", lines[1], want)
	}
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		seen[strings.SplitN(l, ",", 2)[0]] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct addresses of %d: a row repeated or went missing across batches", len(seen), n)
	}
	all := c.O.Get("/api/books/" + c.Book + "/suppressions/export?q=ANN").Expect(http.StatusOK)
	if got := strings.Split(strings.TrimSpace(string(all.Body)), "\n"); len(got) != 2 || !strings.HasPrefix(got[1], "ann@example.com,manual,api,20") {
		t.Fatalf("q filter: %q", got)
	}
	c.O.Get("/api/books/"+c.Book+"/suppressions/export?reason=whim").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Env.Signup("stranger").Get("/api/books/"+c.Book+"/suppressions/export").ExpectError(http.StatusForbidden, "FORBIDDEN")
}
