package campaigns

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
	"github.com/contactbook/contactbook/internal/tracking"
)

// Campaigns entered by a product event: while a campaign is active and
// its team has the paid add-on, an event named as its entry_event enrolls
// the event's contact (once: a contact that was ever a participant is not
// enrolled again; a suppressed contact is skipped, as in every
// enrollment), and the campaign's immediate steps go out at once, not at
// the next scheduler pass. The event's properties stay on the participant
// for {{event.*}}.

// EntryArgs is the job of one event that enters campaigns: it enrolls
// the contact and runs a turn of each campaign it entered.
type EntryArgs struct {
	EventID    uuid.UUID       `json:"event_id"`
	BookID     uuid.UUID       `json:"book_id"`
	ContactID  uuid.UUID       `json:"contact_id"`
	Name       string          `json:"name"`
	Properties json.RawMessage `json:"properties"`
}

// Kind names the job in river_job.
func (EntryArgs) Kind() string { return "campaign_event_entry" }

// InsertOpts gives the job a few attempts: the enrollment is idempotent.
func (EntryArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 5} }

// normalizeEntryEvent checks a campaign's entry_event ("" clears it).
func normalizeEntryEvent(c *Campaign) error {
	if c.EntryEvent == nil {
		return nil
	}
	name := strings.TrimSpace(*c.EntryEvent)
	if name == "" {
		c.EntryEvent = nil
		return nil
	}
	if err := tracking.CheckName("entry_event", name); err != nil {
		return err
	}
	c.EntryEvent = &name
	return nil
}

// EntrySQL is the SQL test of whether an active campaign of a team with
// the add-on starts on the event named nameExpr in the book bookExpr: a
// statement of package tracking asks it with the event's insert, so the
// usual event (no such campaign) costs no round trip of its own.
func (s *Service) EntrySQL(bookExpr, nameExpr string) string {
	return `EXISTS (SELECT 1 FROM campaigns c JOIN book_teams b ON b.book_id = c.book_id
		WHERE c.book_id = ` + bookExpr + ` AND c.entry_event = ` + nameExpr + ` AND c.status = 'active' AND ` + accounts.AddonActiveSQL("b.team_id") + `)`
}

// EnterOnEvent enqueues, in the event's transaction, the entry of its
// contact into the book's campaigns that start on it (the caller found
// one with EntrySQL; it is asked again here, in the same transaction, so
// a campaign paused meanwhile enters nobody).
func (s *Service) EnterOnEvent(ctx context.Context, tx *postgres.Tx, e tracking.EntryEvent) error {
	var any bool
	err := tx.QueryRow(ctx, `SELECT `+s.EntrySQL("$1", "$2"), e.BookID, e.Name).Scan(&any)
	if err != nil || !any {
		return err
	}
	if s.queue == nil {
		return apperr.New(apperr.Internal, "campaigns: no job queue to enter campaigns on events")
	}
	_, err = s.queue.InsertTx(ctx, tx.Tx, EntryArgs{EventID: e.ID, BookID: e.BookID, ContactID: e.ContactID, Name: e.Name, Properties: e.Properties}, nil)
	return err
}

type entryWorker struct {
	river.WorkerDefaults[EntryArgs]
	rn *Runner
}

// Work enrolls the contact in every campaign of the book that starts on
// the event (one row per campaign and contact: ON CONFLICT keeps the
// first), then runs a turn of each campaign where the contact is an
// active participant so its immediate steps go out now; the claims keep
// every email at most once, whichever pass sends it. A turn this
// instance is already running for the campaign may have passed the new
// participant by: the job comes back a second later.
func (w *entryWorker) Work(ctx context.Context, job *river.Job[EntryArgs]) error {
	rn, a := w.rn, job.Args
	var ids []uuid.UUID
	err := postgres.InTx(ctx, rn.db, func(tx *postgres.Tx) error {
		rows, err := tx.Query(ctx, `
			WITH c AS (
				SELECT c.id FROM campaigns c JOIN book_teams b ON b.book_id = c.book_id
				WHERE c.book_id = $1 AND c.entry_event = $2 AND c.status = 'active' AND `+accounts.AddonActiveSQL("b.team_id")+`
				ORDER BY c.id
				FOR KEY SHARE OF c
			),
			ins AS (
				INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at, entry_properties)
				SELECT c.id, ct.id, $4, $5 FROM c, contact_records ct
				WHERE ct.id = $3 AND ct.book_id = $1 AND NOT `+suppression.ContactSuppressed+`
				ON CONFLICT (campaign_id, contact_id) DO NOTHING
				RETURNING campaign_id
			)
			SELECT c.id FROM c
			WHERE EXISTS (SELECT 1 FROM ins WHERE ins.campaign_id = c.id)
			   OR EXISTS (SELECT 1 FROM campaign_participants p WHERE p.campaign_id = c.id AND p.contact_id = $3 AND p.status = 'active')`,
			a.BookID, a.Name, a.ContactID, rn.now(), a.Properties)
		if err != nil {
			return err
		}
		ids, err = collect(rows, nil, func(r pgx.Row) (uuid.UUID, error) {
			var id uuid.UUID
			return id, r.Scan(&id)
		})
		return err
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		for {
			ran, unfinished, err := rn.entryTurn(ctx, id)
			switch {
			case apperr.Is(err, apperr.InvalidStatus) || apperr.Is(err, apperr.AddonRequired) || apperr.Is(err, apperr.NotFound):
				unfinished = false
			case err != nil:
				return err
			case !ran:
				return river.JobSnooze(time.Second)
			}
			if !unfinished || ctx.Err() != nil {
				break
			}
		}
	}
	return nil
}

// entryTurn runs one turn of the campaign. When this runner is
// processing it already, it waits for that pass to end and then makes its
// own (see runTurn): the pass in progress may have read the participants
// before this enrollment. ran is false only when ctx ended first.
func (rn *Runner) entryTurn(ctx context.Context, campaignID uuid.UUID) (ran, unfinished bool, err error) {
	if err := rn.claimCampaign(ctx, campaignID); err != nil {
		return false, false, nil
	}
	defer rn.releaseCampaign(campaignID)
	unfinished, err = rn.processLogged(ctx, campaignID, "event", newTurn(rn.opts.TurnParticipants, rn.opts.TurnTime))
	return true, unfinished, err
}
