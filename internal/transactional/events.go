package transactional

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// settledMessage is a message whose send was just settled, as its
// email.sent or email.failed event reports it.
type settledMessage struct {
	id, bookID, teamID uuid.UUID
	contactID          *uuid.UUID
	email              string
	status             Status
	detail             string
	providerMessageID  *string
	at                 time.Time
}

// settledColumns are what a statement settling messages (the table
// aliased m) returns for collectSettled; a failure happened now.
const settledColumns = `m.id, m.book_id, (SELECT b.team_id FROM book_teams b WHERE b.book_id = m.book_id),
	m.contact_id, m.email, m.status, m.detail, m.provider_message_id, COALESCE(m.sent_at, now())`

func collectSettled(rows pgx.Rows) ([]settledMessage, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (settledMessage, error) {
		var m settledMessage
		var team *uuid.UUID
		err := r.Scan(&m.id, &m.bookID, &team, &m.contactID, &m.email, &m.status, &m.detail, &m.providerMessageID, &m.at)
		if team != nil {
			m.teamID = *team
		}
		return m, err
	})
}

// emit writes email.sent for each message sent and email.failed for each
// that failed, for the teams with an active webhook that wants them:
// asked once per team of the batch, in the transaction that settled them.
// A message retried later (queued again) or suppressed reports nothing.
func (rn *Runner) emit(ctx context.Context, tx *postgres.Tx, settled []settledMessage) error {
	if rn.outbox == nil || len(settled) == 0 {
		return nil
	}
	byTeam := map[uuid.UUID][]settledMessage{}
	var teams []uuid.UUID
	for _, m := range settled {
		if (m.status != StatusSent && m.status != StatusFailed) || m.teamID == uuid.Nil {
			continue
		}
		if _, ok := byTeam[m.teamID]; !ok {
			teams = append(teams, m.teamID)
		}
		byTeam[m.teamID] = append(byTeam[m.teamID], m)
	}
	var evs []events.Event
	for _, team := range teams {
		wanted, err := rn.outbox.WantedOf(ctx, tx, team, events.EmailSent, events.EmailFailed)
		if err != nil {
			return err
		}
		if len(wanted) == 0 {
			continue
		}
		for _, m := range byTeam[team] {
			typ := events.EmailSent
			if m.status == StatusFailed {
				typ = events.EmailFailed
			}
			if !wanted[typ] {
				continue
			}
			id := m.id
			d := events.EmailData{EmailID: m.id, ContactID: m.contactID, Address: m.email, TransactionalID: &id,
				ProviderMessageID: m.providerMessageID, OccurredAt: m.at.UTC()}
			if typ == events.EmailFailed {
				detail := m.detail
				d.Reason = &detail
			}
			evs = append(evs, events.EmailEvents(team, m.bookID, []events.Email{{Type: typ, Data: d}})...)
		}
	}
	return rn.outbox.Append(ctx, tx, rn.now(), evs...)
}
