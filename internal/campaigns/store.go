package campaigns

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
)

// store is the campaigns SQL.
// store holds the package's SQL. outbox, when set, takes the events of
// the changes it makes (store_events.go).
type store struct{ outbox *events.Outbox }

// SQL expressions over a contacts row aliased ct: the display name (names,
// else company) and the address emails go to (the primary one, else the
// first one, else empty).
const (
	contactNameSQL = `COALESCE(NULLIF(btrim(ct.first_name || ' ' || ct.last_name), ''), ct.company)`
	// One entry (the common case) is the answer either way: skip the
	// JSON path, which costs more than the rest of the row.
	contactEmailSQL = `COALESCE(CASE WHEN jsonb_array_length(ct.emails) < 2 THEN ct.emails -> 0 ->> 'address'
		ELSE COALESCE(jsonb_path_query_first(ct.emails, '$[*] ? (@.primary == true).address') #>> '{}', ct.emails -> 0 ->> 'address') END, '')`
	contactPhoneSQL = `COALESCE(CASE WHEN jsonb_array_length(ct.phones) < 2 THEN ct.phones -> 0 ->> 'number'
		ELSE COALESCE(jsonb_path_query_first(ct.phones, '$[*] ? (@.primary == true).number') #>> '{}', ct.phones -> 0 ->> 'number') END, '')`
)

func collect[T any](rows pgx.Rows, err error, scan func(pgx.Row) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
	return out, err
}

func notFound(err error, nf error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return nf
	}
	return err
}

// --- templates ---

const templateColumns = `id, book_id, name, subject, body_html, created_by, created_at, updated_at`

func scanTemplate(row pgx.Row) (Template, error) {
	var t Template
	err := row.Scan(&t.ID, &t.BookID, &t.Name, &t.Subject, &t.BodyHTML, &t.CreatedBy, &t.CreatedAt, &t.UpdatedAt)
	return t, err
}

func (store) templates(ctx context.Context, db postgres.DB, bookID uuid.UUID) ([]Template, error) {
	rows, err := db.Query(ctx, `SELECT `+templateColumns+` FROM email_templates WHERE book_id = $1 ORDER BY lower(name), name, created_at, id`, bookID)
	return collect(rows, err, scanTemplate)
}

func (store) template(ctx context.Context, db postgres.DB, bookID, id uuid.UUID) (Template, error) {
	t, err := scanTemplate(db.QueryRow(ctx, `SELECT `+templateColumns+` FROM email_templates WHERE book_id = $1 AND id = $2`, bookID, id))
	return t, notFound(err, errTemplateNotFound)
}

func (store) insertTemplate(ctx context.Context, db postgres.DB, t Template, now time.Time) (Template, error) {
	out, err := scanTemplate(db.QueryRow(ctx, `
		INSERT INTO email_templates (book_id, name, subject, body_html, created_by, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING `+templateColumns,
		t.BookID, t.Name, t.Subject, t.BodyHTML, t.CreatedBy, now))
	return out, err
}

func (store) updateTemplate(ctx context.Context, db postgres.DB, t Template, now time.Time) (Template, error) {
	out, err := scanTemplate(db.QueryRow(ctx, `
		UPDATE email_templates SET name = $3, subject = $4, body_html = $5, updated_at = $6
		WHERE book_id = $1 AND id = $2 RETURNING `+templateColumns,
		t.BookID, t.ID, t.Name, t.Subject, t.BodyHTML, now))
	return out, notFound(err, errTemplateNotFound)
}

func (store) deleteTemplate(ctx context.Context, db postgres.DB, bookID, id uuid.UUID) error {
	tag, err := db.Exec(ctx, `DELETE FROM email_templates WHERE book_id = $1 AND id = $2`, bookID, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return errTemplateNotFound
	}
	return nil
}

