package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
)

// A contact's time zone is an IANA name or null; anything else is 400
// naming time_zone. The book's default zone is UTC until set.
func TestContactTimeZoneAndDefault(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	id := c.Key.Post("/api/v1/contacts", map[string]any{"first_name": "Ann", "time_zone": "Europe/Berlin"}).
		Expect(http.StatusCreated).String("data.id")
	if got := c.Key.Get("/api/v1/contacts/" + id).Expect(http.StatusOK).String("data.time_zone"); got != "Europe/Berlin" {
		t.Fatalf("time_zone %q", got)
	}
	for _, bad := range []string{"Mars/Olympus", "Local", "europe/berlin "} {
		res := c.Key.Patch("/api/v1/contacts/"+id, map[string]any{"time_zone": bad}).Expect(http.StatusBadRequest)
		if msg := res.String("error.message"); !strings.Contains(msg, "time_zone") {
			t.Fatalf("%q: message %q does not name time_zone", bad, msg)
		}
	}
	res := c.Key.Patch("/api/v1/contacts/"+id, map[string]any{"time_zone": nil}).Expect(http.StatusOK)
	if res.Value("data.time_zone") != nil {
		t.Fatalf("time_zone after null: %s", res.Body)
	}

	c.O.ConfigureEmail()
	if got := c.O.Get("/api/campaign-settings").Expect(http.StatusOK).String("data.default_time_zone"); got != "UTC" {
		t.Fatalf("default_time_zone %q", got)
	}
	c.O.Put("/api/campaign-settings", map[string]any{"sender_email": "a@acme.example", "default_time_zone": "Nowhere/City"}).
		Expect(http.StatusBadRequest)
}

// A bad window is 400 naming the part at fault.
func TestStepWindowValidation(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	tpl := c.Key.NewTemplateWith("T", "Hi", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "draft")
	for _, tc := range []struct {
		window map[string]any
		field  string
	}{
		{map[string]any{"days": []string{}, "start": "09:00", "end": "17:00"}, "send_window.days"},
		{map[string]any{"days": []string{"mon", "mon"}, "start": "09:00", "end": "17:00"}, "send_window.days"},
		{map[string]any{"days": []string{"mon", "funday"}, "start": "09:00", "end": "17:00"}, "send_window.days"},
		{map[string]any{"days": []string{"mon"}, "start": "9am", "end": "17:00"}, "send_window.start"},
		{map[string]any{"days": []string{"mon"}, "start": "24:00", "end": "24:00"}, "send_window.start"},
		{map[string]any{"days": []string{"mon"}, "start": "09:00", "end": "25:00"}, "send_window.end"},
		{map[string]any{"days": []string{"mon"}, "start": "17:00", "end": "09:00"}, "send_window.end"},
	} {
		res := c.Key.Post("/api/v1/campaigns/"+cid+"/steps", map[string]any{
			"step_type": "email", "name": "E", "schedule_type": "immediate", "email_template_id": tpl, "send_window": tc.window,
		}).Expect(http.StatusBadRequest)
		if msg := res.String("error.message"); !strings.Contains(msg, "`"+tc.field+"`") {
			t.Errorf("%v: message %q does not name %s", tc.window, msg, tc.field)
		}
	}
	st := c.Key.Post("/api/v1/campaigns/"+cid+"/steps", map[string]any{
		"step_type": "email", "name": "E", "schedule_type": "delay", "delay_days": 1, "delay_hours": 5, "email_template_id": tpl,
		"send_window": map[string]any{"days": []string{"fri", "mon"}, "start": "09:00", "end": "24:00"},
	}).Expect(http.StatusOK)
	if st.Int("data.delay_hours") != 5 || fmt.Sprint(st.Value("data.send_window.days")) != "[mon fri]" || st.String("data.send_window.end") != "24:00" {
		t.Fatalf("step: %s", st.Body)
	}
	c.Key.Post("/api/v1/campaigns/"+cid+"/steps", map[string]any{
		"step_type": "email", "name": "E", "schedule_type": "delay", "delay_days": 0, "delay_hours": 24, "email_template_id": tpl,
	}).Expect(http.StatusBadRequest)
}

