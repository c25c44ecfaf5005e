package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

// Merge rules through the real send paths: a custom field the book
// defines renders its value, or empty (or its fallback) for a contact
// without one; {{custom.<key>}} of a key the book does not define stays
// visible as written, in the campaign email and in the test email alike.
func TestCampaignMergeCustomFields(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	plan := c.Owner.Post("/api/books/"+c.Book+"/fields", map[string]any{"key": "plan", "name": "Plan", "type": "text"}).Expect(http.StatusCreated).String("data.id")
	tpl := c.Key.NewTemplateWith("T", "Hi {{first_name}} {{custom.nickname}}",
		`<p>[{{custom.plan}}|{{custom.plan | default: "none"}}|{{custom.nickname}}|{{ custom.nickname | default: "x" }}]</p>`)
	ann := c.contact("Ann", "ann@example.com")
	c.Env.Clock.Advance(time.Minute)
	bob := c.contact("Bob", "bob@example.com")
	c.Key.Post("/api/v1/contacts/bulk-update-field", map[string]any{"contact_ids": []string{ann}, "field_definition_id": plan, "value": "Gold"}).Expect(http.StatusOK)

	undefined := `{{custom.nickname}}|{{ custom.nickname | default: "x" }}]`
	c.O.Post("/api/campaign-templates/"+tpl+"/send-test", map[string]any{"email": c.Owner.Email}).Expect(http.StatusOK)
	r := c.Mail.Recipients()[0]
	if r.Subject != "[TEST] Hi Ann {{custom.nickname}}" || !strings.Contains(r.HTML(), "[Gold|Gold|"+undefined) {
		t.Fatalf("test email: %q\n%s", r.Subject, r.HTML())
	}
	c.Mail.Reset()

	cid := c.Key.NewCampaignIn("C", "active")
	c.Key.NewEmailStep(cid, tpl, nil)
	c.Key.Enroll(cid, ann, bob)
	if res := c.Env.ProcessCampaign(cid); res.Sent != 2 {
		t.Fatalf("pass: %+v", res)
	}
	want := map[string]string{
		"ann@example.com": "[Gold|Gold|" + undefined,
		"bob@example.com": "[|none|" + undefined,
	}
	got := map[string]mailertest.Recipient{}
	for _, r := range c.Mail.Recipients() {
		got[r.Email] = r
	}
	for email, body := range want {
		r, ok := got[email]
		if !ok {
			t.Errorf("%s got no email; the provider saw %d recipients", email, len(got))
			continue
		}
		if !strings.Contains(r.HTML(), body) || !strings.HasSuffix(r.Subject, " {{custom.nickname}}") {
			t.Errorf("%s: subject %q, body\n%s", r.Email, r.Subject, r.HTML())
		}
	}
}

// Line breaks in contact data and in stored settings never reach the
// provider's headers: they fold to a space.
func TestCampaignHeadersCarryNoLineBreaks(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	ann := c.contact("Ann", "ann@example.com")
	ctx := context.Background()
	// Data that did not come through today's validation: an import, an
	// older version.
	if _, err := c.Env.App.Pool.Exec(ctx, `UPDATE contacts SET first_name = E'Ann\r\nBcc: evil@example.com' WHERE id = $1`, ann); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Env.App.Pool.Exec(ctx, `UPDATE email_settings SET sender_name = E'Acme\nNews\r\n' WHERE book_id = $1`, c.Book); err != nil {
		t.Fatal(err)
	}
	tpl := c.Key.NewTemplateWith("T", "Hello {{first_name}}", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	c.Key.NewEmailStep(cid, tpl, nil)
	c.Key.Enroll(cid, ann)
	if res := c.Env.ProcessCampaign(cid); res.Sent != 1 {
		t.Fatalf("pass: %+v", res)
	}
	c.O.Post("/api/campaign-templates/"+tpl+"/send-test", map[string]any{"email": c.Owner.Email}).Expect(http.StatusOK)
	rs := c.Mail.Recipients()
	if len(rs) != 2 {
		t.Fatalf("%d recipients", len(rs))
	}
	if rs[0].Name != "Ann Bcc: evil@example.com Tester" || rs[0].Subject != "Hello Ann Bcc: evil@example.com" {
		t.Errorf("campaign email: to name %q, subject %q", rs[0].Name, rs[0].Subject)
	}
	for _, r := range rs {
		if r.From.Name != "Acme News" {
			t.Errorf("%s: from name %q", r.Email, r.From.Name)
		}
	}
}

// Templates at the size limit (1,000,000 characters) shaped against the
// template compiler go out at once, from send-test and from a campaign
// pass. Compiling them took minutes when compilation was quadratic; the
// bound here is generous for a slow machine under the race detector.
func TestCampaignAdversarialTemplates(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	contacts := c.contacts(2)
	bodies := map[string]string{
		"marker": "&cbm" + strings.Repeat("x", 1_000_000-4),
		"braces": strings.Repeat("{{x}}", 200_000),
	}
	for name, body := range bodies {
		tpl := c.Key.NewTemplateWith(name, "S", body)
		start := time.Now()
		c.O.Post("/api/campaign-templates/"+tpl+"/send-test", map[string]any{"email": c.Owner.Email}).Expect(http.StatusOK)
		cid := c.Key.NewCampaignIn(name, "active")
		c.Key.NewEmailStep(cid, tpl, nil)
		c.Key.Enroll(cid, contacts...)
		res := c.Env.ProcessCampaign(cid)
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("%s: send-test and a campaign pass took %s", name, took)
		}
		if res.Sent != 2 {
			t.Fatalf("%s: pass %+v", name, res)
		}
		for _, r := range c.Mail.Recipients() {
			if html := r.HTML(); !strings.HasPrefix(html, body) {
				t.Fatalf("%s: %s got a body starting %q", name, r.Email, html[:min(len(html), 40)])
			}
		}
		c.Mail.Reset()
	}
}

// A template with more merge expressions than the provider takes
// substitutions sends every recipient a request of its own with the body
// rendered whole; a large one is claimed a few recipients at a time (8
// MB of bodies), so a chunk never renders a thousand copies of a 1 MB
// body before the first goes out.
func TestCampaignManyExpressionsLargeTemplate(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	var body strings.Builder
	for i := range 150 {
		fmt.Fprintf(&body, `{{first_name | default: "%d"}}`, i)
	}
	body.WriteString(strings.Repeat("x", 990_000))
	tpl := c.Key.NewTemplateWith("T", "Hi {{first_name}}", body.String())
	cid := c.Key.NewCampaignIn("C", "active")
	c.Key.NewEmailStep(cid, tpl, nil)
	c.Key.Enroll(cid, c.contacts(10)...)
	if res := c.Env.ProcessCampaign(cid); res.Sent != 10 {
		t.Fatalf("pass: %+v", res)
	}
	if n := c.Mail.RequestCount(); n != 10 {
		t.Fatalf("%d requests, want one per recipient", n)
	}
	for _, r := range c.Mail.Recipients() {
		name := strings.TrimSuffix(r.Email, "@example.com")
		if len(r.Substitutions) != 0 || !strings.HasPrefix(r.HTML(), strings.Repeat(name, 150)+"xxx") {
			t.Fatalf("%s: not rendered whole", r.Email)
		}
	}
	if n := c.Env.QueryInt(`SELECT max(n) FROM (SELECT count(*) AS n FROM campaign_step_completions GROUP BY claim_id) k`); n > 8 {
		t.Fatalf("a claim took %d participants of a 1 MB template, want at most 8", n)
	}
}
