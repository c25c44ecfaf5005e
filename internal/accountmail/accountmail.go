// Package accountmail sends the service's own emails to people about their
// account: invitations to a team, password reset links and the notice that
// a password changed. A message is written to the account_emails table,
// with the River job that sends it, in the transaction that asks for it, so
// it goes out exactly when that transaction commits and survives a crash
// of the instance. The job (Worker) sends it through the email provider at
// most once, retrying transient provider failures with backoff. Without a
// provider key the worker logs each link at warn instead (development).
package accountmail

import (
	"bytes"
	"context"
	"fmt"
	htmltemplate "html/template"
	"net/url"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/contactbook/contactbook/internal/postgres"
)

// Kinds of account email.
const (
	KindInvitation      = "invitation"
	KindPasswordReset   = "password_reset"
	KindPasswordChanged = "password_changed"
)

// Message is one account email, rendered.
type Message struct {
	Kind    string
	To      string
	ToName  string
	Subject string
	HTML    string
	Text    string
	// Link is the message's call to action (logged when no provider key
	// is configured); "" for notices without one.
	Link string
}

// txQueue enqueues a job in the caller's transaction (the River client,
// jobs.Client).
type txQueue interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Composer renders account emails and queues them.
type Composer struct {
	baseURL string // PUBLIC_BASE_URL, without a trailing slash
	queue   txQueue
}

// NewComposer returns a composer whose links start with baseURL and whose
// emails' jobs go to queue.
func NewComposer(baseURL string, queue txQueue) *Composer {
	return &Composer{baseURL: strings.TrimRight(baseURL, "/"), queue: queue}
}

// link is the absolute URL of an app page carrying token.
func (c *Composer) link(path, token string) string {
	return c.baseURL + path + "?" + url.Values{"token": {token}}.Encode()
}

// Invitation is what an invitation email says.
type Invitation struct {
	To        string
	TeamName  string
	Inviter   string // the inviting admin's name
	Role      string
	Token     string
	ExpiresAt time.Time
}

// PasswordReset is what a reset email says.
type PasswordReset struct {
	To, Name  string
	Token     string
	ExpiresAt time.Time
}

// PasswordChanged is what the notice of a changed password says.
type PasswordChanged struct {
	To, Name string
	At       time.Time
}

// QueueInvitation queues the invitation email in tx (the transaction that
// creates the invitation).
func (c *Composer) QueueInvitation(ctx context.Context, tx *postgres.Tx, now time.Time, in Invitation) error {
	link := c.link("/app/invitations/accept", in.Token)
	data := map[string]any{"Team": in.TeamName, "Inviter": in.Inviter, "Role": in.Role, "Link": link, "Expires": when(in.ExpiresAt)}
	return c.enqueue(ctx, tx, now, KindInvitation, in.To, "", fmt.Sprintf("%s invited you to %s on contactbook", in.Inviter, in.TeamName), link, invitationTemplates, data)
}

// QueuePasswordReset queues the reset email in tx.
func (c *Composer) QueuePasswordReset(ctx context.Context, tx *postgres.Tx, now time.Time, in PasswordReset) error {
	link := c.link("/app/reset-password", in.Token)
	data := map[string]any{"Name": in.Name, "Link": link, "Expires": when(in.ExpiresAt)}
	return c.enqueue(ctx, tx, now, KindPasswordReset, in.To, in.Name, "Reset your contactbook password", link, resetTemplates, data)
}

// QueuePasswordChanged queues the notice of a changed password in tx.
func (c *Composer) QueuePasswordChanged(ctx context.Context, tx *postgres.Tx, now time.Time, in PasswordChanged) error {
	data := map[string]any{"Name": in.Name, "At": when(in.At), "AppLink": c.baseURL + "/app/"}
	return c.enqueue(ctx, tx, now, KindPasswordChanged, in.To, in.Name, "Your contactbook password was changed", "", changedTemplates, data)
}

func when(t time.Time) string { return t.UTC().Format("2 January 2006, 15:04 UTC") }

func (c *Composer) enqueue(ctx context.Context, tx *postgres.Tx, now time.Time, kind, to, toName, subject, link string, t templates, data any) error {
	var html, text bytes.Buffer
	if err := t.html.Execute(&html, data); err != nil {
		return fmt.Errorf("render %s email: %w", kind, err)
	}
	if err := t.text.Execute(&text, data); err != nil {
		return fmt.Errorf("render %s email: %w", kind, err)
	}
	m := Message{Kind: kind, To: to, ToName: toName, Subject: subject, HTML: html.String(), Text: text.String(), Link: link}
	id, err := insert(ctx, tx, now, m)
	if err != nil {
		return err
	}
	if _, err := c.queue.InsertTx(ctx, tx, SendArgs{EmailID: id}, nil); err != nil {
		return fmt.Errorf("queue %s email: %w", kind, err)
	}
	return nil
}

type templates struct {
	html *htmltemplate.Template
	text *texttemplate.Template
}

func parse(name, html, text string) templates {
	return templates{
		html: htmltemplate.Must(htmltemplate.New(name).Parse(htmlFrame(html))),
		text: texttemplate.Must(texttemplate.New(name).Parse(text)),
	}
}

func htmlFrame(body string) string {
	return `<!DOCTYPE html><html><body style="font-family: -apple-system, Segoe UI, Helvetica, Arial, sans-serif; color: #1f2937; line-height: 1.5;">` +
		body + `<p style="color: #6b7280; font-size: 12px;">contactbook</p></body></html>`
}

var invitationTemplates = parse("invitation",
	`<p>{{.Inviter}} invited you to join <strong>{{.Team}}</strong> on contactbook as {{.Role}}.</p>
<p><a href="{{.Link}}" style="background: #4F46E5; color: #ffffff; padding: 10px 16px; border-radius: 6px; text-decoration: none;">Accept the invitation</a></p>
<p>Or open this link: <a href="{{.Link}}">{{.Link}}</a></p>
<p>The invitation expires on {{.Expires}}. If you did not expect it, ignore this email.</p>`,
	`{{.Inviter}} invited you to join {{.Team}} on contactbook as {{.Role}}.

Accept the invitation: {{.Link}}

The invitation expires on {{.Expires}}. If you did not expect it, ignore this email.
`)

var resetTemplates = parse("password_reset",
	`<p>Hello {{.Name}},</p>
<p>Someone asked to reset the password of your contactbook account. To choose a new password, follow this link:</p>
<p><a href="{{.Link}}" style="background: #4F46E5; color: #ffffff; padding: 10px 16px; border-radius: 6px; text-decoration: none;">Choose a new password</a></p>
<p>Or open: <a href="{{.Link}}">{{.Link}}</a></p>
<p>The link works once and expires on {{.Expires}}. If you did not ask for it, ignore this email: your password stays as it is.</p>`,
	`Hello {{.Name}},

Someone asked to reset the password of your contactbook account. To choose a new password, open:

{{.Link}}

The link works once and expires on {{.Expires}}. If you did not ask for it, ignore this email: your password stays as it is.
`)

var changedTemplates = parse("password_changed",
	`<p>Hello {{.Name}},</p>
<p>The password of your contactbook account was changed on {{.At}}, and every session that was logged in has been logged out.</p>
<p>If this was not you, reset your password now with "Forgot password" at <a href="{{.AppLink}}">{{.AppLink}}</a>.</p>`,
	`Hello {{.Name}},

The password of your contactbook account was changed on {{.At}}, and every session that was logged in has been logged out.

If this was not you, reset your password now with "Forgot password" at {{.AppLink}}
`)
