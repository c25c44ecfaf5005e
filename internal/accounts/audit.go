package accounts

import (
	"context"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
)

// record writes the team's audit entry of an action in tx, the transaction
// of the change. A nil actor is the service itself (an operator's command,
// the payment provider's webhook).
func (s *Service) record(ctx context.Context, tx postgres.DB, actor *auth.Actor, teamID uuid.UUID, action, targetType, targetID string, details map[string]any) error {
	return audit.Record(ctx, tx, audit.Entry{
		TeamID: teamID, Actor: audit.From(actor), Action: action,
		TargetType: targetType, TargetID: targetID, Details: details,
	})
}
