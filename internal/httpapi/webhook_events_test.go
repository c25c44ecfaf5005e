package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/events"
)

// hookEvent is one webhook body a receiver got.
type hookEvent struct {
	Event  string         `json:"event"`
	TeamID string         `json:"team_id"`
	BookID *string        `json:"book_id"`
	Data   map[string]any `json:"data"`
}

// hookReceiver is a webhook receiver: it keeps every body it is sent.
type hookReceiver struct {
	t   *testing.T
	URL string
	mu  sync.Mutex
	got []hookEvent
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{t: t}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev hookEvent
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("webhook body %s: %v", body, err)
		}
		h.mu.Lock()
		h.got = append(h.got, ev)
		h.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL
	return h
}

// of returns the events of type typ received so far.
func (h *hookReceiver) of(typ string) []hookEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hookEvent
	for _, e := range h.got {
		if e.Event == typ {
			out = append(out, e)
		}
	}
	return out
}

// waitFor waits until n events of typ arrived and returns them.
func (h *hookReceiver) waitFor(typ string, n int) []hookEvent {
	h.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := h.of(typ)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%d %s events arrived, want %d; all: %+v", len(got), typ, n, h.all())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *hookReceiver) all() []hookEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// startEngine runs the webhook engine of env until the test ends.
func startEngine(t *testing.T, env *apptest.Env) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = env.App.WebhookEngine.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
}

// expectData checks that data has exactly the keys of want, each with
// its value ("*" for any non-null value).
func expectData(t *testing.T, ev hookEvent, want map[string]any) {
	t.Helper()
	for k, w := range want {
		got, ok := ev.Data[k]
		switch {
		case !ok:
			t.Errorf("%s: data has no %s: %v", ev.Event, k, ev.Data)
		case w == "*":
			if got == nil {
				t.Errorf("%s: data.%s is null", ev.Event, k)
			}
		default:
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(w)
			if string(gj) != string(wj) {
				t.Errorf("%s: data.%s = %s, want %s", ev.Event, k, gj, wj)
			}
		}
	}
	for k := range ev.Data {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: data has the undocumented field %s", ev.Event, k)
		}
	}
}

// byData returns the event whose data.key is value.
func byData(t *testing.T, evs []hookEvent, key string, value any) hookEvent {
	t.Helper()
	for _, e := range evs {
		if e.Data[key] == value {
			return e
		}
	}
	t.Fatalf("no event with data.%s = %v among %+v", key, value, evs)
	return hookEvent{}
}

// engagementTypes are the event types of emails, campaigns and
// subscriptions.
func engagementTypes() []string {
	var out []string
	for _, ti := range events.Catalogue {
		if ti.Group == events.GroupEmails || ti.Group == events.GroupCampaigns || ti.Group == events.GroupSubscriptions {
			out = append(out, ti.Type)
		}
	}
	return out
}

