package apptest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

// Team is the usual cast of a test: a running service with a fake email
// provider, a team with the Campaigns add-on active, one book, and a
// client for each role, all working in that book.
type Team struct {
	Env  *Env
	Mail *mailertest.Server
	Book string
	// Owner, Admin, Member and Viewer are users of the team in each role.
	Owner, Admin, Member, Viewer *User
	// O, A, M and V are the same users' clients in the book (JWT, /api);
	// Key is a team API key in the book (/api/v1).
	O, A, M, V, Key *Client
}

// Setup starts the service with a fake email provider (MAILER_BASE_URL
// points at it) and a team in every role, so that a test states only what
// it is about. Options adjust the service as for New.
func Setup(t testing.TB, opts ...Options) *Team {
	t.Helper()
	mail := mailertest.NewServer(t)
	o := Options{}
	if len(opts) > 0 {
		o = opts[0]
	}
	vars := map[string]string{"MAILER_BASE_URL": mail.URL}
	for k, v := range o.Env {
		vars[k] = v
	}
	o.Env = vars
	env := New(t, o)
	owner := env.Signup("owner")
	owner.SetAddon("active")
	book := owner.CreateBook("Customers")
	admin := env.Join(owner, "admin", "admin")
	member := env.Join(owner, "member", "member")
	viewer := env.Join(owner, "viewer", "viewer")
	return &Team{
		Env: env, Mail: mail, Book: book,
		Owner: owner, Admin: admin, Member: member, Viewer: viewer,
		O: owner.InBook(book), A: admin.InBook(book), M: member.InBook(book), V: viewer.InBook(book),
		Key: owner.NewKey().InBook(book),
	}
}

// The factories below create through the API, so that fixtures pass the
// same rules and side effects (events, counters, audit) as real data. The
// client must be in a book (InBook) and allowed to create.

// NewContact creates a contact with one primary work email (none when
// email is empty) and returns its id.
func (c *Client) NewContact(first, email string) string {
	c.env.T.Helper()
	body := map[string]any{"first_name": first}
	if email != "" {
		body["emails"] = []map[string]any{{"address": email, "label": "work", "primary": true}}
	}
	return c.Post(c.api("/contacts"), body).Expect(http.StatusCreated).String("data.id")
}

// NewContacts creates n contacts named prefix1..prefixN with the addresses
// prefixI@example.com and returns their ids in that order.
func (c *Client) NewContacts(prefix string, n int) []string {
	c.env.T.Helper()
	ids := make([]string, n)
	for i := range ids {
		name := fmt.Sprintf("%s%d", prefix, i+1)
		ids[i] = c.NewContact(name, strings.ToLower(name)+"@example.com")
	}
	return ids
}

// NewTemplate creates an email template whose body greets the contact by
// first name and returns its id.
func (c *Client) NewTemplate(name string) string {
	c.env.T.Helper()
	return c.Post(c.api("/campaign-templates"), map[string]any{
		"name": name, "subject": "Hello", "body_html": "<p>{{first_name}}</p>",
	}).Expect(http.StatusOK).String("data.id")
}

// NewCampaign creates a draft campaign and returns its id.
func (c *Client) NewCampaign(name string) string {
	c.env.T.Helper()
	return c.Post(c.api("/campaigns"), map[string]any{"name": name}).Expect(http.StatusOK).String("data.id")
}

// NewEmailCampaign creates an active campaign of one immediate email step
// with the template and returns its id: the campaign a run sends.
func (c *Client) NewEmailCampaign(name, templateID string) string {
	c.env.T.Helper()
	id := c.NewCampaign(name)
	c.Post(c.api("/campaigns/"+id+"/steps"), map[string]any{
		"step_type": "email", "name": "Email", "schedule_type": "immediate", "email_template_id": templateID,
	}).Expect(http.StatusOK)
	c.Patch(c.api("/campaigns/"+id), map[string]any{"status": "active"}).Expect(http.StatusOK)
	return id
}

// Enroll enrolls the contacts in the campaign.
func (c *Client) Enroll(campaignID string, contactIDs ...string) {
	c.env.T.Helper()
	c.Post(c.api("/campaigns/"+campaignID+"/participants"), map[string]any{"contact_ids": contactIDs}).Expect(http.StatusOK)
}

// NewWebhook subscribes url to the event types for the user's team and
// returns the webhook's id and signing secret.
func (u *User) NewWebhook(url string, eventTypes ...string) (id, secret string) {
	u.env.T.Helper()
	r := u.Post("/api/teams/"+u.TeamID+"/webhooks", map[string]any{"url": url, "events": eventTypes}).Expect(http.StatusCreated)
	return r.String("data.webhook.id"), r.String("data.secret")
}

// api is path under the API the client's credential belongs to: /api/v1
// for an API key, /api for a session.
func (c *Client) api(path string) string {
	if auth.LooksLikeAPIKey(c.Token) {
		return "/api/v1" + path
	}
	return "/api" + path
}
