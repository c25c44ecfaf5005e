package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

const day = 24 * time.Hour

var listUnsubscribe = regexp.MustCompile(`^<https://contacts\.example\.com/api/unsubscribe/confirm\?token=([A-Za-z0-9_-]{86})&campaign_id=([0-9a-f-]{36})>$`)

// tokenOf returns the unsubscribe token of a received email.
func tokenOf(t *testing.T, r mailertest.Recipient) string {
	t.Helper()
	m := listUnsubscribe.FindStringSubmatch(r.Headers["List-Unsubscribe"])
	if m == nil {
		t.Fatalf("List-Unsubscribe header %q", r.Headers["List-Unsubscribe"])
	}
	return m[1]
}

func TestCampaignSendPersonalizations(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	c.Mail.RequireAPIKey(apptest.MailerKey)
	field := c.Owner.Post("/api/books/"+c.Book+"/fields", map[string]any{"key": "plan", "name": "Plan", "type": "text"}).Expect(http.StatusCreated).String("data.id")
	ann := c.Key.Post("/api/v1/contacts", map[string]any{
		"first_name": "Ann", "last_name": "O'Neil", "company": "Bits & Bytes", "job_title": "CTO", "website": "https://ann.example",
		"birthday": "1990-04-05",
		"emails": []any{
			map[string]any{"address": "ann.home@example.com", "label": "personal"},
			map[string]any{"address": "ann@example.com", "label": "work", "primary": true},
		},
		"phones": []any{map[string]any{"number": "+1 555 0100", "label": "mobile"}},
	}).Expect(http.StatusCreated).String("data.id")
	bob := c.contact("", "bob@example.com")
	c.Key.Post("/api/v1/contacts/bulk-update-field", map[string]any{"contact_ids": []string{ann}, "field_definition_id": field, "value": "<gold>"}).Expect(http.StatusOK)

	tpl := c.Key.NewTemplateWith("Welcome", "Welcome {{first_name | default: \"friend\"}} from {{company}}",
		`<p>Hi {{ first_name | default: "there" }} {{last_name}} ({{job_title}}, {{email}}, {{phone}}, {{website}}, {{birthday}}, {{book_name}}).</p>`+
			`<p>Plan: {{custom.plan | default: "none"}}</p><p>{{unknown_field}}</p><a href="{{unsubscribe_url}}">leave</a>`)
	cid := c.Key.NewCampaignIn("Onboarding", "active")
	step := c.Key.NewEmailStep(cid, tpl, map[string]any{"sender_name": "Ann from Acme", "sender_email": "ann@acme.example"})
	c.Key.Enroll(cid, ann, bob)

	res := c.Env.ProcessCampaign(cid)
	if res.Sent != 2 || res.Failed != 0 || res.Completed != 2 {
		t.Fatalf("result %+v", res)
	}
	reqs := c.Mail.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d provider requests, want one batch", len(reqs))
	}
	req := reqs[0]
	if req.APIKey != apptest.MailerKey || req.From.Email != "ann@acme.example" || req.From.Name != "Ann from Acme" ||
		req.ReplyTo == nil || req.ReplyTo.Email != "help@acme.example" || len(req.Personalizations) != 2 {
		t.Fatalf("request: key %q from %+v reply %+v, %d recipients", req.APIKey, req.From, req.ReplyTo, len(req.Personalizations))
	}
	byEmail := map[string]mailertest.Recipient{}
	for _, r := range c.Mail.Recipients() {
		byEmail[r.Email] = r
	}
	a, b := byEmail["ann@example.com"], byEmail["bob@example.com"]
	if a.Subject != "Welcome Ann from Bits & Bytes" || b.Subject != "Welcome friend from Acme" {
		t.Fatalf("subjects %q / %q", a.Subject, b.Subject)
	}
	if a.Name != "Ann O'Neil" {
		t.Fatalf("to name %q", a.Name)
	}
	html := a.HTML()
	for _, want := range []string{
		"Hi Ann O&#39;Neil (CTO, ann@example.com, +1 555 0100, https://ann.example, 1990-04-05, Customers).",
		"<p>Plan: &lt;gold&gt;</p>", "<p>{{unknown_field}}</p>", "Acme Inc.", "1 Main St", "Springfield", "62701",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("ann's email lacks %q:\n%s", want, html)
		}
	}
	if !strings.Contains(b.HTML(), "<p>Plan: none</p>") || !strings.Contains(b.HTML(), "Hi there Tester") {
		t.Errorf("bob's email:\n%s", b.HTML())
	}
	for email, r := range byEmail {
		tok := tokenOf(t, r)
		if m := listUnsubscribe.FindStringSubmatch(r.Headers["List-Unsubscribe"]); m[2] != cid {
			t.Errorf("%s: campaign in List-Unsubscribe %s", email, m[2])
		}
		if r.Headers["List-Unsubscribe-Post"] != "List-Unsubscribe=One-Click" {
			t.Errorf("%s: List-Unsubscribe-Post %q", email, r.Headers["List-Unsubscribe-Post"])
		}
		if !strings.Contains(r.HTML(), `href="https://contacts.example.com/api/unsubscribe?token=`+tok+`"`) {
			t.Errorf("%s: body lacks its unsubscribe link", email)
		}
		if r.CustomArgs["campaign_id"] != cid || r.CustomArgs["step_id"] != step || r.CustomArgs["participant_id"] == "" {
			t.Errorf("%s: custom args %v", email, r.CustomArgs)
		}
		// The token names its completion row (step, participant) and holds
		// a 256-bit secret of which only the SHA-256 is stored.
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || len(raw) != 64 || uuid.UUID(raw[:16]).String() != step || uuid.UUID(raw[16:32]).String() != r.CustomArgs["participant_id"] {
			t.Fatalf("%s: token layout: %v", email, err)
		}
		sum := sha256.Sum256(raw[32:])
		if c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE token_hash = $1`, sum[:]) != 1 ||
			c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE position($1::bytea in token_hash) > 0`, raw[32:48]) != 0 {
			t.Errorf("%s: token not stored as its hash", email)
		}
	}
	if a.Headers["List-Unsubscribe"] == b.Headers["List-Unsubscribe"] {
		t.Fatal("recipients share a token")
	}

	// Completion records, completed participants, one interaction per email.
	if c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result = 'success' AND provider_message_id = $2 AND lease_until IS NULL AND tries = 1`, step, req.MessageID) != 2 {
		t.Fatal("completion records")
	}
	if c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1 AND status = 'completed' AND completed_at IS NOT NULL`, cid) != 2 {
		t.Fatal("participants not completed")
	}
	var detail []byte
	if err := c.Env.App.Pool.QueryRow(context.Background(), `SELECT detail FROM interactions WHERE contact_id = $1 AND kind = 'campaign_email'`, ann).Scan(&detail); err != nil {
		t.Fatal(err)
	}
	var d map[string]string
	_ = json.Unmarshal(detail, &d)
	if d["campaign_id"] != cid || d["step_id"] != step || d["address"] != "ann@example.com" || d["provider_message_id"] != req.MessageID ||
		d["subject"] != "Welcome Ann from Bits & Bytes" || d["participant_id"] == "" || d["unsubscribe_token_id"] == "" {
		t.Fatalf("interaction detail: %s", detail)
	}

	// A second pass sends nothing: at most once per participant and step.
	if res := c.Env.ProcessCampaign(cid); res.Sent != 0 || c.Mail.RequestCount() != 1 {
		t.Fatalf("second pass %+v", res)
	}
}

