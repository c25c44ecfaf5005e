package accounts

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/accountmail"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
)

// NotifyWebhookDisabled queues, in tx (the transaction that switches the
// webhook off), the notice of a webhook the service switched off to every
// admin and owner of the team: the people who can switch it on again.
func (s *Service) NotifyWebhookDisabled(ctx context.Context, tx *postgres.Tx, teamID uuid.UUID, url, reason string, at time.Time) error {
	if s.mail == nil {
		return nil
	}
	team, err := s.st.team(ctx, tx, teamID)
	if err != nil {
		return err
	}
	members, err := s.st.members(ctx, tx, teamID)
	if err != nil {
		return err
	}
	for _, m := range members {
		if parseRole(m.Role) < auth.RoleAdmin {
			continue
		}
		err := s.mail.QueueWebhookDisabled(ctx, tx, s.now(), accountmail.WebhookDisabled{
			To: m.Email, Name: m.Name, TeamName: team.Name, URL: url, Reason: reason, At: at,
		})
		if err != nil {
			return err
		}
	}
	return nil
}
