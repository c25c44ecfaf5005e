package campaigns

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/delivery"
	"github.com/contactbook/contactbook/internal/mailmerge"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
)

// claimParams is one claim: up to Limit due participants of a step.
type claimParams struct {
	CampaignID uuid.UUID
	StepID     uuid.UUID
	After      uuid.UUID  // cursor: only participants of contacts with a greater id
	Upto       *uuid.UUID // and, when set, not above this contact id
	Cutoff     *time.Time // delay steps: enrolled at or before; nil for no bound
	Earlier    []uuid.UUID
	Limit      int
	ClaimID    uuid.UUID
	MaxTries   int
	Now        time.Time
	LeaseUntil time.Time
	// TokenHashes are SHA-256 hashes of fresh unsubscribe token secrets,
	// one per candidate in contact order; the rows of recipients an email
	// will go to keep theirs. Nil for steps that send nothing.
	TokenHashes [][]byte
	CustomKeys  []string
	// Window, when the step has one, holds the candidates outside it
	// (until it opens in their zone) instead of claiming them.
	Window *claimWindow
	// Condition, when the step has one, is read for every claimed row
	// (claimedRow.ConditionMet); a row whose condition fails gets no
	// token: nothing is sent to it.
	Condition *Condition
	// Test, for a step with variants, assigns them (claimedRow.VariantID).
	Test *claimTest
}

// claimWindow is a send window as the claim reads it.
type claimWindow struct {
	days       []int32
	start, end int
	defaultTZ  string
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
	// SuppressedReason is the reason of the suppression in force for
	// Email ("" when none).
	SuppressedReason string
	Custom           map[string]string
	Ordinal          int  // 1-based: which token secret it got
	HasToken         bool // an email goes to it and its token hash is stored
	ConditionMet     bool // the step's condition holds (true without one)
	// VariantID is the A/B variant the row is sent with (nil: no variants).
	VariantID *uuid.UUID
	// Event holds the properties of the event that entered the
	// participant into the campaign ({{event.*}}; nil for none).
	Event map[string]string
}