func (store) templateInBook(ctx context.Context, db postgres.DB, bookID, id uuid.UUID) (bool, error) {
	var ok bool
	err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM email_templates WHERE book_id = $1 AND id = $2)`, bookID, id).Scan(&ok)
	return ok, err
}

// --- campaigns ---

const campaignColumns = `c.id, c.book_id, c.name, c.description, c.status, c.audience_segment_id, c.exit_on_segment_leave,
	c.entry_event, c.created_by, c.created_at, c.updated_at`

func scanCampaign(row pgx.Row, extra ...any) (Campaign, error) {
	var c Campaign
	dst := append([]any{&c.ID, &c.BookID, &c.Name, &c.Description, &c.Status, &c.AudienceSegmentID, &c.ExitOnSegmentLeave,
		&c.EntryEvent, &c.CreatedBy, &c.CreatedAt, &c.UpdatedAt}, extra...)
	err := row.Scan(dst...)
	return c, err
}

// campaignRef loads a campaign and the team owning its book.
func (store) campaignRef(ctx context.Context, db postgres.DB, id uuid.UUID) (Campaign, uuid.UUID, error) {
	var teamID uuid.UUID
	c, err := scanCampaign(db.QueryRow(ctx, `
		SELECT `+campaignColumns+`, b.team_id FROM campaigns c JOIN book_teams b ON b.book_id = c.book_id WHERE c.id = $1`, id), &teamID)
	return c, teamID, notFound(err, errCampaignNotFound)
}

func (store) campaigns(ctx context.Context, db postgres.DB, bookID uuid.UUID) ([]CampaignListItem, error) {
	rows, err := db.Query(ctx, `
		SELECT `+campaignColumns+`,
		       (SELECT count(*) FROM campaign_steps s WHERE s.campaign_id = c.id),
		       (SELECT count(*) FROM campaign_participants p WHERE p.campaign_id = c.id AND p.status = 'active')
		FROM campaigns c WHERE c.book_id = $1 ORDER BY c.created_at DESC, c.id`, bookID)
	return collect(rows, err, func(r pgx.Row) (CampaignListItem, error) {
		var it CampaignListItem
		c, err := scanCampaign(r, &it.StepCount, &it.ParticipantCount)
		it.Campaign = c
		return it, err
	})
}

func (store) insertCampaign(ctx context.Context, db postgres.DB, c Campaign, now time.Time) (Campaign, error) {
	out, err := scanCampaign(db.QueryRow(ctx, `
		INSERT INTO campaigns AS c (book_id, name, description, status, audience_segment_id, exit_on_segment_leave,
			created_by, created_at, updated_at, entry_event)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9) RETURNING `+campaignColumns,
		c.BookID, c.Name, c.Description, c.Status, c.AudienceSegmentID, c.ExitOnSegmentLeave, c.CreatedBy, now, c.EntryEvent))
	return out, err
}

func (store) updateCampaign(ctx context.Context, db postgres.DB, c Campaign, now time.Time) (Campaign, error) {
	out, err := scanCampaign(db.QueryRow(ctx, `
		UPDATE campaigns AS c SET name = $2, description = $3, status = $4, audience_segment_id = $5,
			exit_on_segment_leave = $6, updated_at = $7, entry_event = $8
		WHERE c.id = $1 RETURNING `+campaignColumns, c.ID, c.Name, c.Description, c.Status, c.AudienceSegmentID, c.ExitOnSegmentLeave, now,
		c.EntryEvent))
	return out, notFound(err, errCampaignNotFound)
}

func (store) deleteCampaign(ctx context.Context, db postgres.DB, id uuid.UUID) error {
	tag, err := db.Exec(ctx, `DELETE FROM campaigns WHERE id = $1`, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return errCampaignNotFound
	}
	return nil
}

func (store) campaignInBook(ctx context.Context, db postgres.DB, bookID, id uuid.UUID) (bool, error) {
	var ok bool
	err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM campaigns WHERE book_id = $1 AND id = $2)`, bookID, id).Scan(&ok)
	return ok, err
}

// lockCampaignStatus locks the campaign row (share) and returns its status.
func (store) lockCampaignStatus(ctx context.Context, db postgres.DB, id uuid.UUID) (Status, error) {
	var status Status
	err := db.QueryRow(ctx, `SELECT status FROM campaigns WHERE id = $1 FOR SHARE`, id).Scan(&status)
	return status, notFound(err, errCampaignNotFound)
}

// --- steps ---

const stepColumns = `id, campaign_id, step_type, name, sort_order, active, schedule_type, delay_days,
	to_char(fixed_date, 'YYYY-MM-DD'), email_template_id, sender_name, sender_email, trigger_campaign_id, created_at, updated_at,
	` + stepTimingColumns

