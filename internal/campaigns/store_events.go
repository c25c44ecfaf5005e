package campaigns

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// The campaign changes that webhooks hear about (participants enrolled,
// completed and removed, emails sent and failed, unsubscribes and topics)
// write their events in the transaction of the change, and only when an
// active webhook of the team subscribes to them: a statement that may
// touch many participants asks first (store.wanted) and only then returns
// the rows the events are built from.

// participantRef is one participant a statement changed.
type participantRef struct {
	ID, CampaignID, ContactID uuid.UUID
}

// wanted returns the team of the book and whether an active webhook of it
// subscribes to typ, seen from db (the change's transaction). Without an
// outbox (a test's bare store) nothing is wanted.
func (st store) wanted(ctx context.Context, db postgres.DB, bookID uuid.UUID, typ string) (uuid.UUID, bool, error) {
	if st.outbox == nil {
		return uuid.Nil, false, nil
	}
	var team uuid.UUID
	var yes bool
	err := db.QueryRow(ctx, `SELECT team_id, `+events.WantedSQL("team_id", "$2")+` FROM book_teams WHERE book_id = $1`, bookID, typ).Scan(&team, &yes)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, false, nil
	}
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("events wanted: %w", err)
	}
	return team, yes, nil
}

// campaignWanted is wanted for the book of the campaign, which it returns.
func (st store) campaignWanted(ctx context.Context, db postgres.DB, campaignID uuid.UUID, typ string) (team, book uuid.UUID, want bool, err error) {
	if st.outbox == nil {
		return uuid.Nil, uuid.Nil, false, nil
	}
	if err := db.QueryRow(ctx, `SELECT book_id FROM campaigns WHERE id = $1`, campaignID).Scan(&book); err != nil {
		return uuid.Nil, uuid.Nil, false, err
	}
	team, want, err = st.wanted(ctx, db, book, typ)
	return team, book, want, err
}

// participantsChanged runs sql (an INSERT or UPDATE of campaign_participants)
// and, when want, the same statement with returning appended (a RETURNING
// of the participant's id, campaign and contact), giving the rows it
// changed.
func participantsChanged(ctx context.Context, db postgres.DB, want bool, sql, returning string, args ...any) (int64, []participantRef, error) {
	if !want {
		tag, err := db.Exec(ctx, sql, args...)
		return tag.RowsAffected(), nil, err
	}
	rows, _ := db.Query(ctx, sql+"\n"+returning, args...)
	var refs []participantRef
	var r participantRef
	_, err := pgx.ForEachRow(rows, []any{&r.ID, &r.CampaignID, &r.ContactID}, func() error {
		refs = append(refs, r)
		return nil
	})
	return int64(len(refs)), refs, err
}

// emitParticipants writes one participant event of typ per ref.
func (st store) emitParticipants(ctx context.Context, db postgres.DB, teamID, bookID uuid.UUID, typ string, status ParticipantStatus, reason string, refs []participantRef, now time.Time) error {
	if len(refs) == 0 {
		return nil
	}
	var why *string
	if reason != "" {
		why = &reason
	}
	evs := make([]events.Event, len(refs))
	for i, r := range refs {
		evs[i] = participantEvent(teamID, bookID, typ, status, why, r, now.UTC())
	}
	return st.outbox.AppendIn(ctx, db, now, evs...)
}

// removeWith runs a removal of participants (sql, whose UPDATE aliases
// campaign_participants as p) in the book and writes participant.removed
// with reason for each participant it removed, when wanted.
func (st store) removeWith(ctx context.Context, db postgres.DB, bookID uuid.UUID, reason string, now time.Time, sql string, args ...any) (int64, error) {
	team, want, err := st.wanted(ctx, db, bookID, events.ParticipantRemoved)
	if err != nil {
		return 0, err
	}
	n, refs, err := participantsChanged(ctx, db, want, sql, `RETURNING p.id, p.campaign_id, p.contact_id`, args...)
	if err != nil {
		return 0, err
	}
	return n, st.emitParticipants(ctx, db, team, bookID, events.ParticipantRemoved, ParticipantRemoved, reason, refs, now)
}

// enrollWith runs an enrollment (sql, an INSERT INTO campaign_participants)
// in the book and writes participant.enrolled for each participant it
// added, when wanted.
func (st store) enrollWith(ctx context.Context, db postgres.DB, bookID uuid.UUID, now time.Time, sql string, args ...any) (int64, error) {
	team, want, err := st.wanted(ctx, db, bookID, events.ParticipantEnrolled)
	if err != nil {
		return 0, err
	}
	n, refs, err := participantsChanged(ctx, db, want, sql, `RETURNING id, campaign_id, contact_id`, args...)
	if err != nil {
		return 0, err
	}
	return n, st.emitParticipants(ctx, db, team, bookID, events.ParticipantEnrolled, ParticipantActive, "", refs, now)
}

