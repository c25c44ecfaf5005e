package apptest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/contacts/contactstest"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

// The addresses and keys Setup configures, for assertions on what the
// service sends and links to.
const (
	// PublicBaseURL is the service's public address (PUBLIC_BASE_URL), the
	// start of every link it emails.
	PublicBaseURL = "https://contacts.example.com"
	// AccountMailKey, AccountMailSender and AccountMailName are the system
	// provider key and sender of account emails (with Options.AccountMail).
	AccountMailKey    = "SG.system-key-0123456789"
	AccountMailSender = "accounts@contacts.example.com"
	AccountMailName   = "Contactbook Accounts"
)

// Team is the usual cast of a test: a running service with a fake email
// provider, a team with the Campaigns add-on active, one book, and a
// client for each role, all working in that book.
type Team struct {
	Env  *Env
	Mail *mailertest.Server
	Book string
	// Owner, Admin, Member and Viewer are users of the team in each role
	// (with Options.OwnerOnly, the owner only).
	Owner, Admin, Member, Viewer *User
	// O, A, M and V are the same users' clients in the book (JWT, /api);
	// Key is a team API key in the book (/api/v1).
	O, A, M, V, Key *Client
}

// Setup starts the service with a fake email provider (MAILER_BASE_URL
// points at it) and a team in every role, so that a test states only what
// it is about. Logins last a year, so tests may move the clock by days,
// and links start with PublicBaseURL. Options say what differs. Setup is
// the one way a test starts the service.
func Setup(t testing.TB, opts ...Options) *Team {
	t.Helper()
	o := Options{}
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Bare {
		return &Team{Env: newEnv(t, o)}
	}
	mail := o.Mail
	if mail == nil {
		mail = mailertest.NewServer(t)
	}
	vars := map[string]string{
		"MAILER_BASE_URL": mail.URL,
		"PUBLIC_BASE_URL": PublicBaseURL,
		"JWT_TTL":         "8760h",
	}
	if o.AccountMail {
		vars["SYSTEM_MAILER_API_KEY"] = AccountMailKey
		vars["SYSTEM_SENDER_EMAIL"] = AccountMailSender
		vars["SYSTEM_SENDER_NAME"] = AccountMailName
	}
	for k, v := range o.Env {
		vars[k] = v
	}
	o.Env = vars
	env := newEnv(t, o)
	if o.NoTeam {
		return &Team{Env: env, Mail: mail}
	}
	addon := o.Addon
	if addon == "" {
		addon = "active"
	}
	tm := newTeam(env, mail, "owner", "Customers", addon)
	if !o.OwnerOnly {
		tm.Admin = env.Join(tm.Owner, "admin", "admin")
		tm.Member = env.Join(tm.Owner, "member", "member")
		tm.Viewer = env.Join(tm.Owner, "viewer", "viewer")
		tm.A, tm.M, tm.V = tm.Admin.InBook(tm.Book), tm.Member.InBook(tm.Book), tm.Viewer.InBook(tm.Book)
	}
	return tm
}

// AddTeam starts another tenant on tm's service: an owner signed up as
// name, whose own team has the add-on active and a book named name, with
// the owner's and a key's clients in it.
func (tm *Team) AddTeam(name string) *Team {
	tm.Env.T.Helper()
	return newTeam(tm.Env, tm.Mail, name, name, "active")
}

func newTeam(env *Env, mail *mailertest.Server, owner, book, addon string) *Team {
	env.T.Helper()
	u := env.Signup(owner)
	u.SetAddon(addon)
	id := u.CreateBook(book)
	return &Team{Env: env, Mail: mail, Book: id, Owner: u, O: u.InBook(id), Key: u.NewKey().InBook(id)}
}

// The factories below create through the API, so that fixtures pass the
// same rules and side effects (events, counters, audit) as real data. The
// client must be in a book (InBook) and allowed to create.

// NewContact creates a contact with one primary work email (none when
// email is empty) and returns its id.
func (c *Client) NewContact(first, email string) string {
	c.env.T.Helper()
	return c.NewContactWith(map[string]any{"first_name": first}, email)
}

// NewContactWith creates a contact of the given fields with one primary
// work email (none when email is empty) and returns its id.
func (c *Client) NewContactWith(fields map[string]any, email string) string {
	c.env.T.Helper()
	body := make(map[string]any, len(fields)+1)
	for k, v := range fields {
		body[k] = v
	}
	if email != "" {
		body["emails"] = []map[string]any{{"address": email, "label": "work", "primary": true}}
	}
	return c.Post(c.api("/contacts"), body).Expect(http.StatusCreated).String("data.id")
}

// FullContact is contactstest.FullContact: a contact body with every
// field a create takes filled in.
var FullContact = contactstest.FullContact

// SeedContacts inserts n contacts into a book in one statement, bypassing
// the API, and returns their ids in order: contact i is Person i of
// "Co i%7" with the address pI@seed.example, created i seconds after
// 2026-01-01 (updated in the reverse order), starred when i is divisible
// by 3. For tests of paging, sorting and filtering, which need creation
// times apart and hundreds of rows.
func (e *Env) SeedContacts(book string, n int) []string {
	e.T.Helper()
	rows, err := e.App.Pool.Query(context.Background(), `
		INSERT INTO contacts (book_id, first_name, last_name, company, emails, starred, created_at, updated_at)
		SELECT $1, 'Person', g::text, 'Co ' || (g % 7), jsonb_build_array(jsonb_build_object('address', 'p' || g || '@seed.example', 'label', 'work', 'primary', true)),
		       g % 3 = 0, timestamptz '2026-01-01' + g * interval '1 second', timestamptz '2026-02-01' - g * interval '1 second'
		FROM generate_series(1, $2) g
		RETURNING id`, book, n)
	if err != nil {
		e.T.Fatalf("apptest: seed contacts: %v", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			e.T.Fatal(err)
		}
		ids = append(ids, id.String())
	}
	if err := rows.Err(); err != nil {
		e.T.Fatal(err)
	}
	return ids
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
