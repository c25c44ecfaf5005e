package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

// campEnv is a running service with a fake email provider, a team with
// the Campaigns add-on and one book.
type campEnv struct {
	t     *testing.T
	env   *apptest.Env
	mail  *mailertest.Server
	owner *apptest.User
	book  string
	ob    *apptest.Client // the owner in the book (JWT, /api)
	key   *apptest.Client // a team API key in the book (/api/v1)
}

const testMailerKey = "SG.test-key-0123456789"

// newCampEnv starts the service with the add-on in state addon.
func newCampEnv(t *testing.T, addon string, opts ...apptest.Options) *campEnv {
	t.Helper()
	mail := mailertest.NewServer(t)
	o := apptest.Options{Env: map[string]string{}}
	if len(opts) > 0 {
		o = opts[0]
		if o.Env == nil {
			o.Env = map[string]string{}
		}
	}
	o.Env["MAILER_BASE_URL"] = mail.URL
	// Tests move the clock by days; logins must outlive that.
	o.Env["JWT_TTL"] = "8760h"
	if o.Env["PUBLIC_BASE_URL"] == "" {
		o.Env["PUBLIC_BASE_URL"] = "https://contacts.example.com"
	}
	env := apptest.New(t, o)
	owner := env.Signup("owner")
	owner.SetAddon(addon)
	book := owner.CreateBook("Customers")
	return &campEnv{t: t, env: env, mail: mail, owner: owner, book: book, ob: owner.InBook(book), key: owner.NewKey().InBook(book)}
}

// contact creates a contact in the book through the public API.
func (c *campEnv) contact(first, email string) string {
	c.t.Helper()
	body := map[string]any{"first_name": first, "last_name": "Tester", "company": "Acme"}
	if email != "" {
		body["emails"] = []map[string]any{{"address": email, "label": "work", "primary": true}}
	}
	return c.key.Post("/api/v1/contacts", body).Expect(http.StatusCreated).String("data.id")
}

// contacts creates n contacts named c0..c(n-1) with addresses cN@example.com.
func (c *campEnv) contacts(n int) []string {
	c.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = c.contact(fmt.Sprint("c", i), fmt.Sprintf("c%d@example.com", i))
	}
	return ids
}

// configure saves complete email settings with the test provider key.
func (c *campEnv) configure() {
	c.t.Helper()
	c.ob.Put("/api/campaign-settings", map[string]any{
		"sender_name": "Acme News", "sender_email": "news@acme.example", "reply_to_email": "help@acme.example",
		"company_name": "Acme Inc.", "address_line1": "1 Main St", "city": "Springfield", "state": "IL",
		"postal_code": "62701", "country": "USA", "mailer_api_key": testMailerKey,
	}).Expect(http.StatusOK)
}

func (c *campEnv) template(name, subject, body string) string {
	c.t.Helper()
	return c.key.Post("/api/v1/campaign-templates", map[string]any{"name": name, "subject": subject, "body_html": body}).
		Expect(http.StatusOK).String("data.id")
}

// campaign creates a campaign and sets its status.
func (c *campEnv) campaign(name, status string) string {
	c.t.Helper()
	id := c.key.Post("/api/v1/campaigns", map[string]any{"name": name}).Expect(http.StatusOK).String("data.id")
	if status != string(campaigns.StatusDraft) {
		c.key.Patch("/api/v1/campaigns/"+id, map[string]any{"status": status}).Expect(http.StatusOK)
	}
	return id
}

func (c *campEnv) step(campaignID string, body map[string]any) string {
	c.t.Helper()
	return c.key.Post("/api/v1/campaigns/"+campaignID+"/steps", body).Expect(http.StatusOK).String("data.id")
}

func (c *campEnv) emailStep(campaignID, templateID string, extra map[string]any) string {
	c.t.Helper()
	body := map[string]any{"step_type": "email", "name": "Email", "schedule_type": "immediate", "email_template_id": templateID}
	for k, v := range extra {
		body[k] = v
	}
	return c.step(campaignID, body)
}

func (c *campEnv) enroll(campaignID string, contactIDs ...string) int {
	c.t.Helper()
	return c.key.Post("/api/v1/campaigns/"+campaignID+"/participants", map[string]any{"contact_ids": contactIDs}).
		Expect(http.StatusOK).Int("data.enrolled")
}

// process makes one processing pass over the campaign, as run and the
// scheduler do.
func (c *campEnv) process(campaignID string) campaigns.RunResult {
	c.t.Helper()
	res, err := c.env.App.CampaignRunner.ProcessCampaign(context.Background(), campUUID(c.t, campaignID))
	if err != nil {
		c.t.Fatalf("process campaign: %v", err)
	}
	return res
}

// count runs a counting query.
func (c *campEnv) count(sql string, args ...any) int {
	c.t.Helper()
	return c.env.QueryInt(sql, args...)
}

// advance moves the service's clock.
func (c *campEnv) advance(d time.Duration) { c.env.Clock.Advance(d) }

func campUUID(t testing.TB, s string) uuid.UUID {
	t.Helper()
	id, err := uuid.Parse(s)
	if err != nil {
		t.Fatalf("not a uuid %q: %v", s, err)
	}
	return id
}