// emitRecorded writes the events of a recorded claim that wanted names:
// email.sent for each email handed to the provider, email.failed for each
// row that failed, participant.completed for each participant the record
// completed. rows are the claim's rows (the emails' ids, contacts and
// addresses); it runs in the transaction of the record.
func (st store) emitRecorded(ctx context.Context, db postgres.DB, teamID, bookID uuid.UUID, rp recordParams, rows []claimedRow, wanted map[string]bool) error {
	byParticipant := make(map[uuid.UUID]*claimedRow, len(rows))
	for i := range rows {
		byParticipant[rows[i].ParticipantID] = &rows[i]
	}
	at := rp.Now.UTC()
	var emails []events.Email
	var pids []uuid.UUID
	for _, o := range rp.Outcomes {
		r := byParticipant[o.ParticipantID]
		if r == nil {
			continue
		}
		if o.Result != "" && o.Result != ResultSkipped {
			pids = append(pids, o.ParticipantID)
		}
		var typ string
		switch {
		case o.Result == ResultSuccess && r.HasToken && wanted[events.EmailSent]:
			typ = events.EmailSent
		case o.Result == ResultFailed && wanted[events.EmailFailed]:
			typ = events.EmailFailed
		default:
			continue
		}
		d := events.EmailData{
			EmailID: r.CompletionID, ContactID: &r.ContactID, Address: r.Email,
			CampaignID: &rp.CampaignID, StepID: &rp.StepID, ParticipantID: &r.ParticipantID,
			VariantID: r.VariantID, OccurredAt: at,
		}
		if typ == events.EmailSent {
			d.ProviderMessageID = &o.MessageID
		} else {
			d.Reason = &o.Detail
		}
		emails = append(emails, events.Email{Type: typ, Data: d})
	}
	evs := events.EmailEvents(teamID, bookID, emails)
	if wanted[events.ParticipantCompleted] && len(pids) > 0 {
		// The record completed these at rp.Now; a participant's completion
		// is written once (status active to completed).
		rows, _ := db.Query(ctx, `
			SELECT id, campaign_id, contact_id FROM campaign_participants
			WHERE id = ANY($1::uuid[]) AND status = 'completed' AND completed_at = $2`, pids, rp.Now)
		var r participantRef
		_, err := pgx.ForEachRow(rows, []any{&r.ID, &r.CampaignID, &r.ContactID}, func() error {
			evs = append(evs, participantEvent(teamID, bookID, events.ParticipantCompleted, ParticipantCompleted, nil, r, at))
			return nil
		})
		if err != nil {
			return err
		}
	}
	return st.outbox.AppendIn(ctx, db, rp.Now, evs...)
}

// completeWith runs the sweep that completes the campaign's participants
// (sql, an UPDATE of campaign_participants aliased p) and writes
// participant.completed for each, when wanted.
func (st store) completeWith(ctx context.Context, db postgres.DB, campaignID uuid.UUID, now time.Time, sql string, args ...any) (int64, error) {
	if _, inTx := db.(*postgres.Tx); !inTx && st.outbox != nil {
		if pool, ok := db.(postgres.Beginner); ok {
			// The sweep and its events commit together.
			var n int64
			err := postgres.InTx(ctx, pool, func(tx *postgres.Tx) (err error) {
				n, err = st.completeWith(ctx, tx, campaignID, now, sql, args...)
				return err
			})
			return n, err
		}
	}
	team, bookID, want, err := st.campaignWanted(ctx, db, campaignID, events.ParticipantCompleted)
	if err != nil {
		return 0, err
	}
	n, refs, err := participantsChanged(ctx, db, want, sql, `RETURNING p.id, p.campaign_id, p.contact_id`, args...)
	if err != nil {
		return 0, err
	}
	return n, st.emitParticipants(ctx, db, team, bookID, events.ParticipantCompleted, ParticipantCompleted, "", refs, now)
}

func participantEvent(teamID, bookID uuid.UUID, typ string, status ParticipantStatus, reason *string, r participantRef, at time.Time) events.Event {
	book := bookID
	return events.Event{Type: typ, TeamID: teamID, BookID: &book, Data: events.ParticipantData{
		ParticipantID: r.ID, CampaignID: r.CampaignID, ContactID: r.ContactID,
		Status: string(status), Reason: reason, OccurredAt: at,
	}}
}

// emitUnsubscribed writes contact.unsubscribed for the contact of the
// token, when wanted.
func (st store) emitUnsubscribed(ctx context.Context, db postgres.DB, t unsubToken, scope string, campaignID *uuid.UUID, source string, now time.Time) error {
	team, want, err := st.wanted(ctx, db, t.BookID, events.ContactUnsubscribed)
	if err != nil || !want {
		return err
	}
	book := t.BookID
	return st.outbox.AppendIn(ctx, db, now, events.Event{Type: events.ContactUnsubscribed, TeamID: team, BookID: &book,
		Data: events.UnsubscribedData{ContactID: t.ContactID, Address: t.Email, Scope: scope, CampaignID: campaignID,
			Source: source, OccurredAt: now.UTC()}})
}