func scanStep(row pgx.Row) (Step, error) {
	var st Step
	var tm stepTimingRow
	err := row.Scan(append([]any{&st.ID, &st.CampaignID, &st.StepType, &st.Name, &st.SortOrder, &st.Active, &st.ScheduleType,
		&st.DelayDays, &st.FixedDate, &st.EmailTemplateID, &st.SenderName, &st.SenderEmail, &st.TriggerCampaignID,
		&st.CreatedAt, &st.UpdatedAt}, tm.dest(&st)...)...)
	if err == nil {
		tm.apply(&st)
	}
	return st, err
}

func (store) steps(ctx context.Context, db postgres.DB, campaignID uuid.UUID) ([]Step, error) {
	rows, err := db.Query(ctx, `SELECT `+stepColumns+` FROM campaign_steps WHERE campaign_id = $1 ORDER BY sort_order, created_at`, campaignID)
	return collect(rows, err, scanStep)
}

func (store) step(ctx context.Context, db postgres.DB, campaignID, id uuid.UUID, lock bool) (Step, error) {
	q := `SELECT ` + stepColumns + ` FROM campaign_steps WHERE campaign_id = $1 AND id = $2`
	if lock {
		q += ` FOR UPDATE`
	}
	st, err := scanStep(db.QueryRow(ctx, q, campaignID, id))
	return st, notFound(err, errStepNotFound)
}

