package campaigns

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
)

// claimParams is one claim: up to Limit due participants of a step.
type claimParams struct {
	CampaignID uuid.UUID
	BookID     uuid.UUID
	StepID     uuid.UUID
	After      uuid.UUID  // cursor: only participants with a greater id
	Cutoff     *time.Time // delay steps: enrolled at or before; nil for no bound
	Earlier    []uuid.UUID
	Limit      int
	ClaimID    uuid.UUID
	MaxTries   int
	Now        time.Time
	LeaseUntil time.Time
	// TokenHashes are SHA-256 hashes of fresh unsubscribe tokens, used in
	// order for the claimed recipients that will get an email; nil for
	// steps that send nothing.
	TokenHashes [][]byte
	CustomKeys  []string
}

// claimedRow is one claimed participant with what sending needs.
type claimedRow struct {
	CompletionID  uuid.UUID
	ParticipantID uuid.UUID
	ContactID     uuid.UUID
	Tries         int
	FirstName     string
	LastName      string
	Company       string
	JobTitle      string
	Website       string
	Birthday      string
	Email         string
	Phone         string
	Suppressed    bool
	Custom        map[string]string
	Ordinal       int        // 1-based: which token hash it got
	TokenID       *uuid.UUID // nil when no email goes to it
}

// claimDue claims due participants of a step in one statement: it locks
// the due participant rows (skipping rows another processor holds), writes
// or re-arms their completion rows as claims with a lease, stores the
// unsubscribe tokens of the emails about to be sent, and returns the
// contacts' data. The unique (participant, step) key with the conditional
// upsert is what makes a claim exclusive: a row that is done, claimed or
// waiting for its retry time is never claimed again. last is the greatest
// participant id considered (the next cursor); uuid.Nil when none was due.
func (store) claimDue(ctx context.Context, db postgres.DB, p claimParams) (rows []claimedRow, last uuid.UUID, err error) {
	if p.TokenHashes == nil {
		p.TokenHashes = [][]byte{}
	}
	if p.CustomKeys == nil {
		p.CustomKeys = []string{}
	}
	if p.Earlier == nil {
		p.Earlier = []uuid.UUID{}
	}
	res, err := db.Query(ctx, `
		WITH due AS (
			SELECT p.id, p.contact_id
			FROM campaign_participants p
			WHERE p.campaign_id = $1 AND p.status = 'active' AND p.id > $3
			  AND ($4::timestamptz IS NULL OR p.enrolled_at <= $4)
			  AND EXISTS (SELECT 1 FROM campaigns cp WHERE cp.id = $1 AND cp.status = 'active')
			  AND NOT EXISTS (
			      SELECT 1 FROM unnest($5::uuid[]) AS e(step_id)
			      WHERE NOT EXISTS (SELECT 1 FROM campaign_step_completions d
			                        WHERE d.participant_id = p.id AND d.step_id = e.step_id AND d.result IS NOT NULL))
			  AND NOT EXISTS (
			      SELECT 1 FROM campaign_step_completions d
			      WHERE d.participant_id = p.id AND d.step_id = $2
			        AND (d.result IS NOT NULL OR d.lease_until IS NOT NULL OR d.retry_at > $9))
			ORDER BY p.id
			LIMIT $6
			FOR UPDATE OF p SKIP LOCKED
		),
		claimed AS (
			INSERT INTO campaign_step_completions AS c (participant_id, step_id, campaign_id, claim_id, claimed_at, lease_until, tries)
			SELECT d.id, $2, $1, $7, $9, $10, 1 FROM due d
			ON CONFLICT (participant_id, step_id) DO UPDATE
				SET claim_id = EXCLUDED.claim_id, claimed_at = EXCLUDED.claimed_at,
				    lease_until = EXCLUDED.lease_until, tries = c.tries + 1, retry_at = NULL
				WHERE c.result IS NULL AND c.lease_until IS NULL AND c.tries < $8
				  AND (c.retry_at IS NULL OR c.retry_at <= $9)
			RETURNING c.id, c.participant_id, c.tries
		),
		rcpt AS (
			SELECT cl.id AS completion_id, cl.participant_id, cl.tries, ct.id AS contact_id,
			       ct.first_name, ct.last_name, ct.company, ct.job_title, ct.website,
			       COALESCE(to_char(ct.birthday, 'YYYY-MM-DD'), '') AS birthday,
			       `+contactEmailSQL+` AS email, `+contactPhoneSQL+` AS phone,
			       ct.suppressed_at IS NOT NULL AS suppressed,
			       CASE WHEN cardinality($13::text[]) > 0 THEN
			           (SELECT jsonb_object_agg(fd.key, v.value)
			            FROM contact_field_values v JOIN field_definitions fd ON fd.id = v.field_id
			            WHERE v.contact_id = ct.id AND fd.key = ANY($13::text[]))
			       END AS custom,
			       row_number() OVER (ORDER BY cl.participant_id) AS n
			FROM claimed cl JOIN due d ON d.id = cl.participant_id JOIN contacts ct ON ct.id = d.contact_id
		),
		tok AS (
			INSERT INTO unsubscribe_tokens (token_hash, contact_id, book_id, campaign_id, participant_id, step_id, email, created_at)
			SELECT h.hash, r.contact_id, $11, $1, r.participant_id, $2, r.email, $9
			FROM rcpt r JOIN unnest($12::bytea[]) WITH ORDINALITY AS h(hash, n) ON h.n = r.n
			WHERE r.email <> '' AND NOT r.suppressed
			RETURNING id, participant_id
		)
		SELECT (SELECT d.id FROM due d ORDER BY d.id DESC LIMIT 1),
		       r.completion_id, r.participant_id, r.contact_id, COALESCE(r.tries, 0),
		       COALESCE(r.first_name, ''), COALESCE(r.last_name, ''), COALESCE(r.company, ''),
		       COALESCE(r.job_title, ''), COALESCE(r.website, ''), COALESCE(r.birthday, ''),
		       COALESCE(r.email, ''), COALESCE(r.phone, ''), COALESCE(r.suppressed, false),
		       r.custom, COALESCE(r.n, 0), t.id
		FROM (SELECT 1) one
		LEFT JOIN rcpt r ON true
		LEFT JOIN tok t ON t.participant_id = r.participant_id`,
		p.CampaignID, p.StepID, p.After, p.Cutoff, p.Earlier, p.Limit, p.ClaimID, p.MaxTries,
		p.Now, p.LeaseUntil, p.BookID, p.TokenHashes, p.CustomKeys)
	if err != nil {
		return nil, uuid.Nil, postgres.Translate(err)
	}
	defer res.Close()
	for res.Next() {
		var (
			lastID, completionID, participantID, contactID *uuid.UUID
			r                                              claimedRow
			custom                                         []byte
		)
		if err := res.Scan(&lastID, &completionID, &participantID, &contactID, &r.Tries,
			&r.FirstName, &r.LastName, &r.Company, &r.JobTitle, &r.Website, &r.Birthday,
			&r.Email, &r.Phone, &r.Suppressed, &custom, &r.Ordinal, &r.TokenID); err != nil {
			return nil, uuid.Nil, postgres.Translate(err)
		}
		if lastID != nil {
			last = *lastID
		}
		if completionID == nil {
			continue // nothing claimed: the one marker row
		}
		r.CompletionID, r.ParticipantID, r.ContactID = *completionID, *participantID, *contactID
		if len(custom) > 0 {
			if err := json.Unmarshal(custom, &r.Custom); err != nil {
				return nil, uuid.Nil, err
			}
		}
		rows = append(rows, r)
	}
	return rows, last, postgres.Translate(res.Err())
}