func TestScheduleDelayAndFixedDate(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	c.Env.Clock.Set(time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC))
	tpl := c.Key.NewTemplateWith("T", "Step {{first_name}}", "<p>x</p>")
	cid := c.Key.NewCampaignIn("Drip", "active")
	first := c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "now"})
	second := c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "two days", "schedule_type": "delay", "delay_days": 2})
	third := c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "fixed", "schedule_type": "fixed_date", "fixed_date": "2026-03-10"})
	ids := c.contacts(2)
	c.Key.Enroll(cid, ids...)

	sentFor := func(step string) int {
		return c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result = 'success'`, step)
	}
	if r := c.Env.ProcessCampaign(cid); r.Sent != 2 || sentFor(first) != 2 || sentFor(second) != 0 {
		t.Fatalf("at enrollment: %+v", r)
	}
	c.Env.Clock.Advance(2*day - time.Minute)
	if r := c.Env.ProcessCampaign(cid); r.Sent != 0 {
		t.Fatalf("a minute before the delay: %+v", r)
	}
	c.Env.Clock.Advance(time.Minute)
	if r := c.Env.ProcessCampaign(cid); r.Sent != 2 || sentFor(second) != 2 {
		t.Fatalf("at enrolled_at + 2 days: %+v", r)
	}
	c.Env.Clock.Set(time.Date(2026, 3, 9, 23, 59, 59, 0, time.UTC))
	if r := c.Env.ProcessCampaign(cid); r.Sent != 0 || r.Completed != 0 {
		t.Fatalf("before the fixed date: %+v", r)
	}
	c.Env.Clock.Set(time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC))
	if r := c.Env.ProcessCampaign(cid); r.Sent != 2 || sentFor(third) != 2 || r.Completed != 2 {
		t.Fatalf("at 00:00 UTC of the fixed date: %+v", r)
	}

	// A contact enrolled after the fixed date passed gets it at once, but
	// only after its earlier steps; the delay counts from its enrollment.
	late := c.contact("Late", "late@example.com")
	c.Key.Enroll(cid, late)
	if r := c.Env.ProcessCampaign(cid); r.Sent != 1 {
		t.Fatalf("late contact, first pass: %+v", r)
	}
	c.Env.Clock.Advance(2 * day)
	if r := c.Env.ProcessCampaign(cid); r.Sent != 2 || r.Completed != 1 {
		t.Fatalf("late contact after its delay: %+v", r)
	}
	if c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1 AND status = 'completed'`, cid) != 3 {
		t.Fatal("everyone should be completed")
	}
}

