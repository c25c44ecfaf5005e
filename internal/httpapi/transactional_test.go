package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

// waitStatus polls a message until its status is no longer queued.
func waitStatus(t *testing.T, c *apptest.Client, id string) *apptest.Response {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := c.Get("/api/v1/transactional/" + id).Expect(http.StatusOK)
		if r.String("data.status") != "queued" || time.Now().After(deadline) {
			return r
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func recipientTo(mail *mailertest.Server, email string) []mailertest.Recipient {
	var out []mailertest.Recipient
	for _, r := range mail.Recipients() {
		if r.Email == email {
			out = append(out, r)
		}
	}
	return out
}

func TestTransactionalSendsOnceWithDataAndContactFields(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	ada := c.Key.NewContactWith(map[string]any{"first_name": "Ada", "last_name": "Lovelace"}, "ada@example.com")
	tpl := c.Key.NewTemplateWith("Receipt", "Order {{data.order.id}}", `<p>Hi {{first_name}}, you paid {{data.order.total}} for {{data.item}}.[{{data.missing}}]</p>`)
	c.Owner.SetAddon("none") // sending needs no add-on
	res := c.Key.Post("/api/v1/transactional", map[string]any{
		"template_id": tpl, "to": map[string]any{"contact_id": ada},
		"data": map[string]any{"order": map[string]any{"id": "A-1", "total": 12.5}, "item": "<tea>"},
	}, "Idempotency-Key", "receipt-A-1").Expect(http.StatusAccepted)
	id := res.String("data.id")
	if res.String("data.status") != "queued" || res.String("data.to.email") != "ada@example.com" ||
		res.String("data.to.contact_id") != ada || res.String("data.subject") != "Order A-1" || res.String("data.to.name") != "Ada Lovelace" {
		t.Fatalf("answer %s", res.Body)
	}
	// A retry of the request with its key sends nothing more.
	again := c.Key.Post("/api/v1/transactional", map[string]any{
		"template_id": tpl, "to": map[string]any{"contact_id": ada},
		"data": map[string]any{"order": map[string]any{"id": "A-1", "total": 12.5}, "item": "<tea>"},
	}, "Idempotency-Key", "receipt-A-1").Expect(http.StatusAccepted)
	if again.String("data.id") != id || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay %s", again.Body)
	}
	got := waitStatus(t, c.Key, id)
	if got.String("data.status") != "sent" || got.String("data.provider_message_id") == "" || got.Value("data.sent_at") == nil {
		t.Fatalf("message %s", got.Body)
	}
	time.Sleep(700 * time.Millisecond) // a second send, if any, would have happened by now
	rs := recipientTo(c.Mail, "ada@example.com")
	if len(rs) != 1 {
		t.Fatalf("%d emails to ada, want 1", len(rs))
	}
	html := rs[0].HTML()
	if !strings.Contains(html, "<p>Hi Ada, you paid 12.5 for &lt;tea&gt;.[]</p>") {
		t.Fatalf("html %s", html)
	}
	if strings.Contains(html, "Unsubscribe") || rs[0].Headers["List-Unsubscribe"] != "" {
		t.Fatalf("a transactional email carries the unsubscribe footer or header: %s %v", html, rs[0].Headers)
	}
	if rs[0].CustomArgs["transactional_id"] != id || rs[0].Subject != "Order A-1" {
		t.Fatalf("custom args %v, subject %q", rs[0].CustomArgs, rs[0].Subject)
	}
	if n := c.Env.QueryInt(`SELECT count(*) FROM transactional_messages WHERE body_html IS NOT NULL`); n != 0 {
		t.Fatalf("a sent message keeps its body")
	}
	// The list, newest first, filtered by status; the dashboard sees it too.
	second := c.Key.Post("/api/v1/transactional", map[string]any{"template_id": tpl, "to": map[string]any{"email": "x@example.org", "name": "X"}}).
		Expect(http.StatusAccepted).String("data.id")
	waitStatus(t, c.Key, second)
	list := c.O.Get("/api/transactional?status=sent").Expect(http.StatusOK)
	if list.Len("data") != 2 || list.String("data.0.id") != second || list.String("data.1.id") != id {
		t.Fatalf("list %s", list.Body)
	}
	if n := c.O.Get("/api/transactional?status=failed").Expect(http.StatusOK).Len("data"); n != 0 {
		t.Fatalf("%d failed", n)
	}
	if c.Key.Get("/api/v1/transactional?limit=1").Expect(http.StatusOK).String("meta.next_cursor") == "" {
		t.Fatalf("no next cursor")
	}
	c.Key.Get("/api/v1/transactional?status=nope").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Key.Get("/api/v1/transactional?limit=201").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	// The contact's activity shows it.
	act := c.O.Get("/api/contacts/" + ada + "/activity").Expect(http.StatusOK)
	if act.String("data.0.type") != "transactional_sent" || act.String("data.0.transactional_id") != id {
		t.Fatalf("activity %s", act.Body)
	}
}

func TestTransactionalSuppressionRules(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplate("T")
	c.Key.Post("/api/v1/suppressions", map[string]any{"email": "bounced@example.com", "reason": "bounce"}).Expect(http.StatusCreated)
	c.Key.Post("/api/v1/suppressions", map[string]any{"email": "manual@example.com"}).Expect(http.StatusCreated)
	c.Key.Post("/api/v1/suppressions", map[string]any{"email": "unsub@example.com", "reason": "unsubscribe"}).Expect(http.StatusCreated)
	for addr, reason := range map[string]string{"bounced@example.com": "bounce", "manual@example.com": "manual"} {
		r := c.Key.Post("/api/v1/transactional", map[string]any{"template_id": tpl, "to": map[string]any{"email": strings.ToUpper(addr)}}).
			Expect(http.StatusAccepted)
		if r.String("data.status") != "suppressed" || r.String("data.detail") != "address suppressed ("+reason+")" {
			t.Fatalf("%s: %s", addr, r.Body)
		}
	}
	// An unsubscribe does not stop a transactional email.
	r := c.Key.Post("/api/v1/transactional", map[string]any{"template_id": tpl, "to": map[string]any{"email": "unsub@example.com"}}).
		Expect(http.StatusAccepted)
	if got := waitStatus(t, c.Key, r.String("data.id")); got.String("data.status") != "sent" {
		t.Fatalf("unsubscribed address: %s", got.Body)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(recipientTo(c.Mail, "bounced@example.com")) + len(recipientTo(c.Mail, "manual@example.com")); n != 0 {
		t.Fatalf("%d emails went to suppressed addresses", n)
	}
}

func TestTransactionalRefusals(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	tpl := c.Key.NewTemplate("T")
	send := func(body map[string]any) *apptest.Response {
		return c.Key.Post("/api/v1/transactional", body)
	}
	// Without email settings: 409 naming what is missing.
	r := send(map[string]any{"template_id": tpl, "to": map[string]any{"email": "a@example.com"}}).ExpectError(http.StatusConflict, "CONFLICT")
	if msg := r.String("error.message"); !strings.Contains(msg, "sender_email") || !strings.Contains(msg, "provider") {
		t.Fatalf("message %q", msg)
	}
	c.O.ConfigureEmail()
	send(map[string]any{"to": map[string]any{"email": "a@example.com"}}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	send(map[string]any{"template_id": tpl}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	send(map[string]any{"template_id": tpl, "to": map[string]any{"email": "nope"}}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	send(map[string]any{"template_id": tpl, "to": map[string]any{"email": "a@example.com", "contact_id": tpl}}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	send(map[string]any{"template_id": tpl, "to": map[string]any{"email": "a@example.com"}, "data": []int{1}}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	send(map[string]any{"template_id": tpl, "to": map[string]any{"email": "a@example.com"}, "data": map[string]any{"big": strings.Repeat("x", 33<<10)}}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	send(map[string]any{"template_id": c.Key.NewContact("Zed", ""), "to": map[string]any{"email": "a@example.com"}}).
		ExpectError(http.StatusNotFound, "NOT_FOUND")
	send(map[string]any{"template_id": tpl, "to": map[string]any{"contact_id": tpl}}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	// Another team sees nothing of this book's messages.
	ok := send(map[string]any{"template_id": tpl, "to": map[string]any{"email": "a@example.com"}}).Expect(http.StatusAccepted)
	other := c.AddTeam("other")
	other.Key.Get("/api/v1/transactional/"+ok.String("data.id")).ExpectError(http.StatusNotFound, "NOT_FOUND")
	if n := c.Env.QueryInt(`SELECT count(*) FROM transactional_messages`); n != 1 {
		t.Fatalf("%d messages stored, want 1", n)
	}
}

func TestTransactionalRetriesTemporaryFailures(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplate("T")
	c.Mail.FailNext(http.StatusBadRequest, `{"errors":[{"message":"The to address is not allowed"}]}`, 1)
	perm := c.Key.Post("/api/v1/transactional", map[string]any{"template_id": tpl, "to": map[string]any{"email": "p@example.com"}}).
		Expect(http.StatusAccepted).String("data.id")
	if got := waitStatus(t, c.Key, perm); got.String("data.status") != "failed" || !strings.Contains(got.String("data.detail"), "not allowed") {
		t.Fatalf("permanent failure: %s", got.Body)
	}
	c.Mail.FailNext(http.StatusServiceUnavailable, "", 1)
	tmp := c.Key.Post("/api/v1/transactional", map[string]any{"template_id": tpl, "to": map[string]any{"email": "t@example.com"}}).
		Expect(http.StatusAccepted).String("data.id")
	deadline := time.Now().Add(10 * time.Second)
	for c.Env.QueryInt(`SELECT count(*) FROM transactional_messages WHERE id = $1 AND attempts = 1 AND sending_at IS NULL`, tmp) < 1 &&
		time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	r := c.Key.Get("/api/v1/transactional/" + tmp).Expect(http.StatusOK)
	if r.String("data.status") != "queued" || r.String("data.detail") == "" {
		t.Fatalf("after a temporary failure: %s", r.Body)
	}
	// The retry is due after the backoff.
	c.Env.Clock.Advance(time.Minute)
	if got := waitStatus(t, c.Key, tmp); got.String("data.status") != "sent" {
		t.Fatalf("after the retry: %s", got.Body)
	}
	if n := len(recipientTo(c.Mail, "t@example.com")); n != 1 {
		t.Fatalf("%d accepted sends to t@, want 1", n)
	}
}

func TestTransactionalProviderFeedback(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	signer := newEventSigner(t)
	c.O.ConfigureEmail()
	signer.configure(c)
	ann := c.contact("Ann", "ann@example.com")
	tpl := c.Key.NewTemplate("T")
	id := c.Key.Post("/api/v1/transactional", map[string]any{"template_id": tpl, "to": map[string]any{"contact_id": ann}}).
		Expect(http.StatusAccepted).String("data.id")
	waitStatus(t, c.Key, id)
	rs := recipientTo(c.Mail, "ann@example.com")
	if len(rs) != 1 {
		t.Fatalf("%d emails", len(rs))
	}
	at := c.Env.Clock.Now().Add(time.Minute)
	evs := []map[string]any{
		providerEvent(rs[0], "e1", "delivered", at, nil),
		providerEvent(rs[0], "e2", "open", at.Add(time.Minute), nil),
		// Matched on the provider's message id alone.
		{"event": "click", "email": "ann@example.com", "timestamp": at.Add(2 * time.Minute).Unix(), "sg_event_id": "e3",
			"sg_message_id": rs[0].MessageID + ".filter0001", "url": "https://acme.example/x"},
		providerEvent(rs[0], "e4", "bounce", at.Add(3*time.Minute), map[string]any{"type": "bounce", "reason": "550 gone"}),
	}
	r := signer.post(c, c.Book, evs).Expect(http.StatusOK)
	if r.Int("data.applied") != 4 || r.Int("data.ignored") != 0 {
		t.Fatalf("ingest %s", r.Body)
	}
	if r := signer.post(c, c.Book, evs).Expect(http.StatusOK); r.Int("data.duplicates") != 4 {
		t.Fatalf("repeat %s", r.Body)
	}
	m := c.Key.Get("/api/v1/transactional/" + id).Expect(http.StatusOK)
	for _, f := range []string{"delivered_at", "opened_at", "clicked_at", "bounced_at"} {
		if m.Value("data."+f) == nil {
			t.Errorf("%s not set: %s", f, m.Body)
		}
	}
	if m.Len("data.events") != 4 {
		t.Errorf("events %s", m.Body)
	}
	// The hard bounce suppressed the address: the next email is not sent.
	next := c.Key.Post("/api/v1/transactional", map[string]any{"template_id": tpl, "to": map[string]any{"contact_id": ann}}).
		Expect(http.StatusAccepted)
	if next.String("data.status") != "suppressed" || next.String("data.detail") != "address suppressed (bounce)" {
		t.Fatalf("after the bounce: %s", next.Body)
	}
	act := c.O.Get("/api/contacts/" + ann + "/activity?limit=50").Expect(http.StatusOK)
	types := map[string]bool{}
	for i := range act.Len("data") {
		types[act.String(fmt.Sprintf("data.%d.type", i))] = true
	}
	for _, want := range []string{"transactional_sent", "transactional_delivered", "transactional_opened", "transactional_clicked", "transactional_bounced", "transactional_suppressed"} {
		if !types[want] {
			t.Errorf("activity lacks %s: %s", want, act.Body)
		}
	}
}