// A window of Monday to Friday, 09:00 to 17:00 holds each participant
// until it opens in the participant's own zone (else the book's default),
// counts them as waiting, and sends them at the first pass inside it; the
// pass in between reads none of them. Across the change to summer time in
// New York (2026-03-08) 09:00 stays 09:00 local.
func TestStepWindowPerTimeZoneAcrossDST(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	c.O.Put("/api/campaign-settings", map[string]any{
		"sender_email": "news@acme.example", "mailer_api_key": apptest.MailerKey, "company_name": "Acme", "address_line1": "1 Main St",
		"default_time_zone": "Asia/Tokyo",
	}).Expect(http.StatusOK)
	// Friday 2026-03-06 20:00 UTC: 15:00 in New York (open), 21:00 in
	// Berlin (closed), Saturday 05:00 in Tokyo (closed).
	c.Env.Clock.Set(time.Date(2026, 3, 6, 20, 0, 0, 0, time.UTC))
	ny := c.Key.Post("/api/v1/contacts", map[string]any{"first_name": "Nia", "time_zone": "America/New_York",
		"emails": []map[string]any{{"address": "nia@example.com"}}}).Expect(http.StatusCreated).String("data.id")
	ber := c.Key.Post("/api/v1/contacts", map[string]any{"first_name": "Ben", "time_zone": "Europe/Berlin",
		"emails": []map[string]any{{"address": "ben@example.com"}}}).Expect(http.StatusCreated).String("data.id")
	tok := c.contact("Tomo", "tomo@example.com") // no zone: the book's default, Tokyo
	tpl := c.Key.NewTemplateWith("T", "Hi", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	step := c.Key.NewEmailStep(cid, tpl, map[string]any{
		"send_window": map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri"}, "start": "09:00", "end": "17:00"},
	})
	c.Key.Enroll(cid, ny, ber, tok)

	sentTo := func() []string {
		var out []string
		for _, r := range c.Mail.Recipients() {
			out = append(out, r.Email)
		}
		slices.Sort(out)
		return out
	}
	waiting := func() int {
		return c.O.Get("/api/campaigns/" + cid + "/stats").Expect(http.StatusOK).Int("data.steps.0.waiting_count")
	}
	if r := c.Env.ProcessCampaign(cid); r.Sent != 1 || r.Held != 2 || fmt.Sprint(sentTo()) != "[nia@example.com]" {
		t.Fatalf("Friday 20:00 UTC: %+v, sent to %v", r, sentTo())
	}
	if w := waiting(); w != 2 {
		t.Fatalf("waiting_count %d, want 2", w)
	}
	heldIn := func(campaign, contact string) time.Time {
		var at time.Time
		if err := c.Env.App.Pool.QueryRow(t.Context(), `SELECT held_until FROM campaign_participants WHERE campaign_id = $1 AND contact_id = $2`,
			campaign, contact).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at.UTC()
	}
	held := func(contact string) time.Time { return heldIn(cid, contact) }
	// Monday 09:00 in Tokyo is Monday 00:00 UTC; in Berlin 08:00 UTC.
	if got, want := held(tok), time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("Tokyo held until %s, want %s", got, want)
	}
	if got, want := held(ber), time.Date(2026, 3, 9, 8, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("Berlin held until %s, want %s", got, want)
	}
	// A pass while everyone waits reads none of them.
	if r := c.Env.ProcessCampaign(cid); r.Sent != 0 || r.Held != 0 {
		t.Fatalf("second pass: %+v", r)
	}
	c.Env.Clock.Set(time.Date(2026, 3, 9, 0, 30, 0, 0, time.UTC))
	if r := c.Env.ProcessCampaign(cid); r.Sent != 1 || r.Completed != 1 {
		t.Fatalf("Monday 09:30 Tokyo: %+v", r)
	}
	c.Env.Clock.Set(time.Date(2026, 3, 9, 7, 59, 0, 0, time.UTC))
	if r := c.Env.ProcessCampaign(cid); r.Sent != 0 {
		t.Fatalf("Monday 08:59 Berlin: %+v", r)
	}
	c.Env.Clock.Set(time.Date(2026, 3, 9, 8, 0, 0, 0, time.UTC))
	if r := c.Env.ProcessCampaign(cid); r.Sent != 1 || waiting() != 0 {
		t.Fatalf("Monday 09:00 Berlin: %+v", r)
	}
	if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result = 'success'`, step); n != 3 {
		t.Fatalf("%d sent, want 3", n)
	}

	// New York after the change to summer time: 09:00 EDT is 13:00 UTC
	// (it was 14:00 UTC before the change).
	cid2 := c.Key.NewCampaignIn("C2", "active")
	c.Key.NewEmailStep(cid2, tpl, map[string]any{
		"send_window": map[string]any{"days": []string{"mon"}, "start": "09:00", "end": "10:00"},
	})
	c.Env.Clock.Set(time.Date(2026, 3, 6, 20, 0, 0, 0, time.UTC)) // Friday, before the change
	c.Key.Enroll(cid2, ny)
	c.Env.ProcessCampaign(cid2)
	if got, want := heldIn(cid2, ny), time.Date(2026, 3, 9, 13, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("New York held until %s, want %s (09:00 EDT)", got, want)
	}
}

// A contact whose zone changes while a window holds it is read in the
// new zone by the next pass, whether the change comes from the API or an
// import; the others keep waiting.
func TestTimeZoneChangeReleasesTheWindowHold(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	// Friday 2026-03-06 20:00 UTC: 21:00 in Berlin (closed), 15:00 in New
	// York (open).
	c.Env.Clock.Set(time.Date(2026, 3, 6, 20, 0, 0, 0, time.UTC))
	in := func(first string) string {
		return c.Key.Post("/api/v1/contacts", map[string]any{"first_name": first, "time_zone": "Europe/Berlin",
			"emails": []map[string]any{{"address": strings.ToLower(first) + "@example.com"}}}).Expect(http.StatusCreated).String("data.id")
	}
	ben, bea, bo := in("Ben"), in("Bea"), in("Bo")
	tpl := c.Key.NewTemplateWith("T", "Hi", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	c.Key.NewEmailStep(cid, tpl, map[string]any{
		"send_window": map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri"}, "start": "09:00", "end": "17:00"},
	})
	c.Key.Enroll(cid, ben, bea, bo)
	if r := c.Env.ProcessCampaign(cid); r.Sent != 0 || r.Held != 3 {
		t.Fatalf("Friday 21:00 Berlin: %+v", r)
	}
	// Ben's zone is fixed through the API, Bea's by an import; Bo's
	// contact changes but not its zone.
	c.Key.Patch("/api/v1/contacts/"+ben, map[string]any{"time_zone": "America/New_York"}).Expect(http.StatusOK)
	res := runImport(c.Env, c.Owner, c.Book, []byte("Email,Time zone\r\nbea@example.com,America/Chicago\r\n"), map[string]string{"mode": "update"})
	if res.Int("data.updated") != 1 {
		t.Fatalf("import: %s", res.Body)
	}
	c.Key.Patch("/api/v1/contacts/"+bo, map[string]any{"company": "Acme", "time_zone": "Europe/Berlin"}).Expect(http.StatusOK)
	r := c.Env.ProcessCampaign(cid)
	var sent []string
	for _, m := range c.Mail.Recipients() {
		sent = append(sent, m.Email)
	}
	slices.Sort(sent)
	if r.Sent != 2 || fmt.Sprint(sent) != "[bea@example.com ben@example.com]" {
		t.Fatalf("after the zone changes: %+v, sent to %v; want Ben (15:00 New York) and Bea (14:00 Chicago)", r, sent)
	}
	if w := c.O.Get("/api/campaigns/" + cid + "/stats").Expect(http.StatusOK).Int("data.steps.0.waiting_count"); w != 1 {
		t.Fatalf("waiting_count %d, want 1 (Bo, still in Berlin)", w)
	}
}

// A delay step is due delay_days days and delay_hours hours after
// enrollment.
func TestStepDelayHours(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "Hi", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	c.Key.NewEmailStep(cid, tpl, map[string]any{"schedule_type": "delay", "delay_days": 1, "delay_hours": 6})
	c.Key.Enroll(cid, c.contact("Ann", "ann@example.com"))
	c.Env.Clock.Advance(30*time.Hour - time.Minute)
	if r := c.Env.ProcessCampaign(cid); r.Sent != 0 {
		t.Fatalf("a minute early: %+v", r)
	}
	c.Env.Clock.Advance(time.Minute)
	if r := c.Env.ProcessCampaign(cid); r.Sent != 1 {
		t.Fatalf("at 1 day 6 hours: %+v", r)
	}
}

// A follow-up only to those who did not open the first email: the others
// complete the step as skipped, with the reason, and skipped shows in the
// stats, the step's contacts and the participant's history.
func TestStepConditionSkips(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	signer := newEventSigner(t)
	cid, first, ann, bob, byEmail := sentCampaign(t, c, signer)
	res := signer.post(c, c.Book, []map[string]any{providerEvent(byEmail["ann@example.com"], "ev-open-1", "open", c.Env.Clock.Now(), nil)})
	res.Expect(http.StatusOK)

	tpl := c.Key.NewTemplateWith("F", "Did you see?", "<p>again</p>")
	follow := c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "Nudge", "condition": map[string]any{"if": "not_opened", "step_id": first}})
	steps := c.O.Get("/api/campaigns/" + cid).Expect(http.StatusOK)
	later := steps.String("data.steps.1.id")
	// The condition must name an earlier email step: a new step naming
	// none is the request at fault (400); a change of a step, a reorder or
	// a delete that leaves a condition naming a later step, the step
	// itself or none conflicts with the campaign's steps (409).
	c.Key.Post("/api/v1/campaigns/"+cid+"/steps", map[string]any{"name": "Bad", "step_type": "email", "schedule_type": "immediate",
		"email_template_id": tpl, "condition": map[string]any{"if": "opened", "step_id": uuid.NewString()}}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.O.Patch("/api/campaigns/"+cid+"/steps/"+first, map[string]any{"condition": map[string]any{"if": "opened", "step_id": later}}).
		ExpectError(http.StatusConflict, "CONFLICT")
	c.O.Patch("/api/campaigns/"+cid+"/steps/"+follow, map[string]any{"condition": map[string]any{"if": "opened", "step_id": follow}}).
		ExpectError(http.StatusConflict, "CONFLICT")
	res = c.O.Patch("/api/campaigns/"+cid+"/steps/reorder", map[string]any{"step_ids": []string{follow, first, later}})
	if res.Status != http.StatusConflict || !strings.Contains(res.String("error.message"), "Nudge") {
		t.Fatalf("reorder: %d %s", res.Status, res.Body)
	}
	c.O.Delete("/api/campaigns/" + cid + "/steps/" + first).Expect(http.StatusConflict)

	c.Env.Clock.Advance(3 * day)
	c.Mail.Reset()
	r := c.Env.ProcessCampaign(cid)
	if r.Sent != 3 || r.Skipped != 1 || r.Completed != 2 {
		t.Fatalf("pass: %+v", r)
	}
	nudged := 0
	for _, rc := range c.Mail.Recipients() {
		if rc.Subject == "Did you see?" {
			nudged++
			if rc.Email != "bob@example.com" {
				t.Fatalf("nudge went to %s", rc.Email)
			}
		}
	}
	if nudged != 1 {
		t.Fatalf("%d nudges", nudged)
	}
	stats := c.O.Get("/api/campaigns/" + cid + "/stats").Expect(http.StatusOK)
	if stats.Int("data.steps.2.skipped_count") != 1 || stats.Int("data.summary.skipped_count") != 1 {
		t.Fatalf("stats: %s", stats.Body)
	}
	sc := c.O.Get("/api/campaign-step-contacts/" + cid + "/" + follow + "?result=skipped").Expect(http.StatusOK)
	if sc.Int("meta.total") != 1 || sc.String("data.0.contact_id") != ann || sc.String("data.0.result_detail") != "condition not met: not_opened Email" {
		t.Fatalf("skipped contacts: %s", sc.Body)
	}
	act := c.O.Get("/api/contacts/" + ann + "/activity").Expect(http.StatusOK)
	if !strings.Contains(string(act.Body), `"type":"skipped"`) || !strings.Contains(string(act.Body), "condition not met: not_opened Email") {
		t.Fatalf("ann's activity has no skipped step: %s", act.Body)
	}
	_ = bob
}

// Two subjects tried on 20 % of the participants due (at least one per
// variant): the rest wait, counted as waiting, until the decision after
// decide_after_minutes, which the unique open rate makes; then everyone
// else gets the winner. The stats count each variant and name the
// winner; each participant's history names its variant.
func TestStepABSubjects(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	signer := newEventSigner(t)
	c.O.ConfigureEmail()
	c.O.Put("/api/campaign-settings", map[string]any{
		"sender_name": "Acme News", "sender_email": "news@acme.example", "company_name": "Acme Inc.", "address_line1": "1 Main St",
		"mailer_api_key": apptest.MailerKey, "event_webhook_public_key": signer.pub, "track_opens": true,
	}).Expect(http.StatusOK)
	tpl := c.Key.NewTemplateWith("T", "Template subject", "<p>Hi {{first_name}}</p>")
	cid := c.Key.NewCampaignIn("AB", "active")
	// A template of another book of the team.
	otherBook := c.Owner.CreateBook("Elsewhere")
	foreign := c.Owner.InBook(otherBook).NewTemplateWith("F", "S", "<p>x</p>")
	// Bad variants: one only, an empty subject, a percentage out of range,
	// a subject's template from another book.
	for _, bad := range []map[string]any{
		{"variants": []map[string]any{{"subject": "A"}, {"subject": "B", "email_template_id": foreign}}},
		{"variants": []map[string]any{{"subject": "A"}}},
		{"variants": []map[string]any{{"subject": "A"}, {"subject": " "}}},
		{"variants": []map[string]any{{"subject": "A"}, {"subject": "B"}}, "ab_test": map[string]any{"test_percent": 5}},
		{"ab_test": map[string]any{"metric": "opens"}},
	} {
		body := map[string]any{"step_type": "email", "name": "E", "schedule_type": "immediate", "email_template_id": tpl}
		for k, v := range bad {
			body[k] = v
		}
		c.Key.Post("/api/v1/campaigns/"+cid+"/steps", body).Expect(http.StatusBadRequest)
	}
	stepRes := c.Key.Post("/api/v1/campaigns/"+cid+"/steps", map[string]any{
		"step_type": "email", "name": "Launch", "schedule_type": "immediate", "email_template_id": tpl,
		"variants": []map[string]any{{"subject": "Subject A"}, {"subject": "Subject B"}},
		"ab_test":  map[string]any{"decide_after_minutes": 60},
	}).Expect(http.StatusOK)
	step := stepRes.String("data.id")
	varA, varB := stepRes.String("data.variants.0.id"), stepRes.String("data.variants.1.id")
	if stepRes.String("data.ab_test.metric") != "opens" || stepRes.Int("data.ab_test.test_percent") != 20 || stepRes.Value("data.winner_variant_id") != nil {
		t.Fatalf("step: %s", stepRes.Body)
	}
	ids := c.contacts(10)
	c.Key.Enroll(cid, ids...)

	if r := c.Env.ProcessCampaign(cid); r.Sent != 2 || r.Held != 8 {
		t.Fatalf("first pass: %+v", r)
	}
	bySubject := map[string][]string{}
	for _, rc := range c.Mail.Recipients() {
		bySubject[rc.Subject] = append(bySubject[rc.Subject], rc.Email)
	}
	if len(bySubject["Subject A"]) != 1 || len(bySubject["Subject B"]) != 1 {
		t.Fatalf("test emails by subject: %v", bySubject)
	}
	stats := c.O.Get("/api/campaigns/" + cid + "/stats").Expect(http.StatusOK)
	if stats.Int("data.steps.0.waiting_count") != 8 || stats.Int("data.steps.0.variants.0.sent_count") != 1 ||
		stats.Int("data.steps.0.variants.1.sent_count") != 1 {
		t.Fatalf("stats after the test emails: %s", stats.Body)
	}
	// B's recipient opens.
	var bRecipient = bySubject["Subject B"][0]
	for _, rc := range c.Mail.Recipients() {
		if rc.Email == bRecipient {
			signer.post(c, c.Book, []map[string]any{providerEvent(rc, "ab-open-1", "open", c.Env.Clock.Now(), nil)}).Expect(http.StatusOK)
		}
	}
	c.Env.Clock.Advance(30 * time.Minute)
	if r := c.Env.ProcessCampaign(cid); r.Sent != 0 {
		t.Fatalf("before decide_after_minutes: %+v", r)
	}
	if got := c.O.Get("/api/campaigns/" + cid).Expect(http.StatusOK).Value("data.steps.0.winner_variant_id"); got != nil {
		t.Fatalf("decided early: %v", got)
	}
	c.Env.Clock.Advance(31 * time.Minute)
	c.Mail.Reset()
	if r := c.Env.ProcessCampaign(cid); r.Sent != 8 || r.Completed != 8 {
		t.Fatalf("after the decision: %+v", r)
	}
	for _, rc := range c.Mail.Recipients() {
		if rc.Subject != "Subject B" {
			t.Fatalf("after the decision %s got %q", rc.Email, rc.Subject)
		}
	}
	if got := c.O.Get("/api/campaigns/" + cid).Expect(http.StatusOK).String("data.steps.0.winner_variant_id"); got != varB {
		t.Fatalf("winner %s, want B %s", got, varB)
	}
	stats = c.O.Get("/api/campaigns/" + cid + "/stats").Expect(http.StatusOK)
	if stats.Int("data.steps.0.waiting_count") != 0 || stats.Int("data.steps.0.variants.1.sent_count") != 9 ||
		stats.Int("data.steps.0.variants.1.opened_count") != 1 || stats.Value("data.steps.0.variants.1.winner") != true ||
		stats.Value("data.steps.0.variants.0.winner") != false || stats.String("data.steps.0.variants.0.id") != varA {
		t.Fatalf("stats after the decision: %s", stats.Body)
	}
	parts := c.O.Get("/api/campaigns/" + cid + "/participants?limit=1").Expect(http.StatusOK)
	hist := c.O.Get("/api/campaigns/" + cid + "/participants/" + parts.String("data.0.id") + "/history").Expect(http.StatusOK)
	if v := hist.String("data.0.variant_subject"); v != "Subject A" && v != "Subject B" {
		t.Fatalf("history: %s", hist.Body)
	}
	_ = step
}