// outcome is what happened to one claimed row. Result "" means "retry
// later" (transient provider error with tries left).
type outcome struct {
	CompletionID uuid.UUID
	Result       string
	Detail       string
	MessageID    string // the provider's id of the request that carried it
}

// sentEmail is one email the provider accepted, for the contact's
// interactions.
type sentEmail struct {
	ContactID     uuid.UUID
	ParticipantID uuid.UUID
	Address       string
	Subject       string
	TokenID       uuid.UUID
	MessageID     string
}

// recordParams records the outcomes of one claim.
type recordParams struct {
	ClaimID      uuid.UUID
	Outcomes     []outcome
	Now          time.Time
	RetryAt      time.Time
	ActiveSteps  []uuid.UUID
	StepID       uuid.UUID
	StepName     string
	CampaignID   uuid.UUID
	CampaignName string
	Sent         []sentEmail
}

// recordOutcomes writes the outcomes of one claim in one statement: the
// completion rows (final, or re-armed for a retry), the participants that
// are now complete, and one interaction per sent email. It returns how
// many participants completed.
func (store) recordOutcomes(ctx context.Context, db postgres.DB, p recordParams) (int, error) {
	ids := make([]uuid.UUID, len(p.Outcomes))
	results := make([]string, len(p.Outcomes))
	details := make([]string, len(p.Outcomes))
	msgIDs := make([]string, len(p.Outcomes))
	for i, o := range p.Outcomes {
		ids[i], results[i], details[i], msgIDs[i] = o.CompletionID, o.Result, o.Detail, o.MessageID
	}
	contacts := make([]uuid.UUID, len(p.Sent))
	participants := make([]uuid.UUID, len(p.Sent))
	addresses := make([]string, len(p.Sent))
	subjects := make([]string, len(p.Sent))
	tokens := make([]uuid.UUID, len(p.Sent))
	sentIDs := make([]string, len(p.Sent))
	for i, s := range p.Sent {
		contacts[i], participants[i], addresses[i], subjects[i], tokens[i], sentIDs[i] =
			s.ContactID, s.ParticipantID, s.Address, s.Subject, s.TokenID, s.MessageID
	}
	var updated, completed int
	err := db.QueryRow(ctx, `
		WITH r AS (
			SELECT * FROM unnest($2::uuid[], $3::text[], $4::text[], $7::text[]) AS r(id, result, detail, message_id)
		),
		upd AS (
			UPDATE campaign_step_completions c
			SET result = NULLIF(r.result, ''),
			    result_detail = r.detail,
			    completed_at = CASE WHEN r.result = '' THEN NULL ELSE $5::timestamptz END,
			    retry_at = CASE WHEN r.result = '' THEN $6::timestamptz END,
			    lease_until = NULL,
			    provider_message_id = CASE WHEN r.result = 'success' THEN r.message_id ELSE c.provider_message_id END
			FROM r WHERE c.id = r.id AND c.claim_id = $1
			RETURNING c.participant_id, c.result
		),
		fin AS (
			UPDATE campaign_participants p SET status = 'completed', completed_at = $5
			FROM upd
			WHERE upd.result IS NOT NULL AND p.id = upd.participant_id AND p.status = 'active'
			  AND NOT EXISTS (
			      SELECT 1 FROM unnest($8::uuid[]) AS s(step_id)
			      WHERE s.step_id <> $9 AND NOT EXISTS (
			          SELECT 1 FROM campaign_step_completions d
			          WHERE d.participant_id = p.id AND d.step_id = s.step_id AND d.result IS NOT NULL))
			RETURNING 1
		),
		ins AS (
			INSERT INTO interactions (contact_id, kind, detail, occurred_at)
			SELECT x.contact_id, 'campaign_email',
			       jsonb_build_object('campaign_id', $10::uuid, 'campaign_name', $11::text,
			                          'step_id', $9::uuid, 'step_name', $12::text,
			                          'participant_id', x.participant_id, 'address', x.address, 'subject', x.subject,
			                          'unsubscribe_token_id', x.token_id, 'provider_message_id', x.message_id),
			       $5
			FROM unnest($13::uuid[], $14::uuid[], $15::text[], $16::text[], $17::uuid[], $18::text[])
			     AS x(contact_id, participant_id, address, subject, token_id, message_id)
			-- interactions has no foreign key: holding the contact keeps a
			-- concurrent delete from leaving an orphan behind.
			JOIN contacts ct ON ct.id = x.contact_id
			FOR KEY SHARE OF ct
			RETURNING 1
		)
		SELECT (SELECT count(*) FROM upd), (SELECT count(*) FROM fin), (SELECT count(*) FROM ins)`,
		p.ClaimID, ids, results, details, p.Now, p.RetryAt, msgIDs, p.ActiveSteps, p.StepID,
		p.CampaignID, p.CampaignName, p.StepName, contacts, participants, addresses, subjects, tokens, sentIDs,
	).Scan(&updated, &completed, new(int))
	return completed, postgres.Translate(err)
}

