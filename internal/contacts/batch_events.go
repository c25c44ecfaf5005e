package contacts

import (
	"context"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// batchEvents appends the batch's contact.created and contact.updated
// events, each with the contact as the API now returns it, when a webhook
// of the team subscribes to them.
func (s *Service) batchEvents(ctx context.Context, tx *postgres.Tx, teamID uuid.UUID, b *batch) error {
	evs := make([]events.Event, 0, len(b.created)+len(b.updated))
	if wanted, err := s.outbox.Wanted(ctx, tx, teamID, events.ContactCreated); err != nil {
		return err
	} else if wanted {
		for _, cp := range b.created {
			evs = append(evs, contactEvent(events.ContactCreated, teamID, *cp))
		}
	}
	if wanted, err := s.outbox.Wanted(ctx, tx, teamID, events.ContactUpdated); err != nil {
		return err
	} else if wanted {
		for _, cp := range b.updated {
			evs = append(evs, contactEvent(events.ContactUpdated, teamID, *cp))
		}
	}
	return s.outbox.Append(ctx, tx, b.now, evs...)
}