// claimDue claims due participants of a step in one statement: it locks
// the due participant rows (skipping rows another processor holds) and
// the step row, writes or re-arms their completion rows as claims with a
// lease and the hash of the unsubscribe token secret of the email about
// to be sent, records the claim for the lease reaper, and returns the contacts'
// data. The primary key (participant, step) with the conditional upsert is
// what makes a claim exclusive: a row that is done, claimed or waiting for
// its retry time is never claimed again. last is the greatest contact id
// considered (the next cursor); uuid.Nil when nobody was due.
// Who is due is dueParticipant (which says how its plan stays bounded);
// who of them is held by a send window or an A/B test rather than
// claimed, and which variant a claimed row gets, is claimTimingCTEs.
func (store) claimDue(ctx context.Context, db postgres.DB, p claimParams) (rows []claimedRow, last uuid.UUID, held int, err error) {
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
		WITH stp AS (
			SELECT s.id FROM campaign_steps s JOIN campaigns cp ON cp.id = s.campaign_id
			WHERE s.id = @step_id AND s.campaign_id = @campaign_id AND s.active AND cp.status = 'active'
			FOR KEY SHARE OF s
		),
		due AS (
			SELECT p.id, p.contact_id, p.entry_properties
			FROM campaign_participants p
			WHERE p.contact_id > @after AND (@upto::uuid IS NULL OR p.contact_id <= @upto)
			  AND EXISTS (SELECT 1 FROM stp) AND `+dueParticipant+`
			ORDER BY p.contact_id
			LIMIT @limit
			FOR UPDATE OF p SKIP LOCKED
		),
		cand AS (
			SELECT d.id AS participant_id, ct.id AS contact_id,
			       ct.first_name, ct.last_name, ct.company, ct.job_title, ct.website,
			       COALESCE(to_char(ct.birthday, 'YYYY-MM-DD'), '') AS birthday,
			       `+contactEmailSQL+` AS email, `+contactPhoneSQL+` AS phone,
			       `+suppression.ContactSuppressed+` AS suppressed,
			       `+suppression.ReasonSQL("ct.book_id", "lower("+contactEmailSQL+")")+` AS suppressed_reason,
			       CASE WHEN cardinality(@custom_keys::text[]) > 0 THEN
			           (SELECT jsonb_object_agg(fd.key, v.value)
			            FROM contact_custom_values v JOIN field_keys fd ON fd.id = v.field_id
			            WHERE v.contact_id = ct.id AND fd.key = ANY(@custom_keys::text[]))
			       END AS custom,
			       row_number() OVER (ORDER BY d.contact_id) AS n,
			       COALESCE(ct.time_zone, @default_tz::text) AS tz,
			       (@cond_step::uuid IS NULL OR `+delivery.EmailHeardSQL("d.id", "@cond_step::uuid", "@cond_kind::text")+` = @cond_heard::bool) AS cond_met,
			       d.entry_properties
			FROM due d JOIN contact_records ct ON ct.id = d.contact_id
		),
		`+claimTimingCTEs+`,
		claimed AS (
			INSERT INTO campaign_step_completions AS c
			       (participant_id, step_id, campaign_id, claim_id, claimed_at, lease_until, tries, token_hash, variant_id)
			SELECT k.participant_id, @step_id, @campaign_id, @claim_id, @now, @lease_until, 1,
			       CASE WHEN k.email <> '' AND NOT k.suppressed AND k.suppressed_reason IS NULL AND k.cond_met THEN h.hash END,
			       COALESCE(kp.variant_id, a.variant_id)
			FROM cand k LEFT JOIN unnest(@token_hashes::bytea[]) WITH ORDINALITY AS h(hash, n) ON h.n = k.n
			LEFT JOIN kept kp ON kp.participant_id = k.participant_id
			LEFT JOIN assigned a ON a.participant_id = k.participant_id
			WHERE NOT EXISTS (SELECT 1 FROM shut s WHERE s.participant_id = k.participant_id)
			  AND (cardinality(@variant_ids::uuid[]) = 0 OR kp.variant_id IS NOT NULL OR a.variant_id IS NOT NULL)
			ON CONFLICT (step_id, participant_id) DO UPDATE
				SET claim_id = EXCLUDED.claim_id, claimed_at = EXCLUDED.claimed_at, lease_until = EXCLUDED.lease_until,
				    tries = c.tries + 1, retry_at = NULL, token_hash = EXCLUDED.token_hash,
				    variant_id = COALESCE(c.variant_id, EXCLUDED.variant_id)
				WHERE c.result IS NULL AND c.lease_until IS NULL AND c.tries < @max_tries
				  AND (c.retry_at IS NULL OR c.retry_at <= @now)
			RETURNING c.id, c.participant_id, c.tries, c.token_hash IS NOT NULL AS has_token, c.variant_id
		),
		claim AS (
			INSERT INTO campaign_claims (id, campaign_id, step_id, lease_until, participant_ids)
			SELECT @claim_id, @campaign_id, @step_id, @lease_until, array_agg(participant_id) FROM claimed HAVING count(*) > 0
		)
		-- Three kinds of rows, joined in Go by participant: one marker
		-- (the cursor and the count held), the candidates' data, and the
		-- claimed rows. Joining claimed to cand here would leave the join
		-- method to the planner's estimate of a new campaign's due rows,
		-- which statistics taken before its participants existed put at
		-- one: a nested loop rescanning every candidate for each claimed
		-- row, a second per claim of 1,000.
		SELECT 0, (SELECT d.contact_id FROM due d ORDER BY d.contact_id DESC LIMIT 1), NULL::uuid, (SELECT count(*) FROM held)::int,
		       NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text,
		       NULL::bool, NULL::text, NULL::jsonb, NULL::bool, NULL::uuid, NULL::jsonb
		UNION ALL
		SELECT 1, k.participant_id, k.contact_id, k.n::int,
		       k.first_name, k.last_name, k.company, k.job_title, k.website, k.birthday, k.email, k.phone,
		       k.suppressed, k.suppressed_reason, k.custom, k.cond_met, NULL, k.entry_properties
		FROM cand k
		UNION ALL
		SELECT 2, cl.participant_id, cl.id, cl.tries, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
		       NULL, NULL, NULL, cl.has_token, cl.variant_id, NULL
		FROM claimed cl`,
		// Planned for each claim's values (see docs/send-path-plans.md):
		// the generic plan cannot tell this campaign from the others, and
		// under statistics of a book's first campaign it walked the index
		// of every campaign's participants by contact.
		postgres.PlanEachTime, withArgs(pgx.StrictNamedArgs{
			"campaign_id": p.CampaignID, "step_id": p.StepID, "after": p.After, "cutoff": p.Cutoff,
			"earlier": p.Earlier, "limit": p.Limit, "claim_id": p.ClaimID, "max_tries": p.MaxTries,
			"now": p.Now, "lease_until": p.LeaseUntil, "token_hashes": p.TokenHashes, "custom_keys": p.CustomKeys,
			"upto": p.Upto,
		}, claimTimingArgs(p)))
	if err != nil {
		return nil, uuid.Nil, 0, err
	}
	defer res.Close()
	var (
		cands   = map[uuid.UUID]claimedRow{}
		claimed []claimedRow
	)
	for res.Next() {
		var (
			kind                  int
			id1, id2              *uuid.UUID
			num                   *int
			first, lastName, comp *string
			job, web, bday        *string
			email, phone, reason  *string
			suppressed, flag      *bool
			custom, entry         []byte
			variant               *uuid.UUID
		)
		if err := res.Scan(&kind, &id1, &id2, &num, &first, &lastName, &comp, &job, &web, &bday,
			&email, &phone, &suppressed, &reason, &custom, &flag, &variant, &entry); err != nil {
			return nil, uuid.Nil, 0, err
		}
		switch kind {
		case 0: // the marker
			if id1 != nil {
				last = *id1
			}
			held = deref(num)
		case 1: // a candidate's data
			r := claimedRow{
				ParticipantID: *id1, ContactID: *id2, Ordinal: deref(num),
				FirstName: deref(first), LastName: deref(lastName), Company: deref(comp), JobTitle: deref(job),
				Website: deref(web), Birthday: deref(bday), Email: deref(email), Phone: deref(phone),
				Suppressed: deref(suppressed), SuppressedReason: deref(reason), ConditionMet: flag == nil || *flag,
			}
			if len(custom) > 0 {
				if err := json.Unmarshal(custom, &r.Custom); err != nil {
					return nil, uuid.Nil, 0, err
				}
			}
			if len(entry) > 0 {
				r.Event = mailmerge.Flatten(entry)
			}
			cands[r.ParticipantID] = r
		case 2: // a claimed row
			claimed = append(claimed, claimedRow{ParticipantID: *id1, CompletionID: *id2, Tries: deref(num),
				HasToken: deref(flag), VariantID: variant})
		}
	}
	if err := res.Err(); err != nil {
		return nil, uuid.Nil, 0, err
	}
	rows = make([]claimedRow, 0, len(claimed))
	for _, c := range claimed {
		r := cands[c.ParticipantID] // every claimed row is a candidate
		r.CompletionID, r.Tries, r.HasToken, r.VariantID = c.CompletionID, c.Tries, c.HasToken, c.VariantID
		rows = append(rows, r)
	}
	// In contact order, as the candidates were numbered.
	slices.SortFunc(rows, func(a, b claimedRow) int { return a.Ordinal - b.Ordinal })
	return rows, last, held, nil
}

// deref is the value p points at, or the zero value for nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// otherSteps is steps without one of them.
func otherSteps(steps []uuid.UUID, without uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(steps))
	for _, id := range steps {
		if id != without {
			out = append(out, id)
		}
	}
	return out
}

// outcome is what happened to one claimed row. Result "" means "retry
// later" (transient provider error with tries left). A success of a row
// with a token is a sent email: ContactID, Address, Subject and MessageID
// go into the contact's interactions.
type outcome struct {
	ParticipantID uuid.UUID
	Result        string
	Detail        string
	MessageID     string // the provider's id of the request that carried it
	ContactID     uuid.UUID
	Address       string
	Subject       string
}

// recordParams records the outcomes of one claim.
type recordParams struct {
	ClaimID     uuid.UUID
	Outcomes    []outcome
	Now         time.Time
	RetryAt     time.Time
	ActiveSteps []uuid.UUID
	StepID      uuid.UUID
	CampaignID  uuid.UUID
	// PerRecipientIDs: each email has a message id of its own (SMTP,
	// SES), recorded where the provider's feedback is matched by it.
	PerRecipientIDs bool
}

// recordOutcomes writes the outcomes of one claim in one statement: the
// completion rows (final, or re-armed for a retry), the end of the claim,
// the participants that are now complete, one interaction per sent
// email, and the book's count of emails sent that day. It returns how many participants completed.
func (store) recordOutcomes(ctx context.Context, db postgres.DB, p recordParams) (int, error) {
	n := len(p.Outcomes)
	pids, contacts := make([]uuid.UUID, n), make([]uuid.UUID, n)
	results, details, msgIDs := make([]string, n), make([]string, n), make([]string, n)
	addresses, subjects := make([]string, n), make([]string, n)
	for i, o := range p.Outcomes {
		pids[i], contacts[i], results[i], details[i] = o.ParticipantID, o.ContactID, o.Result, o.Detail
		msgIDs[i], addresses[i], subjects[i] = o.MessageID, o.Address, o.Subject
	}
	var completed int
	err := db.QueryRow(ctx, `
		WITH r AS (
			SELECT * FROM unnest(@participant_ids::uuid[], @results::text[], @details::text[], @message_ids::text[],
			                     @contact_ids::uuid[], @addresses::text[], @subjects::text[])
			       AS r(participant_id, result, detail, message_id, contact_id, address, subject)
		),
		upd AS (
			UPDATE campaign_step_completions c
			SET result = NULLIF(r.result, ''),
			    result_detail = r.detail,
			    completed_at = CASE WHEN r.result = '' THEN NULL ELSE @now::timestamptz END,
			    retry_at = CASE WHEN r.result = '' THEN @retry_at::timestamptz END,
			    lease_until = NULL,
			    provider_message_id = CASE WHEN r.result = 'success' THEN r.message_id ELSE c.provider_message_id END
			-- Each row is found by its own lookup of the key (the LIMIT keeps
			-- the lookup a subquery the planner cannot flatten into a join),
			-- then updated by its address. Joined on the key instead, the
			-- plan read every completion of the step so far whenever
			-- statistics (taken before the step had any) said it had few:
			-- each claim's record grew with the campaign. The claim is
			-- tested in the lookup, not on c: a filter on c that statistics
			-- call selective (one row of the claim) made c the outer side,
			-- rescanning every lookup for each of its rows. Nothing else
			-- writes a claimed row while its send is in flight but the
			-- reaper, once the lease is over, which keeps the claim: the
			-- recorded result then replaces its "outcome unknown", as it
			-- did when the claim was tested on c.
			FROM r CROSS JOIN LATERAL (
			         SELECT x.ctid AS at FROM campaign_step_completions x
			         WHERE x.step_id = @step_id AND x.participant_id = r.participant_id AND x.claim_id = @claim_id
			         LIMIT 1) k
			WHERE c.ctid = k.at
			RETURNING c.participant_id, c.id, c.result, c.token_hash IS NOT NULL AS emailed,
			          r.contact_id, r.address, r.subject, r.message_id
		),
		done AS (
			DELETE FROM campaign_claims WHERE id = @claim_id
		),
		-- The participants are reached through the primary key, the
		-- recorded ids an array the planner takes for a handful of keys
		-- whatever the statistics say. Joined to upd instead, a plan made
		-- after ANALYZE saw every participant completed expected one
		-- active row: it scanned every active participant and compared
		-- each with every recorded row (2-9 s a claim of 1,000 at 20,000).
		fin AS (
			UPDATE campaign_participants p SET status = 'completed', completed_at = @now
			WHERE p.id = ANY (ARRAY(SELECT u.participant_id FROM upd u WHERE u.result IS NOT NULL))
			  AND p.status = 'active'
			  AND (cardinality(@other_steps::uuid[]) = 0 OR NOT EXISTS (
			      SELECT 1 FROM unnest(@other_steps::uuid[]) AS s(step_id)
			      WHERE NOT EXISTS (
			          SELECT 1 FROM campaign_step_completions d
			          WHERE d.step_id = s.step_id AND d.participant_id = p.id AND d.result IS NOT NULL)))
			RETURNING 1
		),
		-- interactions has no foreign key. Only emails whose completion
		-- row this statement updated (and so holds locked) are written:
		-- deleting their contact cascades to that row through the
		-- participant and waits for this transaction, and the contact's
		-- interactions are deleted after it; a contact deleted before
		-- leaves no completion row to update and so no interaction.
		-- The detail is kept small: building JSON is most of this
		-- statement's cost. unsubscribe_token_id is the completion row's
		-- id: the row holds the email's token.
		ins AS (
			INSERT INTO interactions (contact_id, kind, detail, occurred_at)
			SELECT u.contact_id, 'campaign_email',
			       jsonb_build_object('campaign_id', @campaign_id::uuid, 'step_id', @step_id::uuid, 'participant_id', u.participant_id,
			                          'unsubscribe_token_id', u.id, 'address', u.address, 'subject', u.subject,
			                          'provider_message_id', u.message_id),
			       @now
			FROM upd u WHERE u.result = 'success' AND u.emailed
		),
		`+messagesCTE(p.PerRecipientIDs)+`
		-- The deliverability report's denominator: emails sent per book
		-- and UTC day, counted as they are recorded.
		sent AS (
			`+delivery.CountSentSQL(`FROM upd u JOIN campaigns cp ON cp.id = @campaign_id
			WHERE u.result = 'success' AND u.emailed`, "cp.book_id", "(@now::timestamptz AT TIME ZONE 'UTC')::date")+`
		)
		SELECT (SELECT count(*) FROM fin)`,
		postgres.PlanEachTime, pgx.StrictNamedArgs{
			"claim_id": p.ClaimID, "participant_ids": pids, "results": results, "details": details,
			"now": p.Now, "retry_at": p.RetryAt, "message_ids": msgIDs, "other_steps": otherSteps(p.ActiveSteps, p.StepID),
			"step_id": p.StepID, "campaign_id": p.CampaignID, "contact_ids": contacts, "addresses": addresses,
			"subjects": subjects,
		}).Scan(&completed)
	return completed, err
}

// messagesCTE records the message ids of emails sent one message per
// recipient; SendGrid's (one id per request) are not recorded: nothing
// matches by them.
func messagesCTE(perRecipient bool) string {
	if !perRecipient {
		return ""
	}
	return `msgs AS (
			INSERT INTO campaign_email_messages (message_id, book_id, campaign_id, step_id, participant_id, sent_at)
			SELECT u.message_id, cp.book_id, @campaign_id, @step_id, u.participant_id, @now
			FROM upd u JOIN campaigns cp ON cp.id = @campaign_id
			WHERE u.result = 'success' AND u.emailed AND u.message_id <> ''
			ON CONFLICT (message_id) DO NOTHING
		),`
}

// releaseClaim gives back a claim whose emails were certainly not sent
// (the processor stopped before sending): the rows become claimable again
// and the attempt does not count.
func (store) releaseClaim(ctx context.Context, db postgres.DB, claimID uuid.UUID) error {
	_, err := db.Exec(ctx, `
		WITH cl AS (DELETE FROM campaign_claims WHERE id = $1 RETURNING step_id, participant_ids)
		UPDATE campaign_step_completions c
		SET lease_until = NULL, claim_id = NULL, token_hash = NULL, tries = greatest(c.tries - 1, 0)
		FROM cl, unnest(cl.participant_ids) AS pid
		WHERE c.participant_id = pid AND c.step_id = cl.step_id AND c.claim_id = $1 AND c.result IS NULL`, claimID)
	return err
}

// markSending records, before a claimed chunk goes to the provider, that
// its emails may leave from now on. It reports false when the claim is no
// longer this processor's (its lease ran out and another pass reaped it):
// then nothing may be sent.
func (store) markSending(ctx context.Context, db postgres.DB, claimID uuid.UUID, now time.Time) (bool, error) {
	tag, err := db.Exec(ctx, `UPDATE campaign_claims SET sending_at = $2 WHERE id = $1 AND lease_until > $2`, claimID, now)
	return tag.RowsAffected() == 1, err
}

// reapExpired settles claims whose lease ran out without an answer (their
// processor died). A claim whose send had begun is recorded as failed: the
// email may or may not have gone out, and at most once wins. A claim that
// never reached the provider is given back, to be sent by a later pass.
// It returns how many rows it recorded as failed and how many it gave back.
func (store) reapExpired(ctx context.Context, db postgres.DB, campaignID uuid.UUID, now time.Time) (failed, released int64, err error) {
	err = db.QueryRow(ctx, `
		WITH cl AS (
			DELETE FROM campaign_claims WHERE campaign_id = $1 AND lease_until < $2
			RETURNING id, step_id, participant_ids, sending_at
		), unknown AS (
			UPDATE campaign_step_completions c
			SET result = 'failed', result_detail = $3, completed_at = $2, lease_until = NULL
			FROM cl, unnest(cl.participant_ids) AS pid
			WHERE cl.sending_at IS NOT NULL
			  AND c.participant_id = pid AND c.step_id = cl.step_id AND c.claim_id = cl.id AND c.result IS NULL
			RETURNING 1
		), given_back AS (
			UPDATE campaign_step_completions c
			SET lease_until = NULL, claim_id = NULL, token_hash = NULL, tries = greatest(c.tries - 1, 0)
			FROM cl, unnest(cl.participant_ids) AS pid
			WHERE cl.sending_at IS NULL
			  AND c.participant_id = pid AND c.step_id = cl.step_id AND c.claim_id = cl.id AND c.result IS NULL
			RETURNING 1
		)
		SELECT (SELECT count(*) FROM unknown), (SELECT count(*) FROM given_back)`,
		campaignID, now, DetailOutcomeUnknown).Scan(&failed, &released)
	return failed, released, err
}

// completeParticipants marks every active participant completed whose
// active steps all have a completion record. A campaign without active
// steps completes nobody: steps added later still reach its participants.
func (st store) completeParticipants(ctx context.Context, db postgres.DB, campaignID uuid.UUID, activeSteps []uuid.UUID, now time.Time) (int64, error) {
	if len(activeSteps) == 0 {
		return 0, nil
	}
	return st.completeWith(ctx, db, campaignID, now, `
		UPDATE campaign_participants p SET status = 'completed', completed_at = $3
		WHERE p.campaign_id = $1 AND p.status = 'active'
		  -- A held participant waits for a step: not complete, and not read
		  -- (the walk takes the partial index of those not held).
		  AND p.held_until IS NULL
		  AND NOT EXISTS (
		      SELECT 1 FROM unnest($2::uuid[]) AS s(step_id)
		      WHERE NOT EXISTS (SELECT 1 FROM campaign_step_completions d
		                        WHERE d.participant_id = p.id AND d.step_id = s.step_id AND d.result IS NOT NULL))`,
		// Planned for this campaign: a generic plan cannot tell it from
		// the others and, with statistics of a book's first campaign,
		// scanned every campaign's participants.
		postgres.PlanEachTime, campaignID, activeSteps, now)
}

// enrollTriggered enrolls contacts into a trigger step's target campaign;
// suppressed contacts and existing participants are left out.
func (st store) enrollTriggered(ctx context.Context, db postgres.DB, bookID, targetID uuid.UUID, contactIDs []uuid.UUID, now time.Time) error {
	_, err := st.enrollWith(ctx, db, bookID, now, `
		INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at)
		SELECT $1, ct.id, $3 FROM contact_records ct
		WHERE ct.id = ANY($2::uuid[]) AND NOT `+suppression.ContactSuppressed+`
		ON CONFLICT (campaign_id, contact_id) DO NOTHING`, targetID, contactIDs, now)
	return err
}

// runnable is an active campaign of a team with the paid add-on.
type runnable struct {
	id, teamID uuid.UUID
}

// runnableCampaigns lists what the scheduler processes, oldest campaign
// first.
func (store) runnableCampaigns(ctx context.Context, db postgres.DB) ([]runnable, error) {
	rows, err := db.Query(ctx, `
		SELECT c.id, b.team_id FROM campaigns c
		JOIN book_teams b ON b.book_id = c.book_id
		WHERE c.status = 'active' AND `+accounts.AddonActiveSQL("b.team_id")+`
		ORDER BY c.created_at, c.id`)
	return collect(rows, err, func(r pgx.Row) (runnable, error) {
		var c runnable
		return c, r.Scan(&c.id, &c.teamID)
	})
}