// releaseClaim gives back a claim whose emails were certainly not sent
// (the processor stopped before sending): the rows become claimable again
// and the attempt does not count.
func (store) releaseClaim(ctx context.Context, db postgres.DB, claimID uuid.UUID) error {
	_, err := db.Exec(ctx, `
		UPDATE campaign_step_completions SET lease_until = NULL, claim_id = NULL, tries = greatest(tries - 1, 0)
		WHERE claim_id = $1 AND result IS NULL`, claimID)
	return postgres.Translate(err)
}

// reapExpired records claims whose lease ran out without an answer as
// failed: the email may or may not have gone out, and at most once wins.
func (store) reapExpired(ctx context.Context, db postgres.DB, campaignID uuid.UUID, now time.Time) (int64, error) {
	tag, err := db.Exec(ctx, `
		UPDATE campaign_step_completions
		SET result = 'failed', result_detail = $3, completed_at = $2, lease_until = NULL
		WHERE campaign_id = $1 AND result IS NULL AND lease_until < $2`, campaignID, now, DetailOutcomeUnknown)
	return tag.RowsAffected(), postgres.Translate(err)
}

// completeParticipants marks every active participant completed whose
// active steps all have a completion record. A campaign without active
// steps completes nobody: steps added later still reach its participants.
func (store) completeParticipants(ctx context.Context, db postgres.DB, campaignID uuid.UUID, activeSteps []uuid.UUID, now time.Time) (int64, error) {
	if len(activeSteps) == 0 {
		return 0, nil
	}
	tag, err := db.Exec(ctx, `
		UPDATE campaign_participants p SET status = 'completed', completed_at = $3
		WHERE p.campaign_id = $1 AND p.status = 'active'
		  AND NOT EXISTS (
		      SELECT 1 FROM unnest($2::uuid[]) AS s(step_id)
		      WHERE NOT EXISTS (SELECT 1 FROM campaign_step_completions d
		                        WHERE d.participant_id = p.id AND d.step_id = s.step_id AND d.result IS NOT NULL))`,
		campaignID, activeSteps, now)
	return tag.RowsAffected(), postgres.Translate(err)
}