// A campaign run and the provider's feedback reach a subscribed receiver
// as email.*, participant.* and suppression.* events with every field;
// a webhook of another team, or of this team but not subscribed, gets
// none of them.
func TestEmailEventsFromRunsAndFeedback(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	hook, other, unsubscribed := newHookReceiver(t), newHookReceiver(t), newHookReceiver(t)
	c.Owner.NewWebhook(hook.URL, engagementTypes()...)
	c.Owner.NewWebhook(unsubscribed.URL, "member.removed")
	c.AddTeam("Other").Owner.NewWebhook(other.URL, engagementTypes()...)
	startEngine(t, c.Env)

	signer := newEventSigner(t)
	campaignID, stepID, ann, bob, rcpt := sentCampaign(t, c, signer)
	team := c.Owner.TeamID

	enrolled := hook.waitFor(events.ParticipantEnrolled, 2)
	annP := byData(t, enrolled, "contact_id", ann)
	expectData(t, annP, map[string]any{"participant_id": "*", "campaign_id": campaignID, "contact_id": ann,
		"status": "active", "reason": nil, "occurred_at": "*"})
	if annP.TeamID != team || annP.BookID == nil || *annP.BookID != c.Book {
		t.Fatalf("envelope: %+v", annP)
	}
	annParticipant := annP.Data["participant_id"].(string)

	sent := hook.waitFor(events.EmailSent, 2)
	annSent := byData(t, sent, "contact_id", ann)
	expectData(t, annSent, map[string]any{"email_id": "*", "contact_id": ann, "address": "ann@example.com",
		"campaign_id": campaignID, "step_id": stepID, "participant_id": annParticipant, "transactional_id": nil,
		"variant_id": nil, "provider_message_id": rcpt["ann@example.com"].MessageID, "occurred_at": "*"})
	emailID := annSent.Data["email_id"]

	now := c.Env.Clock.Now()
	a, b := rcpt["ann@example.com"], rcpt["bob@example.com"]
	at := now.Add(time.Minute)
	c.Env.Clock.Advance(2 * time.Minute)
	signer.post(c, c.Book, []map[string]any{
		providerEvent(a, "a1", "delivered", at, nil),
		providerEvent(a, "a2", "open", at, nil),
		providerEvent(a, "a3", "open", at.Add(time.Second), nil),
		providerEvent(a, "a4", "click", at, map[string]any{"url": "https://acme.example/pricing"}),
		providerEvent(a, "a5", "bounce", at, map[string]any{"type": "blocked", "reason": "421 try later"}),
		providerEvent(b, "b1", "open", at, map[string]any{"sg_machine_open": true}),
		providerEvent(b, "b2", "bounce", at, map[string]any{"type": "bounce", "reason": "550 no such user"}),
	}).Expect(http.StatusOK)
	// A later batch: an open of an email opened before is no event.
	signer.post(c, c.Book, []map[string]any{
		providerEvent(a, "a6", "open", at.Add(time.Hour), nil),
		providerEvent(a, "a7", "spamreport", at, nil),
	}).Expect(http.StatusOK)

	common := func(extra map[string]any) map[string]any {
		m := map[string]any{"email_id": emailID, "contact_id": ann, "address": "ann@example.com",
			"campaign_id": campaignID, "step_id": stepID, "participant_id": annParticipant, "transactional_id": nil,
			"variant_id": nil, "provider_message_id": rcpt["ann@example.com"].MessageID, "occurred_at": at.UTC().Format(time.RFC3339)}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	expectData(t, hook.waitFor(events.EmailDelivered, 1)[0], common(nil))
	expectData(t, hook.waitFor(events.EmailClicked, 1)[0], common(map[string]any{"url": "https://acme.example/pricing"}))
	expectData(t, hook.waitFor(events.EmailComplained, 1)[0], common(map[string]any{"reason": "spamreport"}))
	bounced := hook.waitFor(events.EmailBounced, 2)
	expectData(t, byData(t, bounced, "bounce_type", "soft"), common(map[string]any{"bounce_type": "soft", "reason": "421 try later"}))
	hard := byData(t, bounced, "bounce_type", "hard")
	if hard.Data["contact_id"] != bob || hard.Data["reason"] != "550 no such user" {
		t.Fatalf("hard bounce: %+v", hard.Data)
	}
	// Bob's bounce and Ann's complaint suppress their addresses and take
	// them out of the campaign.
	created := hook.waitFor(events.SuppressionCreated, 2)
	expectData(t, byData(t, created, "address", "bob@example.com"), map[string]any{"suppression_id": "*",
		"address": "bob@example.com", "reason": "bounce", "source": "provider", "occurred_at": "*"})
	removed := hook.waitFor(events.ParticipantRemoved, 2)
	expectData(t, byData(t, removed, "contact_id", ann), map[string]any{"participant_id": annParticipant,
		"campaign_id": campaignID, "contact_id": ann, "status": "removed", "reason": "suppressed", "occurred_at": "*"})

	opened := hook.waitFor(events.EmailOpened, 1)
	expectData(t, opened[0], common(nil))

	// The last step of a campaign completes its participants; a
	// suppressed address fails.
	cy := c.contact("Cy", "cy@example.com")
	dee := c.contact("Dee", "dee@example.com")
	single := c.Key.NewCampaignIn("Single", "active")
	singleStep := c.Key.NewEmailStep(single, c.Key.NewTemplate("One"), nil)
	c.Key.Enroll(single, cy, dee)
	c.Key.Post("/api/v1/suppressions", map[string]any{"email": "dee@example.com"}).Expect(http.StatusCreated)
	if r := c.Env.ProcessCampaign(single); r.Sent != 1 || r.Failed != 1 {
		t.Fatalf("process: %+v", r)
	}
	failed := hook.waitFor(events.EmailFailed, 1)[0]
	expectData(t, failed, map[string]any{"email_id": "*", "contact_id": dee, "address": "dee@example.com",
		"campaign_id": single, "step_id": singleStep, "participant_id": "*", "transactional_id": nil,
		"variant_id": nil, "provider_message_id": nil, "reason": "address suppressed (manual)", "occurred_at": "*"})
	completed := hook.waitFor(events.ParticipantCompleted, 2)
	expectData(t, byData(t, completed, "contact_id", cy), map[string]any{"participant_id": "*", "campaign_id": single,
		"contact_id": cy, "status": "completed", "reason": nil, "occurred_at": "*"})

	// Everything above has arrived; the other team's and the unsubscribed
	// webhook got none of it.
	time.Sleep(300 * time.Millisecond)
	if got := other.all(); len(got) != 0 {
		t.Fatalf("another team's webhook got %+v", got)
	}
	if got := unsubscribed.all(); len(got) != 0 {
		t.Fatalf("a webhook not subscribed got %+v", got)
	}
	if n := len(hook.of(events.EmailOpened)); n != 1 {
		t.Fatalf("%d email.opened events, want 1 (once per email, machine opens never)", n)
	}
}

// Without any webhook subscribed, a campaign run and feedback write no
// engagement event.
func TestEngagementEventsCostNothingWithoutSubscriber(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.Owner.NewWebhook("https://hooks.example/in", "contact.created")
	signer := newEventSigner(t)
	_, _, _, _, rcpt := sentCampaign(t, c, signer)
	signer.post(c, c.Book, []map[string]any{
		providerEvent(rcpt["ann@example.com"], "a1", "open", c.Env.Clock.Now(), nil),
		providerEvent(rcpt["bob@example.com"], "b1", "bounce", c.Env.Clock.Now(), map[string]any{"type": "bounce"}),
	}).Expect(http.StatusOK)
	if n := c.Env.QueryInt(`SELECT count(*) FROM events WHERE type = ANY($1)`, engagementTypes()); n != 0 {
		t.Fatalf("%d engagement events written with no webhook subscribed", n)
	}
}

// Unsubscribes, topics, sign-ups, suppressions and removals reach a
// subscribed receiver with every field.
func TestSubscriptionAndParticipantEvents(t *testing.T) {
	t.Parallel()
	f := newFormEnv(t)
	hook := newHookReceiver(t)
	hookID, _ := f.Owner.NewWebhook(hook.URL, engagementTypes()...)
	startEngine(t, f.Env)
	tpl := f.Key.NewTemplateWith("T", "S", "<p>x</p>")
	first := f.Key.NewCampaignIn("Weekly news", "active")
	second := f.Key.NewCampaignIn("Product tips", "active")
	f.Key.NewEmailStep(first, tpl, nil)
	f.Key.NewEmailStep(first, tpl, map[string]any{"schedule_type": "delay", "delay_days": 1})
	f.Key.NewEmailStep(second, tpl, map[string]any{"schedule_type": "delay", "delay_days": 5})
	ann := f.campEnv.contact("Ann", "ann@example.com")
	f.Key.Enroll(first, ann)
	f.Key.Enroll(second, ann)
	f.Env.ProcessCampaign(first)
	rcpt := f.Mail.Recipients()[0]
	token := tokenOf(t, rcpt)

	// Topics on the preference page: one on, one off.
	news := f.O.Post("/api/books/"+f.Book+"/labels", map[string]any{"name": "News", "public": true}).Expect(http.StatusCreated).String("data.id")
	tips := f.O.Post("/api/books/"+f.Book+"/labels", map[string]any{"name": "Tips", "public": true}).Expect(http.StatusCreated).String("data.id")
	f.Key.Post("/api/v1/contacts/"+ann+"/labels", map[string]any{"label_id": tips}).Expect(http.StatusOK)
	expectData(t, hook.waitFor(events.ContactSubscribed, 1)[0], map[string]any{"contact_id": ann, "address": "ann@example.com",
		"form_id": nil, "label_ids": []string{tips}, "consent_id": nil, "source": "api", "occurred_at": "*"})
	f.Env.Anonymous().Post("/api/preferences", map[string]any{"token": token, "label_ids": []string{news}}).Expect(http.StatusOK)
	expectData(t, byData(t, hook.waitFor(events.ContactSubscribed, 2), "source", "preference_page"), map[string]any{"contact_id": ann, "address": "ann@example.com",
		"form_id": nil, "label_ids": []string{news}, "consent_id": nil, "source": "preference_page", "occurred_at": "*"})
	expectData(t, hook.waitFor(events.ContactUnsubscribed, 1)[0], map[string]any{"contact_id": ann, "address": "ann@example.com",
		"scope": "topic", "campaign_id": nil, "label_id": tips, "source": "preference_page", "occurred_at": "*"})

	// One click leaves the campaign of the email.
	target, err := url.Parse(strings.Trim(rcpt.Headers["List-Unsubscribe"], "<>"))
	if err != nil {
		t.Fatal(err)
	}
	if res, body := f.raw(http.MethodPost, target.RequestURI(), "application/x-www-form-urlencoded", []byte("List-Unsubscribe=One-Click")); res.StatusCode != http.StatusOK {
		t.Fatalf("one-click: %d %s", res.StatusCode, body)
	}
	unsub := hook.waitFor(events.ContactUnsubscribed, 2)
	expectData(t, byData(t, unsub, "source", "one_click"), map[string]any{"contact_id": ann, "address": "ann@example.com",
		"scope": "campaign", "campaign_id": first, "label_id": nil, "source": "one_click", "occurred_at": "*"})
	expectData(t, hook.waitFor(events.ParticipantRemoved, 1)[0], map[string]any{"participant_id": "*", "campaign_id": first,
		"contact_id": ann, "status": "removed", "reason": "unsubscribed", "occurred_at": "*"})

	// The page's "all" leaves every campaign and suppresses the address.
	f.Env.Anonymous().Post("/api/unsubscribe/confirm", map[string]any{"token": token, "scope": "all"}).Expect(http.StatusOK)
	unsub = hook.waitFor(events.ContactUnsubscribed, 3)
	all := byData(t, unsub, "scope", "all")
	expectData(t, all, map[string]any{"contact_id": ann, "address": "ann@example.com",
		"scope": "all", "campaign_id": nil, "label_id": nil, "source": "preference_page", "occurred_at": "*"})
	if byData(t, hook.waitFor(events.ParticipantRemoved, 2), "campaign_id", second).Data["reason"] != "unsubscribed" {
		t.Fatal("the unsubscribe from all must remove with reason unsubscribed")
	}
	expectData(t, hook.waitFor(events.SuppressionCreated, 1)[0], map[string]any{"suppression_id": "*",
		"address": "ann@example.com", "reason": "unsubscribe", "source": "unsubscribe_page", "occurred_at": "*"})

	// The API: a suppression made and lifted, a participant removed.
	sid := f.Key.Post("/api/v1/suppressions", map[string]any{"email": "Zed@Example.com"}).Expect(http.StatusCreated).String("data.id")
	f.O.Delete("/api/suppressions/" + sid).Expect(http.StatusNoContent)
	expectData(t, hook.waitFor(events.SuppressionLifted, 1)[0], map[string]any{"suppression_id": sid,
		"address": "zed@example.com", "reason": "manual", "source": "api", "occurred_at": "*"})
	bo := f.campEnv.contact("Bo", "bo@example.com")
	f.Key.Enroll(second, bo)
	enrolled := byData(t, hook.waitFor(events.ParticipantEnrolled, 3), "contact_id", bo)
	pid := enrolled.Data["participant_id"].(string)
	f.O.Delete("/api/campaigns/" + second + "/participants/" + pid).Expect(http.StatusOK)
	expectData(t, byData(t, hook.waitFor(events.ParticipantRemoved, 3), "participant_id", pid), map[string]any{"participant_id": pid,
		"campaign_id": second, "contact_id": bo, "status": "removed", "reason": "api", "occurred_at": "*"})

	// A single opt-in form post subscribes.
	form := f.form(map[string]any{"name": "Signup", "double_opt_in": false, "label_ids": []string{news}})
	if res, body := f.submitJSON(form, map[string]any{"email": "new@example.com"}); res.StatusCode != http.StatusAccepted {
		t.Fatalf("submit: %d %s", res.StatusCode, body)
	}
	sub := byData(t, hook.waitFor(events.ContactSubscribed, 3), "source", "form")
	expectData(t, sub, map[string]any{"contact_id": "*", "address": "new@example.com", "form_id": form,
		"label_ids": []string{news}, "consent_id": "*", "source": "form", "occurred_at": "*"})

	// Deleting a contact ends its active participations.
	cy := f.campEnv.contact("Cy", "cy@example.com")
	f.Key.Enroll(second, cy)
	f.Key.Delete("/api/v1/contacts/" + cy).Expect(http.StatusNoContent)
	gone := byData(t, hook.waitFor(events.ParticipantRemoved, 4), "contact_id", cy)
	expectData(t, gone, map[string]any{"participant_id": "*", "campaign_id": second, "contact_id": cy,
		"status": "removed", "reason": "contact_deleted", "occurred_at": "*"})

	// A test send may carry the sample of any type.
	f.Owner.Post(webhooksPath(f.Owner.TeamID, "/", hookID, "/test"), map[string]any{"event": "email.clicked"}).Expect(http.StatusAccepted)
	sample := hook.waitFor(events.EmailClicked, 1)[0]
	if sample.Data["url"] == nil || sample.Data["email_id"] == nil || sample.BookID != nil {
		t.Fatalf("sample: %+v", sample)
	}
	f.Owner.Post(webhooksPath(f.Owner.TeamID, "/", hookID, "/test"), map[string]any{"event": "email.nope"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
}

// A campaign's audience enrolls its members, and a participant who left
// the segment is removed when its step falls due: participant.enrolled
// and participant.removed (left_segment) reach the receiver.
func TestAudienceParticipantEvents(t *testing.T) {
	t.Parallel()
	s := newSegTeam(t, 2, 1)
	hook := newHookReceiver(t)
	s.Owner.NewWebhook(hook.URL, events.ParticipantEnrolled, events.ParticipantRemoved)
	startEngine(t, s.Env)
	seg := s.M.Post("/api/segments", map[string]any{"name": "Acme", "rule": acmeRule}).Expect(http.StatusCreated).String("data.id")
	tpl := s.Key.Post("/api/v1/campaign-templates", map[string]any{"name": "T", "subject": "Hi", "body_html": "<p>Hi</p>"}).Expect(http.StatusOK).String("data.id")
	camp := s.Key.Post("/api/v1/campaigns", map[string]any{"name": "Drip", "audience_segment_id": seg, "exit_on_segment_leave": true}).
		Expect(http.StatusOK).String("data.id")
	s.Key.Post("/api/v1/campaigns/"+camp+"/steps", map[string]any{"step_type": "email", "name": "Later", "schedule_type": "delay",
		"delay_days": 2, "email_template_id": tpl}).Expect(http.StatusOK)
	s.Key.Patch("/api/v1/campaigns/"+camp, map[string]any{"status": "active"}).Expect(http.StatusOK)
	s.Env.ProcessCampaign(camp)
	enrolled := hook.waitFor(events.ParticipantEnrolled, 2)
	leaver := byData(t, enrolled, "contact_id", s.acme[0])
	expectData(t, leaver, map[string]any{"participant_id": "*", "campaign_id": camp, "contact_id": s.acme[0],
		"status": "active", "reason": nil, "occurred_at": "*"})
	s.Key.Patch("/api/v1/contacts/"+s.acme[0], map[string]any{"company": "Initech"}).Expect(http.StatusOK)
	s.Env.Clock.Advance(3 * 24 * time.Hour)
	s.Env.ProcessCampaign(camp)
	expectData(t, hook.waitFor(events.ParticipantRemoved, 1)[0], map[string]any{"participant_id": leaver.Data["participant_id"],
		"campaign_id": camp, "contact_id": s.acme[0], "status": "removed", "reason": "left_segment", "occurred_at": "*"})
}

// A transactional send and the provider's feedback on it reach a
// subscribed receiver as email.* events naming the message
// (transactional_id, no campaign), each kind once per email; a refused
// send is email.failed; an accepted product event is event.received with
// the event as its data. Another team's webhook hears nothing.
func TestEmailEventsOfTransactionalSendsAndProductEvents(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	hook, other := newHookReceiver(t), newHookReceiver(t)
	c.Owner.NewWebhook(hook.URL, append(engagementTypes(), events.EventReceived)...)
	c.AddTeam("Other").Owner.NewWebhook(other.URL, append(engagementTypes(), events.EventReceived)...)
	startEngine(t, c.Env)
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
	common := func(extra map[string]any) map[string]any {
		m := map[string]any{"email_id": id, "contact_id": ann, "address": "ann@example.com", "campaign_id": nil, "step_id": nil,
			"participant_id": nil, "transactional_id": id, "variant_id": nil, "provider_message_id": rs[0].MessageID, "occurred_at": "*"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	expectData(t, hook.waitFor(events.EmailSent, 1)[0], common(nil))

	at := c.Env.Clock.Now().Add(time.Minute)
	signer.post(c, c.Book, []map[string]any{
		providerEvent(rs[0], "t1", "delivered", at, nil),
		providerEvent(rs[0], "t2", "open", at, nil),
		providerEvent(rs[0], "t3", "open", at.Add(time.Second), nil),
		providerEvent(rs[0], "t4", "click", at, map[string]any{"url": "https://acme.example/receipt"}),
	}).Expect(http.StatusOK)
	signer.post(c, c.Book, []map[string]any{
		providerEvent(rs[0], "t5", "open", at.Add(time.Hour), nil), // opened before: no event
		providerEvent(rs[0], "t6", "bounce", at, map[string]any{"type": "bounce", "reason": "550 gone"}),
	}).Expect(http.StatusOK)
	expectData(t, hook.waitFor(events.EmailDelivered, 1)[0], common(nil))
	expectData(t, hook.waitFor(events.EmailOpened, 1)[0], common(nil))
	expectData(t, hook.waitFor(events.EmailClicked, 1)[0], common(map[string]any{"url": "https://acme.example/receipt"}))
	expectData(t, hook.waitFor(events.EmailBounced, 1)[0], common(map[string]any{"bounce_type": "hard", "reason": "550 gone"}))
	hook.waitFor(events.SuppressionCreated, 1)

	// A send the provider refuses for good.
	c.Mail.FailNext(http.StatusBadRequest, `{"errors":[{"message":"The to address is not allowed"}]}`, 1)
	failed := c.Key.Post("/api/v1/transactional", map[string]any{"template_id": tpl, "to": map[string]any{"email": "p@example.com"}}).
		Expect(http.StatusAccepted).String("data.id")
	waitStatus(t, c.Key, failed)
	f := byData(t, hook.waitFor(events.EmailFailed, 1), "transactional_id", failed)
	expectData(t, f, map[string]any{"email_id": failed, "contact_id": nil, "address": "p@example.com", "campaign_id": nil, "step_id": nil,
		"participant_id": nil, "transactional_id": failed, "variant_id": nil, "provider_message_id": nil, "occurred_at": "*",
		"reason": "The to address is not allowed"})

	// A product event.
	ev := c.Key.Post("/api/v1/events", map[string]any{"name": "order.paid", "contact": map[string]any{"email": "ann@example.com"},
		"properties": map[string]any{"order_id": "A-1", "total": 12.5}}).Expect(http.StatusAccepted)
	got := hook.waitFor(events.EventReceived, 1)[0]
	expectData(t, got, map[string]any{"id": ev.String("data.id"), "book_id": c.Book, "contact_id": ann, "name": "order.paid",
		"properties": map[string]any{"order_id": "A-1", "total": 12.5}, "occurred_at": "*", "created_at": "*"})
	if got.BookID == nil || *got.BookID != c.Book {
		t.Fatalf("envelope %+v", got)
	}

	time.Sleep(300 * time.Millisecond) // anything more would have arrived by now
	for _, typ := range []string{events.EmailOpened, events.EmailSent, events.EmailBounced} {
		if n := len(hook.of(typ)); n != 1 {
			t.Errorf("%d %s events, want 1", n, typ)
		}
	}
	if n := len(other.all()); n != 0 {
		t.Fatalf("another team's webhook got %d events: %+v", n, other.all())
	}
}

// Topics (public labels) turned on or off through the API, in bulk and
// by an import reach a subscribed receiver as contact.subscribed (source
// api or import) and contact.unsubscribed (scope topic, source api); a
// private label's changes are no subscription at all.
func TestTopicChangesThroughTheAPIAndImports(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	hook := newHookReceiver(t)
	c.Owner.NewWebhook(hook.URL, events.ContactSubscribed, events.ContactUnsubscribed)
	startEngine(t, c.Env)
	news := c.O.Post("/api/books/"+c.Book+"/labels", map[string]any{"name": "News", "public": true}).Expect(http.StatusCreated).String("data.id")
	vip := c.O.Post("/api/books/"+c.Book+"/labels", map[string]any{"name": "VIP"}).Expect(http.StatusCreated).String("data.id")
	ann, bob := c.contact("Ann", "ann@example.com"), c.contact("Bob", "bob@example.com")

	c.Key.Post("/api/v1/contacts/"+ann+"/labels", map[string]any{"label_id": vip}).Expect(http.StatusOK)
	c.Key.Post("/api/v1/contacts/bulk-add-label", map[string]any{"contact_ids": []string{ann, bob}, "label_id": vip}).Expect(http.StatusOK)
	c.Key.Post("/api/v1/contacts/bulk-add-label", map[string]any{"contact_ids": []string{ann, bob}, "label_id": news}).Expect(http.StatusOK)
	sub := hook.waitFor(events.ContactSubscribed, 2)
	for _, who := range []struct{ id, address string }{{ann, "ann@example.com"}, {bob, "bob@example.com"}} {
		expectData(t, byData(t, sub, "contact_id", who.id), map[string]any{"contact_id": who.id, "address": who.address,
			"form_id": nil, "label_ids": []string{news}, "consent_id": nil, "source": "api", "occurred_at": "*"})
	}
	c.Key.Delete("/api/v1/contacts/" + bob + "/labels/" + news).Expect(http.StatusNoContent)
	expectData(t, hook.waitFor(events.ContactUnsubscribed, 1)[0], map[string]any{"contact_id": bob, "address": "bob@example.com",
		"scope": "topic", "campaign_id": nil, "label_id": news, "source": "api", "occurred_at": "*"})

	imp := runImport(c.Env, c.Owner, c.Book, []byte("first_name,email,labels\r\nCat,cat@example.com,News\r\nDan,dan@example.com,VIP\r\n"), nil)
	if imp.Int("data.created") != 2 {
		t.Fatalf("import %s", imp.Body)
	}
	got := byData(t, hook.waitFor(events.ContactSubscribed, 3), "source", "import")
	expectData(t, got, map[string]any{"contact_id": "*", "address": "cat@example.com",
		"form_id": nil, "label_ids": []string{news}, "consent_id": nil, "source": "import", "occurred_at": "*"})
	time.Sleep(300 * time.Millisecond) // anything more would have arrived by now
	if n, m := len(hook.of(events.ContactSubscribed)), len(hook.of(events.ContactUnsubscribed)); n != 3 || m != 1 {
		t.Fatalf("%d subscribed and %d unsubscribed events, want 3 and 1: %+v", n, m, hook.all())
	}
}