func (store) stepIDs(ctx context.Context, db postgres.DB, campaignID uuid.UUID) ([]uuid.UUID, error) {
	// The campaign row lock orders this against concurrent appends.
	if _, err := db.Exec(ctx, `SELECT 1 FROM campaigns WHERE id = $1 FOR UPDATE`, campaignID); err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT id FROM campaign_steps WHERE campaign_id = $1`, campaignID)
	return collect(rows, err, func(r pgx.Row) (uuid.UUID, error) {
		var id uuid.UUID
		return id, r.Scan(&id)
	})
}

// insertStep appends the step after the campaign's last one. The campaign
// row lock keeps two concurrent appends from taking the same position.
func (store) insertStep(ctx context.Context, db postgres.DB, st Step, now time.Time) (Step, error) {
	if _, err := db.Exec(ctx, `SELECT 1 FROM campaigns WHERE id = $1 FOR UPDATE`, st.CampaignID); err != nil {
		return Step{}, err
	}
	out, err := scanStep(db.QueryRow(ctx, `
		INSERT INTO campaign_steps (campaign_id, step_type, name, sort_order, active, schedule_type, delay_days,
		                            fixed_date, email_template_id, sender_name, sender_email, trigger_campaign_id, created_at, updated_at,
		                            delay_hours, send_window, condition_if, condition_step_id, variants, ab_test, winner_variant_id)
		VALUES (@campaign_id, @step_type, @name,
		        (SELECT COALESCE(max(sort_order) + 1, 0) FROM campaign_steps WHERE campaign_id = @campaign_id),
		        @active, @schedule_type, @delay_days, @fixed_date::date, @email_template_id, @sender_name,
		        @sender_email, @trigger_campaign_id, @now, @now,
		        @delay_hours, @send_window, @condition_if, @condition_step_id, @variants, @ab_test, @winner_variant_id)
		RETURNING `+stepColumns,
		stepArgs(st, now)))
	return out, err
}

// stepArgs are the named arguments of the step statements: the columns a
// client sets, the campaign and the time of the change.
func stepArgs(st Step, now time.Time) pgx.StrictNamedArgs {
	args := pgx.StrictNamedArgs{
		"campaign_id": st.CampaignID, "step_type": st.StepType, "name": st.Name, "active": st.Active,
		"schedule_type": st.ScheduleType, "delay_days": st.DelayDays, "fixed_date": st.FixedDate,
		"email_template_id": st.EmailTemplateID, "sender_name": st.SenderName, "sender_email": st.SenderEmail,
		"trigger_campaign_id": st.TriggerCampaignID, "now": now,
	}
	return withArgs(args, timingArgs(st))
}

func (store) updateStep(ctx context.Context, db postgres.DB, st Step, now time.Time) (Step, error) {
	// A step's type is fixed at creation.
	args := stepArgs(st, now)
	delete(args, "step_type")
	args["id"] = st.ID
	out, err := scanStep(db.QueryRow(ctx, `
		UPDATE campaign_steps SET name = @name, active = @active, schedule_type = @schedule_type,
		       delay_days = @delay_days, fixed_date = @fixed_date::date, email_template_id = @email_template_id,
		       sender_name = @sender_name, sender_email = @sender_email,
		       trigger_campaign_id = @trigger_campaign_id, updated_at = @now, `+stepTimingSet+`
		WHERE campaign_id = @campaign_id AND id = @id RETURNING `+stepColumns,
		args))
	return out, notFound(err, errStepNotFound)
}

// deleteStep removes the step and closes the gap in sort_order.
func (store) deleteStep(ctx context.Context, db postgres.DB, campaignID, id uuid.UUID) error {
	if _, err := db.Exec(ctx, `SELECT 1 FROM campaigns WHERE id = $1 FOR UPDATE`, campaignID); err != nil {
		return err
	}
	tag, err := db.Exec(ctx, `DELETE FROM campaign_steps WHERE campaign_id = $1 AND id = $2`, campaignID, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return errStepNotFound
	}
	_, err = db.Exec(ctx, `
		UPDATE campaign_steps s SET sort_order = o.pos
		FROM (SELECT id, row_number() OVER (ORDER BY sort_order, created_at) - 1 AS pos
		      FROM campaign_steps WHERE campaign_id = $1) o
		WHERE s.id = o.id AND s.sort_order <> o.pos`, campaignID)
	return err
}

func (store) reorderSteps(ctx context.Context, db postgres.DB, campaignID uuid.UUID, ids []uuid.UUID, now time.Time) error {
	_, err := db.Exec(ctx, `
		UPDATE campaign_steps s SET sort_order = o.pos - 1, updated_at = $3
		FROM unnest($2::uuid[]) WITH ORDINALITY AS o(id, pos)
		WHERE s.campaign_id = $1 AND s.id = o.id`, campaignID, ids, now)
	return err
}

// --- participants ---

// enrollContacts inserts participants for the contacts of the book among
// ids that are not suppressed; existing participants stay as they are.
// Rows go in contact order (and participant ids are time-ordered, see
// migration 00045), so the indexes are written page by page rather than
// at random: the enrollment of a large audience is mostly index upkeep.
func (st store) enrollContacts(ctx context.Context, db postgres.DB, campaignID, bookID uuid.UUID, ids []uuid.UUID, now time.Time, by *uuid.UUID) (int64, error) {
	return st.enrollWith(ctx, db, bookID, now, `
		INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at, enrolled_by)
		SELECT $1, ct.id, $4, $5 FROM contact_records ct
		WHERE ct.id = ANY($3::uuid[]) AND ct.book_id = $2 AND NOT `+suppression.ContactSuppressed+`
		ORDER BY ct.id
		FOR KEY SHARE OF ct
		ON CONFLICT (campaign_id, contact_id) DO NOTHING`, postgres.PlanEachTime, campaignID, bookID, ids, now, by)
}

func (st store) enrollLabel(ctx context.Context, db postgres.DB, campaignID, bookID, labelID uuid.UUID, now time.Time, by *uuid.UUID) (int64, error) {
	return st.enrollWith(ctx, db, bookID, now, `
		INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at, enrolled_by)
		SELECT $1, ct.id, $4, $5 FROM contact_label_members cl JOIN contact_records ct ON ct.id = cl.contact_id
		WHERE cl.label_id = $3 AND ct.book_id = $2 AND NOT `+suppression.ContactSuppressed+`
		ORDER BY ct.id
		FOR KEY SHARE OF ct
		ON CONFLICT (campaign_id, contact_id) DO NOTHING`, campaignID, bookID, labelID, now, by)
}

const participantColumns = `p.id, p.campaign_id, p.contact_id, p.status, p.enrolled_at, p.enrolled_by, p.completed_at, ` +
	contactNameSQL + `, ` + contactEmailSQL

func scanParticipant(row pgx.Row) (Participant, error) {
	var p Participant
	err := row.Scan(&p.ID, &p.CampaignID, &p.ContactID, &p.Status, &p.EnrolledAt, &p.EnrolledBy, &p.CompletedAt, &p.ContactName, &p.ContactEmail)
	return p, err
}

func (store) participants(ctx context.Context, db postgres.DB, campaignID uuid.UUID, pg Page) (Paged[Participant], error) {
	var out Paged[Participant]
	if err := db.QueryRow(ctx, `SELECT count(*) FROM campaign_participants WHERE campaign_id = $1 AND status <> 'removed'`, campaignID).Scan(&out.Total); err != nil {
		return out, err
	}
	rows, err := db.Query(ctx, `
		SELECT `+participantColumns+`
		FROM campaign_participants p JOIN contact_records ct ON ct.id = p.contact_id
		WHERE p.campaign_id = $1 AND p.status <> 'removed'
		ORDER BY p.enrolled_at, p.id LIMIT $2 OFFSET $3`, campaignID, pg.Limit, pg.Offset)
	out.Items, err = collect(rows, err, scanParticipant)
	return out, err
}

func (store) participantStatus(ctx context.Context, db postgres.DB, campaignID, id uuid.UUID) (ParticipantStatus, error) {
	var status ParticipantStatus
	err := db.QueryRow(ctx, `SELECT status FROM campaign_participants WHERE campaign_id = $1 AND id = $2`, campaignID, id).Scan(&status)
	return status, notFound(err, errParticipantMissing)
}

func (st store) removeParticipant(ctx context.Context, db postgres.DB, campaignID, id uuid.UUID, now time.Time) error {
	var found bool
	var removed *uuid.UUID // the contact, when this call removed it
	var bookID uuid.UUID
	err := db.QueryRow(ctx, `
		WITH upd AS (
			UPDATE campaign_participants SET status = 'removed', removed_at = $3
			WHERE campaign_id = $1 AND id = $2 AND status <> 'removed' RETURNING contact_id
		)
		SELECT EXISTS (SELECT 1 FROM upd) OR EXISTS (SELECT 1 FROM campaign_participants WHERE campaign_id = $1 AND id = $2),
		       (SELECT contact_id FROM upd), (SELECT book_id FROM campaigns WHERE id = $1)`,
		campaignID, id, now).Scan(&found, &removed, &bookID)
	if err != nil {
		return err
	}
	if !found {
		return errParticipantMissing
	}
	if removed == nil {
		return nil // removed before: nothing happened now
	}
	team, want, err := st.wanted(ctx, db, bookID, events.ParticipantRemoved)
	if err != nil || !want {
		return err
	}
	return st.emitParticipants(ctx, db, team, bookID, events.ParticipantRemoved, ParticipantRemoved, events.RemovedAPI,
		[]participantRef{{ID: id, CampaignID: campaignID, ContactID: *removed}}, now)
}

func (store) history(ctx context.Context, db postgres.DB, campaignID, participantID uuid.UUID) ([]HistoryItem, error) {
	rows, err := db.Query(ctx, `
		SELECT c.id, s.id, s.name, s.step_type, s.sort_order, c.completed_at, c.result, c.result_detail,
		       c.variant_id, (SELECT v->>'subject' FROM jsonb_array_elements(s.variants) v WHERE v->>'id' = c.variant_id::text)
		FROM campaign_steps s JOIN campaign_step_completions c ON c.step_id = s.id AND c.participant_id = $2
		WHERE s.campaign_id = $1 AND c.result IS NOT NULL
		ORDER BY s.sort_order, c.completed_at`, campaignID, participantID)
	return collect(rows, err, func(r pgx.Row) (HistoryItem, error) {
		var h HistoryItem
		err := r.Scan(&h.ID, &h.StepID, &h.StepName, &h.StepType, &h.SortOrder, &h.CompletedAt, &h.ResultType, &h.ResultDetail,
			&h.VariantID, &h.VariantSubject)
		return h, err
	})
}

// contactRef returns a contact's book and the team owning it.
func (store) contactRef(ctx context.Context, db postgres.DB, id uuid.UUID) (uuid.UUID, uuid.UUID, error) {
	bookID, teamID, ok, err := contacts.Owner(ctx, db, id)
	if err == nil && !ok {
		return uuid.Nil, uuid.Nil, errContactNotFound
	}
	return bookID, teamID, err
}

func (store) contactCampaigns(ctx context.Context, db postgres.DB, contactID uuid.UUID) ([]ContactCampaign, error) {
	rows, err := db.Query(ctx, `
		SELECT p.id, c.id, c.name, c.description, c.status, p.status, p.enrolled_at, p.completed_at
		FROM campaign_participants p JOIN campaigns c ON c.id = p.campaign_id
		WHERE p.contact_id = $1 ORDER BY p.enrolled_at DESC, p.id`, contactID)
	return collect(rows, err, func(r pgx.Row) (ContactCampaign, error) {
		var cc ContactCampaign
		err := r.Scan(&cc.ID, &cc.CampaignID, &cc.CampaignName, &cc.Description, &cc.CampaignStatus, &cc.ParticipantStatus, &cc.EnrolledAt, &cc.CompletedAt)
		return cc, err
	})
}