func TestScheduleInactiveStepsAndCompletion(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "S", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	off := c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "off", "active": false})
	on := c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "on"})
	later := c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "later", "schedule_type": "delay", "delay_days": 1})
	ids := c.contacts(2)
	c.Key.Enroll(cid, ids...)

	// Inactive steps are skipped: the next active one is due at once.
	if r := c.Env.ProcessCampaign(cid); r.Sent != 2 || r.Completed != 0 {
		t.Fatalf("first pass %+v", r)
	}
	if c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE step_id = $1`, off) != 0 {
		t.Fatal("an inactive step ran")
	}
	// Turning the last pending step off completes the participants: every
	// active step has a completion record.
	c.O.Patch("/api/campaigns/"+cid+"/steps/"+later, map[string]any{"active": false}).Expect(http.StatusOK)
	if r := c.Env.ProcessCampaign(cid); r.Sent != 0 || r.Completed != 2 {
		t.Fatalf("second pass %+v", r)
	}
	// Completed participants get nothing more, even from steps added later.
	c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "added"})
	c.Env.Clock.Advance(2 * day)
	if r := c.Env.ProcessCampaign(cid); r.Sent != 0 {
		t.Fatalf("completed participants were sent to: %+v", r)
	}
	_ = on

	// A campaign without active steps completes nobody.
	empty := c.Key.NewCampaignIn("Empty", "active")
	c.Key.NewEmailStep(empty, tpl, map[string]any{"active": false})
	c.Key.Enroll(empty, ids[0])
	if r := c.Env.ProcessCampaign(empty); r.Completed != 0 {
		t.Fatalf("empty campaign %+v", r)
	}
}

func TestCampaignTriggerChain(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "In {{first_name}}", "<p>x</p>")
	a := c.Key.NewCampaignIn("A", "active")
	b := c.Key.NewCampaignIn("B", "draft")
	cc := c.Key.NewCampaignIn("C", "active")
	c.Key.NewEmailStep(a, tpl, nil)
	toB := c.Key.NewStep(a, map[string]any{"step_type": "trigger", "name": "to B", "schedule_type": "immediate", "trigger_campaign_id": b})
	c.Key.NewStep(b, map[string]any{"step_type": "trigger", "name": "to C", "schedule_type": "immediate", "trigger_campaign_id": cc})
	c.Key.NewStep(b, map[string]any{"step_type": "trigger", "name": "back to A", "schedule_type": "immediate", "trigger_campaign_id": a})
	c.Key.NewEmailStep(cc, tpl, nil)
	ids := c.contacts(3)
	c.Key.Enroll(a, ids...)
	// Already in B: the trigger still succeeds.
	c.O.Post("/api/campaigns/"+b+"/participants", map[string]any{"contact_ids": []string{ids[0]}}).Expect(http.StatusOK)

	if r := c.Env.ProcessCampaign(a); r.Sent != 3 || r.Triggered != 3 || r.Completed != 3 {
		t.Fatalf("A: %+v", r)
	}
	if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1`, b); n != 3 {
		t.Fatalf("B has %d participants", n)
	}
	if c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1 AND enrolled_by IS NULL`, b) != 2 {
		t.Fatal("triggered enrollments have no enrolling user")
	}
	if c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result = 'success'`, toB) != 3 {
		t.Fatal("trigger completions")
	}
	// B is a draft: it is not processed until it is active.
	if _, err := c.Env.App.CampaignRunner.ProcessCampaign(context.Background(), uuid.MustParse(b)); !apperr.Is(err, apperr.InvalidStatus) {
		t.Fatalf("draft campaign processed: %v", err)
	}
	c.Key.Patch("/api/v1/campaigns/"+b, map[string]any{"status": "active"}).Expect(http.StatusOK)
	// B triggers into C, and back into A where everyone already is (success,
	// no loop).
	if r := c.Env.ProcessCampaign(b); r.Triggered != 6 || r.Completed != 3 {
		t.Fatalf("B: %+v", r)
	}
	if r := c.Env.ProcessCampaign(cc); r.Sent != 3 {
		t.Fatalf("C: %+v", r)
	}
	if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1`, a); n != 3 {
		t.Fatalf("A has %d participants after the loop back", n)
	}

	// A trigger into an archived or deleted campaign fails; into an archived
	// one it enrolls nobody.
	d := c.Key.NewCampaignIn("D", "active")
	arch := c.Key.NewCampaignIn("Archived", "draft")
	gone := c.Key.NewCampaignIn("Gone", "draft")
	t1 := c.Key.NewStep(d, map[string]any{"step_type": "trigger", "name": "to archived", "schedule_type": "immediate", "trigger_campaign_id": arch})
	t2 := c.Key.NewStep(d, map[string]any{"step_type": "trigger", "name": "to gone", "schedule_type": "immediate", "trigger_campaign_id": gone})
	c.Key.Patch("/api/v1/campaigns/"+arch, map[string]any{"status": "archived"}).Expect(http.StatusOK)
	c.Key.Delete("/api/v1/campaigns/" + gone).Expect(http.StatusOK)
	c.Key.Enroll(d, ids[0])
	if r := c.Env.ProcessCampaign(d); r.Failed != 2 || r.Triggered != 0 || r.Completed != 1 {
		t.Fatalf("D: %+v", r)
	}
	for step, detail := range map[string]string{t1: "trigger campaign is archived", t2: "trigger campaign was deleted"} {
		if c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result = 'failed' AND result_detail = $2`, step, detail) != 1 {
			t.Errorf("step %s: want failed %q", step, detail)
		}
	}
	if c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1`, arch) != 0 {
		t.Fatal("enrolled into an archived campaign")
	}
}

func TestCampaignRecordedFailures(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	tpl := c.Key.NewTemplateWith("T", "S", "<p>x</p>")
	detailOf := func(step, contact string) string {
		var d string
		err := c.Env.App.Pool.QueryRow(context.Background(), `
			SELECT c.result || ': ' || c.result_detail FROM campaign_step_completions c
			JOIN campaign_participants p ON p.id = c.participant_id WHERE c.step_id = $1 AND p.contact_id = $2`, step, contact).Scan(&d)
		if err != nil {
			t.Fatalf("no completion for %s: %v", contact, err)
		}
		return d
	}

	// Without settings nothing can be sent.
	cid := c.Key.NewCampaignIn("C", "active")
	s := c.Key.NewEmailStep(cid, tpl, nil)
	ann := c.contact("Ann", "ann@example.com")
	c.Key.Enroll(cid, ann)
	if r := c.Env.ProcessCampaign(cid); r.Failed != 1 || detailOf(s, ann) != "failed: email settings are not configured" {
		t.Fatalf("not configured: %+v %s", r, detailOf(s, ann))
	}
	// A key but no sender address is not configured either.
	c.O.Put("/api/campaign-settings", map[string]any{"mailer_api_key": apptest.MailerKey}).Expect(http.StatusOK)
	cid2 := c.Key.NewCampaignIn("C2", "active")
	s2 := c.Key.NewEmailStep(cid2, tpl, nil)
	c.Key.Enroll(cid2, ann)
	c.Env.ProcessCampaign(cid2)
	if d := detailOf(s2, ann); d != "failed: email settings are not configured" {
		t.Fatalf("no sender: %s", d)
	}

	c.O.ConfigureEmail()
	cid3 := c.Key.NewCampaignIn("C3", "active")
	s3 := c.Key.NewEmailStep(cid3, tpl, nil)
	noEmail := c.contact("Nomail", "")
	bad := c.contact("Bad", "")
	if _, err := c.Env.App.Pool.Exec(context.Background(), `UPDATE contacts SET emails = '[{"address":"not an address","label":"work"}]' WHERE id = $1`, bad); err != nil {
		t.Fatal(err)
	}
	sup := c.contact("Sup", "sup@example.com")
	c.Key.Enroll(cid3, ann, noEmail, bad, sup)
	// Suppressed after enrollment (a race with "leave all"): never emailed.
	if _, err := c.Env.App.Pool.Exec(context.Background(), `UPDATE contacts SET suppressed_at = now() WHERE id = $1`, sup); err != nil {
		t.Fatal(err)
	}
	if r := c.Env.ProcessCampaign(cid3); r.Sent != 1 || r.Failed != 3 || r.Completed != 4 {
		t.Fatalf("mixed: %+v", r)
	}
	for contact, want := range map[string]string{
		ann: "success: ", noEmail: "failed: contact has no email address", bad: "failed: contact email address is not valid",
		sup: "failed: contact unsubscribed",
	} {
		if d := detailOf(s3, contact); d != want {
			t.Errorf("%s: %q, want %q", contact, d, want)
		}
	}
	if c.Mail.RecipientCount() != 1 {
		t.Fatalf("provider got %d recipients", c.Mail.RecipientCount())
	}

	// A template deleted after the step was made.
	cid4 := c.Key.NewCampaignIn("C4", "active")
	gone := c.Key.NewTemplateWith("Gone", "S", "x")
	s4 := c.Key.NewEmailStep(cid4, gone, nil)
	c.Key.Delete("/api/v1/campaign-templates/" + gone).Expect(http.StatusOK)
	c.Key.Enroll(cid4, ann)
	c.Env.ProcessCampaign(cid4)
	if d := detailOf(s4, ann); d != "failed: email template was deleted" {
		t.Fatalf("deleted template: %s", d)
	}
}

func TestCampaignProvider4xx(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "S", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	s := c.Key.NewEmailStep(cid, tpl, nil)
	c.Key.Enroll(cid, c.contacts(3)...)
	c.Mail.FailNext(http.StatusForbidden, `{"errors":[{"message":"The from address does not match a verified Sender Identity.","field":"from","help":null}]}`, 1)

	if r := c.Env.ProcessCampaign(cid); r.Sent != 0 || r.Failed != 3 || r.Retrying != 0 || r.Completed != 3 {
		t.Fatalf("4xx: %+v", r)
	}
	if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result = 'failed'
		AND result_detail LIKE '%The from address does not match a verified Sender Identity.%' AND tries = 1`, s); n != 3 {
		t.Fatalf("%d failures with the provider's message", n)
	}
	// Permanent: never retried.
	c.Env.Clock.Advance(time.Hour)
	c.Env.ProcessCampaign(cid)
	if c.Mail.RequestCount() != 1 {
		t.Fatalf("%d requests; a 4xx must not be retried", c.Mail.RequestCount())
	}
	if c.Env.QueryInt(`SELECT count(*) FROM interactions WHERE kind = 'campaign_email'`) != 0 {
		t.Fatal("a refused email was recorded as sent")
	}
}