// enrollTriggered enrolls contacts into a trigger step's target campaign;
// suppressed contacts and existing participants are left out.
func (store) enrollTriggered(ctx context.Context, db postgres.DB, targetID uuid.UUID, contactIDs []uuid.UUID, now time.Time) error {
	_, err := db.Exec(ctx, `
		INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at)
		SELECT $1, ct.id, $3 FROM contacts ct
		WHERE ct.id = ANY($2::uuid[]) AND ct.suppressed_at IS NULL
		ON CONFLICT (campaign_id, contact_id) DO NOTHING`, targetID, contactIDs, now)
	return postgres.Translate(err)
}

// bookName is the name of a book (the book_name merge field).
func (store) bookName(ctx context.Context, db postgres.DB, bookID uuid.UUID) (string, error) {
	var name string
	err := db.QueryRow(ctx, `SELECT name FROM books WHERE id = $1`, bookID).Scan(&name)
	return name, postgres.Translate(err)
}

// runnableCampaigns lists the active campaigns of teams with the paid
// add-on: what the scheduler processes.
func (store) runnableCampaigns(ctx context.Context, db postgres.DB) ([]uuid.UUID, error) {
	rows, err := db.Query(ctx, `
		SELECT c.id FROM campaigns c
		JOIN books b ON b.id = c.book_id
		JOIN teams t ON t.id = b.team_id
		WHERE c.status = 'active' AND t.campaign_addon = 'active'
		ORDER BY c.created_at, c.id`)
	return collect(rows, err, func(r pgx.Row) (uuid.UUID, error) {
		var id uuid.UUID
		return id, r.Scan(&id)
	})
}
