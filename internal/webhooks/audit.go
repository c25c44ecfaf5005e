package webhooks

import (
	"context"

	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
)

// recordChange writes the audit entry of a change to w by actor in tx.
// w is redacted: its URL shows no password, and the signing secret is
// never in an entry.
func recordChange(ctx context.Context, tx postgres.DB, actor *auth.Actor, action string, w Webhook) error {
	details := map[string]any{}
	if w.URL != "" {
		details["url"], details["events"], details["active"] = w.URL, w.Events, w.Active
	}
	return audit.Record(ctx, tx, audit.Entry{
		TeamID: w.TeamID, Actor: audit.From(actor), Action: action,
		TargetType: "webhook", TargetID: w.ID.String(), Details: details,
	})
}