func TestCampaignProvider5xxRetries(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "S", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	s := c.Key.NewEmailStep(cid, tpl, nil)
	ids := c.contacts(2)
	c.Key.Enroll(cid, ids...)
	c.Mail.FailNext(http.StatusServiceUnavailable, `{"errors":[{"message":"Service Unavailable"}]}`, 3)

	tries := func() int {
		return c.Env.QueryInt(`SELECT max(tries) FROM campaign_step_completions WHERE step_id = $1`, s)
	}
	if r := c.Env.ProcessCampaign(cid); r.Retrying != 2 || r.Failed != 0 || tries() != 1 {
		t.Fatalf("first try: %+v", r)
	}
	if c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result IS NULL AND lease_until IS NULL AND retry_at IS NOT NULL`, s) != 2 {
		t.Fatal("rows should wait for a retry")
	}
	// Retried on a later pass, not at once.
	if r := c.Env.ProcessCampaign(cid); r.Retrying != 0 || r.Sent != 0 || c.Mail.RequestCount() != 1 {
		t.Fatalf("same instant: %+v, %d requests", r, c.Mail.RequestCount())
	}
	c.Env.Clock.Advance(time.Minute)
	if r := c.Env.ProcessCampaign(cid); r.Retrying != 2 || tries() != 2 {
		t.Fatalf("second try: %+v", r)
	}
	c.Env.Clock.Advance(time.Minute)
	if r := c.Env.ProcessCampaign(cid); r.Failed != 2 || r.Completed != 2 || tries() != 3 {
		t.Fatalf("third try: %+v", r)
	}
	if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result = 'failed' AND result_detail <> ''`, s); n != 2 {
		t.Fatalf("%d failed after 3 tries", n)
	}
	c.Env.Clock.Advance(time.Hour)
	c.Env.ProcessCampaign(cid)
	if c.Mail.RequestCount() != 3 {
		t.Fatalf("%d requests, want exactly 3 tries", c.Mail.RequestCount())
	}

	// A transient error followed by success on the next pass.
	c2 := c.Key.NewCampaignIn("C2", "active")
	s2 := c.Key.NewEmailStep(c2, tpl, nil)
	c.Key.Enroll(c2, ids[0])
	c.Mail.FailNext(http.StatusInternalServerError, "oops", 1)
	c.Env.ProcessCampaign(c2)
	c.Env.Clock.Advance(time.Minute)
	if r := c.Env.ProcessCampaign(c2); r.Sent != 1 || r.Completed != 1 {
		t.Fatalf("retry success: %+v", r)
	}
	if c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result = 'success' AND tries = 2`, s2) != 1 {
		t.Fatal("success on the second try")
	}
	if c.Env.QueryInt(`SELECT count(*) FROM interactions WHERE kind = 'campaign_email'`) != 1 {
		t.Fatal("one interaction for the one sent email")
	}
}

// TestCampaignConcurrentProcessors races four processors (two service
// instances, as two binaries would be, two passes each) over one campaign
// of small chunks with a slow provider: every participant gets exactly
// one email.
func TestCampaignConcurrentProcessors(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "Hello {{first_name}}", "<p>x</p>")
	cid := c.Key.NewCampaignIn("Race", "active")
	c.Key.NewEmailStep(cid, tpl, nil)
	c.Key.NewStep(cid, map[string]any{"step_type": "trigger", "name": "next", "schedule_type": "immediate", "trigger_campaign_id": c.Key.NewCampaignIn("Next", "draft")})
	c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "second"})
	const n = 120
	seedCampaignContacts(t, c, cid, n)
	c.Mail.SetDelay(3 * time.Millisecond)

	newProcessor := func() *campaigns.Runner {
		return campaigns.NewRunner(campaigns.Deps{
			DB: c.Env.App.DB, Accounts: c.Env.App.Accounts,
			Sender: mailer.NewSender(c.Mail.URL, nil), Now: c.Env.Clock.Now, Log: slog.New(slog.DiscardHandler),
			SettingsKey: c.Env.App.Config.SettingsKey, PublicBaseURL: c.Env.App.Config.PublicBaseURL,
			Processing: campaigns.ProcessingOptions{ChunkSize: 7, Senders: 2},
		})
	}
	procs := []*campaigns.Runner{newProcessor(), newProcessor()}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := procs[i%2].ProcessCampaign(context.Background(), uuid.MustParse(cid)); err != nil {
				t.Errorf("processor %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	// Whatever the race left for later, one more pass finishes it.
	c.Env.ProcessCampaign(cid)

	got := map[string]int{}
	for _, r := range c.Mail.Recipients() {
		got[r.Email+" "+r.Subject]++
	}
	if len(c.Mail.Recipients()) != 2*n {
		t.Fatalf("provider got %d emails, want %d", len(c.Mail.Recipients()), 2*n)
	}
	for k, v := range got {
		if v != 2 { // two email steps, same subject
			t.Fatalf("%s received %d times", k, v)
		}
	}
	if c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE campaign_id = $1 AND result = 'success'`, cid) != 3*n ||
		c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1 AND status = 'completed'`, cid) != n ||
		c.Env.QueryInt(`SELECT count(*) FROM interactions WHERE kind = 'campaign_email'`) != 2*n ||
		c.Env.QueryInt(`SELECT count(*) FROM campaign_claims`) != 0 {
		t.Fatal("database state after the race")
	}
}

// seedCampaignContacts inserts n contacts and enrolls them (SQL: the race
// needs more contacts than the API would create quickly).
func seedCampaignContacts(t *testing.T, c *campEnv, campaignID string, n int) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Env.App.Pool.Exec(ctx, `
		INSERT INTO contacts (book_id, first_name, emails)
		SELECT $1, 'r' || g, jsonb_build_array(jsonb_build_object('address', 'r' || g || '@example.com', 'label', 'work'))
		FROM generate_series(1, $2) g`, c.Book, n); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Env.App.Pool.Exec(ctx, `
		INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at)
		SELECT $1, id, $3 FROM contacts WHERE book_id = $2 AND first_name LIKE 'r%'`, campaignID, c.Book, c.Env.Clock.Now()); err != nil {
		t.Fatal(err)
	}
}

// TestCampaignInterruptedClaim stands for a process that crashed after
// claiming a chunk and before recording the provider's answer: the claim is
// left alone while its lease runs, then recorded as failed ("delivery
// outcome unknown") and never sent again.
// TestCampaignInterruptedClaim plays a processor that died holding two
// claims: one whose chunk had gone to the provider (sending_at set) and one
// that never got there. The first is recorded "delivery outcome unknown"
// and never re-sent (at most once); the second is given back and sent.
func TestCampaignInterruptedClaim(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "S", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	s := c.Key.NewEmailStep(cid, tpl, nil)
	ids := c.contacts(4)
	c.Key.Enroll(cid, ids...)
	ctx := context.Background()
	now := c.Env.Clock.Now()
	// The dead processor's claims are rows as it would have left them:
	// no request can stop a process halfway through a claim.
	claim := func(claimID string, contacts []string, sending *time.Time) {
		t.Helper()
		if _, err := c.Env.App.Pool.Exec(ctx, `
			WITH p AS (SELECT id FROM campaign_participants WHERE campaign_id = $1 AND contact_id = ANY($2::uuid[])),
			ins AS (
				INSERT INTO campaign_step_completions (participant_id, step_id, campaign_id, claim_id, claimed_at, lease_until, tries, token_hash)
				SELECT id, $3, $1, $6, $4, $5, 1, sha256(id::text::bytea) FROM p
			)
			INSERT INTO campaign_claims (id, campaign_id, step_id, lease_until, participant_ids, sending_at)
			SELECT $6, $1, $3, $5, array_agg(id), $7 FROM p`,
			cid, contacts, s, now, now.Add(10*time.Minute), claimID, sending); err != nil {
			t.Fatal(err)
		}
	}
	claim("11111111-1111-4111-8111-111111111111", ids[:2], &now)
	claim("22222222-2222-4222-8222-222222222222", ids[2:3], nil)
	if r := c.Env.ProcessCampaign(cid); r.Sent != 1 || r.Reaped != 0 || r.Completed != 1 {
		t.Fatalf("while the leases run: %+v", r)
	}
	c.Env.Clock.Advance(10*time.Minute + time.Second)
	if r := c.Env.ProcessCampaign(cid); r.Sent != 1 || r.Reaped != 2 || r.Failed != 2 || r.Completed != 3 {
		t.Fatalf("after the leases: %+v", r)
	}
	if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result = 'failed' AND result_detail LIKE 'delivery outcome unknown%'`, s); n != 2 {
		t.Fatalf("%d recorded as outcome unknown, want the 2 whose send had begun", n)
	}
	c.Env.Clock.Advance(day)
	c.Env.ProcessCampaign(cid)
	if c.Mail.RecipientCount() != 2 || c.Env.QueryInt(`SELECT count(*) FROM campaign_claims`) != 0 {
		t.Fatalf("provider got %d emails, want 2: the free one and the given-back one; the interrupted sends never again", c.Mail.RecipientCount())
	}
}

