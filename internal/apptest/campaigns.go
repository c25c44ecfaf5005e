package apptest

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/campaigns"
)

// MailerKey is the email provider key ConfigureEmail saves, as the fake
// provider sees it on every send.
const MailerKey = "SG.test-key-0123456789"

// ConfigureEmail saves complete email settings for the client's book
// (sender, postal address, MailerKey), so that campaigns may send. The
// client must be allowed to (an owner or admin).
func (c *Client) ConfigureEmail() {
	c.env.T.Helper()
	c.Put(c.api("/campaign-settings"), map[string]any{
		"sender_name": "Acme News", "sender_email": "news@acme.example", "reply_to_email": "help@acme.example",
		"company_name": "Acme Inc.", "address_line1": "1 Main St", "city": "Springfield", "state": "IL",
		"postal_code": "62701", "country": "USA", "mailer_api_key": MailerKey,
	}).Expect(http.StatusOK)
}

// NewTemplate creates an email template whose body greets the contact by
// first name and returns its id.
func (c *Client) NewTemplate(name string) string {
	c.env.T.Helper()
	return c.NewTemplateWith(name, "Hello", "<p>{{first_name}}</p>")
}

// NewTemplateWith creates an email template of the subject and HTML body
// and returns its id.
func (c *Client) NewTemplateWith(name, subject, bodyHTML string) string {
	c.env.T.Helper()
	return c.Post(c.api("/campaign-templates"), map[string]any{"name": name, "subject": subject, "body_html": bodyHTML}).
		Expect(http.StatusOK).String("data.id")
}

// NewCampaign creates a draft campaign and returns its id.
func (c *Client) NewCampaign(name string) string {
	c.env.T.Helper()
	return c.Post(c.api("/campaigns"), map[string]any{"name": name}).Expect(http.StatusOK).String("data.id")
}

// NewCampaignIn creates a campaign, moves it from draft to status (when
// another) and returns its id.
func (c *Client) NewCampaignIn(name, status string) string {
	c.env.T.Helper()
	id := c.NewCampaign(name)
	if status != string(campaigns.StatusDraft) {
		c.Patch(c.api("/campaigns/"+id), map[string]any{"status": status}).Expect(http.StatusOK)
	}
	return id
}

// NewStep adds a step of the given body to the campaign and returns its id.
func (c *Client) NewStep(campaignID string, body map[string]any) string {
	c.env.T.Helper()
	return c.Post(c.api("/campaigns/"+campaignID+"/steps"), body).Expect(http.StatusOK).String("data.id")
}

// NewEmailStep adds an immediate email step with the template, and the
// fields of extra on top, to the campaign and returns its id.
func (c *Client) NewEmailStep(campaignID, templateID string, extra map[string]any) string {
	c.env.T.Helper()
	body := map[string]any{"step_type": "email", "name": "Email", "schedule_type": "immediate", "email_template_id": templateID}
	for k, v := range extra {
		body[k] = v
	}
	return c.NewStep(campaignID, body)
}

// NewEmailCampaign creates an active campaign of one immediate email step
// with the template and returns its id: the campaign a run sends.
func (c *Client) NewEmailCampaign(name, templateID string) string {
	c.env.T.Helper()
	id := c.NewCampaign(name)
	c.NewEmailStep(id, templateID, nil)
	c.Patch(c.api("/campaigns/"+id), map[string]any{"status": "active"}).Expect(http.StatusOK)
	return id
}

// Enroll enrolls the contacts in the campaign and returns how many the
// service enrolled.
func (c *Client) Enroll(campaignID string, contactIDs ...string) int {
	c.env.T.Helper()
	return c.Post(c.api("/campaigns/"+campaignID+"/participants"), map[string]any{"contact_ids": contactIDs}).
		Expect(http.StatusOK).Int("data.enrolled")
}

// ProcessCampaign makes one processing pass over the campaign, as a run
// and the scheduler do, and returns what it did.
func (e *Env) ProcessCampaign(campaignID string) campaigns.RunResult {
	e.T.Helper()
	id, err := uuid.Parse(campaignID)
	if err != nil {
		e.T.Fatalf("apptest: campaign id %q: %v", campaignID, err)
	}
	res, err := e.App.CampaignRunner.ProcessCampaign(context.Background(), id)
	if err != nil {
		e.T.Fatalf("apptest: process campaign: %v", err)
	}
	return res
}
