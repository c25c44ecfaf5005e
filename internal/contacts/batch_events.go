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
			evs = append(evs, batchEvent(events.ContactCreated, teamID, b, cp))
		}
	}
	if wanted, err := s.outbox.Wanted(ctx, tx, teamID, events.ContactUpdated); err != nil {
		return err
	} else if wanted {
		for _, cp := range b.updated {
			evs = append(evs, batchEvent(events.ContactUpdated, teamID, b, cp))
		}
	}
	return s.outbox.Append(ctx, tx, b.now, evs...)
}

// batchEvent is contactEvent without a copy of the contact: the event is
// written before the batch lets go of it, and its JSON is the same.
func batchEvent(typ string, teamID uuid.UUID, b *batch, c *Contact) events.Event {
	return events.Event{Type: typ, TeamID: teamID, BookID: &b.bookID, Data: c}
}