func TestCampaignRunEndpoint(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "S", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "draft")
	c.Key.NewEmailStep(cid, tpl, nil)
	c.Key.Enroll(cid, c.contacts(2)...)
	run := "/api/campaigns/" + cid + "/run"

	c.O.Post(run, nil).ExpectError(http.StatusBadRequest, "INVALID_STATUS")
	c.Key.Patch("/api/v1/campaigns/"+cid, map[string]any{"status": "paused"}).Expect(http.StatusOK)
	c.O.Post(run, nil).ExpectError(http.StatusBadRequest, "INVALID_STATUS")
	c.Owner.SetAddon("trial")
	// The campaign's status is told first, whatever the team pays.
	c.O.Post(run, nil).ExpectError(http.StatusBadRequest, "INVALID_STATUS")
	c.Key.Patch("/api/v1/campaigns/"+cid, map[string]any{"status": "active"}).Expect(http.StatusOK)
	c.O.Post(run, nil).ExpectError(http.StatusForbidden, "ADDON_REQUIRED")
	c.Owner.SetAddon("active")
	c.Key.Post("/api/v1/campaigns/"+cid+"/run", nil).Expect(http.StatusNotFound) // internal API only
	c.O.Post("/api/campaigns/6f1c1d7e-0000-4000-8000-000000000000/run", nil).ExpectError(http.StatusNotFound, "NOT_FOUND")

	// The answer comes before the work, which runs in the background with
	// a context of its own (the request is long gone when it finishes).
	c.Mail.SetDelay(100 * time.Millisecond)
	r := c.O.Post(run, nil).Expect(http.StatusOK)
	if r.String("data.message") == "" {
		t.Fatalf("run answer: %s", r.Body)
	}
	c.Env.WaitJobs()
	if c.Mail.RecipientCount() != 2 || c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1 AND status = 'completed'`, cid) != 2 {
		t.Fatalf("run sent %d", c.Mail.RecipientCount())
	}
	metrics := c.Env.Metrics()
	for _, want := range []string{
		`contactbook_campaign_runs_total{result="ok",trigger="manual"} 1`,
		`contactbook_campaign_emails_total{outcome="sent"} 2`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestScheduleProcessDueOnlyPaidActive(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "S", "<p>x</p>")
	active := c.Key.NewCampaignIn("Active", "active")
	paused := c.Key.NewCampaignIn("Paused", "paused")
	for _, id := range []string{active, paused} {
		c.Key.NewEmailStep(id, tpl, nil)
		c.Key.Enroll(id, c.contact("A"+id[:4], "a"+id[:4]+"@example.com"))
	}
	// A trial team's active campaign is not processed.
	trial := c.Env.Signup("trialer")
	trial.SetAddon("trial")
	tb := trial.CreateBook("TB")
	tk := trial.NewKey().InBook(tb)
	trial.InBook(tb).Put("/api/campaign-settings", map[string]any{"sender_email": "x@trial.example", "mailer_api_key": "SG.t"}).Expect(http.StatusOK)
	ttpl := tk.Post("/api/v1/campaign-templates", map[string]any{"name": "T", "subject": "S", "body_html": "x"}).Expect(http.StatusOK).String("data.id")
	tc := tk.Post("/api/v1/campaigns", map[string]any{"name": "T"}).Expect(http.StatusOK).String("data.id")
	tk.Patch("/api/v1/campaigns/"+tc, map[string]any{"status": "active"}).Expect(http.StatusOK)
	tk.Post("/api/v1/campaigns/"+tc+"/steps", map[string]any{"step_type": "email", "name": "E", "schedule_type": "immediate", "email_template_id": ttpl}).Expect(http.StatusOK)
	tcontact := tk.Post("/api/v1/contacts", map[string]any{"first_name": "T", "emails": []any{map[string]any{"address": "t@example.com", "label": "work"}}}).Expect(http.StatusCreated).String("data.id")
	tk.Post("/api/v1/campaigns/"+tc+"/participants", map[string]any{"contact_ids": []string{tcontact}}).Expect(http.StatusOK)

	if err := c.Env.App.CampaignRunner.ProcessDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.Mail.RecipientCount() != 1 || c.Mail.Recipients()[0].Email != "a"+active[:4]+"@example.com" {
		t.Fatalf("ProcessDue sent %d emails", c.Mail.RecipientCount())
	}
	if _, err := c.Env.App.CampaignRunner.ProcessCampaign(context.Background(), uuid.MustParse(tc)); !apperr.Is(err, apperr.AddonRequired) {
		t.Fatalf("a trial campaign must not run: %v", err)
	}
	if _, err := c.Env.App.CampaignRunner.ProcessCampaign(context.Background(), uuid.MustParse(paused)); !apperr.Is(err, apperr.InvalidStatus) {
		t.Fatalf("a paused campaign must not run: %v", err)
	}
}

// TestScheduleWorker runs the scheduler's periodic job for real on a
// one-second CAMPAIGN_SCHEDULE.
func TestScheduleWorker(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active", apptest.Options{PeriodicJobs: true, Env: map[string]string{"CAMPAIGN_SCHEDULE": "@every 1s"}})
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "S", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	c.Key.NewEmailStep(cid, tpl, nil)
	c.Key.Enroll(cid, c.contacts(2)...)

	deadline := time.Now().Add(20 * time.Second)
	for c.Mail.RecipientCount() < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if c.Mail.RecipientCount() != 2 {
		t.Fatalf("the scheduler sent %d emails", c.Mail.RecipientCount())
	}
	// The ticks are jobs on record (River marks them completed shortly
	// after their work).
	ticks := func() int {
		return c.Env.QueryInt(`SELECT count(*) FROM river_job WHERE kind = 'campaign_schedule' AND state = 'completed'`)
	}
	for ticks() < 1 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if ticks() < 1 {
		t.Fatal("no completed scheduler tick recorded")
	}
	// Runs on request go on beside the ticks.
	c.Key.Enroll(cid, c.contact("Late", "late@example.com"))
	if msg := c.O.Post("/api/campaigns/"+cid+"/run", nil).Expect(http.StatusOK).String("data.message"); msg != "Campaign processing started." {
		t.Fatalf("run beside the scheduler: %q", msg)
	}
	for c.Mail.RecipientCount() < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if c.Mail.RecipientCount() != 3 {
		t.Fatalf("%d emails in all, want 3", c.Mail.RecipientCount())
	}
	if _, err := campaigns.NewRunner(campaigns.Deps{Schedule: "not a schedule"}).Jobs(river.NewWorkers()); err == nil {
		t.Fatal("a bad schedule must fail")
	}
}

func TestCampaignOversizedPersonalization(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	small := c.contact("Small", "small@example.com")
	big := c.contact("Big", "big@example.com")
	for _, key := range []string{"bio", "cv"} {
		field := c.Owner.Post("/api/books/"+c.Book+"/fields", map[string]any{"key": key, "name": key, "type": "text"}).Expect(http.StatusCreated).String("data.id")
		c.Key.Post("/api/v1/contacts/bulk-update-field", map[string]any{"contact_ids": []string{big}, "field_definition_id": field, "value": strings.Repeat("b", 6000)}).Expect(http.StatusOK)
	}
	tpl := c.Key.NewTemplateWith("T", "Hi {{first_name}}", "<p>{{custom.bio}}</p><p>{{custom.cv}}</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	c.Key.NewEmailStep(cid, tpl, nil)
	c.Key.Enroll(cid, small, big)

	if r := c.Env.ProcessCampaign(cid); r.Sent != 2 {
		t.Fatalf("%+v", r)
	}
	// Too much substitution text for the provider: that recipient goes
	// alone with its body rendered whole.
	reqs := c.Mail.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	seen := 0
	for _, r := range c.Mail.Recipients() {
		switch r.Email {
		case "big@example.com":
			seen++
			if len(r.Substitutions) != 0 || !strings.Contains(r.HTML(), "<p>"+strings.Repeat("b", 6000)+"</p><p>"+strings.Repeat("b", 6000)+"</p>") {
				t.Fatal("the big recipient must be sent rendered")
			}
		case "small@example.com":
			seen++
			if len(r.Substitutions) == 0 {
				t.Fatal("the small recipient stays in the batch")
			}
		}
	}
	if seen != 2 {
		t.Fatalf("the provider got %d of the two recipients", seen)
	}
}
