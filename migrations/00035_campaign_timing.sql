-- When and what a campaign sends: contacts' time zones, the book's default
-- zone, hours on delay steps, send windows, conditions on earlier emails'
-- feedback, and A/B subjects with their decision.
--
-- A participant held by a step's window (or by an undecided A/B test) is
-- marked on its row with the step and the time it may go: the processor's
-- scan of due participants reads only the partial index of those not held,
-- so a held participant costs nothing until its time comes, and the pass
-- that finds held_until passed clears it (campaign_participants_held_idx).

-- +goose Up
ALTER TABLE contacts ADD COLUMN time_zone text; -- an IANA name; NULL: the book's default

ALTER TABLE email_settings ADD COLUMN default_time_zone text NOT NULL DEFAULT 'UTC';

ALTER TABLE campaign_steps
    ADD COLUMN delay_hours integer NOT NULL DEFAULT 0 CHECK (delay_hours BETWEEN 0 AND 23),
    -- {days: ["mon", ...], start: "HH:MM", end: "HH:MM"}; NULL: any time.
    ADD COLUMN send_window jsonb,
    ADD COLUMN condition_if text
        CHECK (condition_if IN ('opened', 'not_opened', 'clicked', 'not_clicked', 'delivered', 'bounced')),
    -- No foreign key: the service refuses a delete or reorder that would
    -- leave a condition naming a later step or none.
    ADD COLUMN condition_step_id uuid,
    -- [{id, subject, email_template_id}], 2 to 4; NULL: one subject.
    ADD COLUMN variants jsonb,
    -- {metric, test_percent, decide_after_minutes}; set with variants.
    ADD COLUMN ab_test jsonb,
    -- The test's state: when it started, how many participants its slice
    -- takes (NULL: everyone until the decision, test_percent 100) and how
    -- many got a variant so far (the claims take from the quota under this
    -- row's lock, and assign variants in turn from that count), and the
    -- decision: taken once, by a conditional update of this row in the
    -- statement that reads the rates.
    ADD COLUMN test_started_at timestamptz,
    ADD COLUMN test_quota integer,
    ADD COLUMN test_assigned integer NOT NULL DEFAULT 0,
    ADD COLUMN winner_variant_id uuid,
    ADD COLUMN decided_at timestamptz,
    ADD CONSTRAINT campaign_steps_condition_check CHECK ((condition_if IS NULL) = (condition_step_id IS NULL));

ALTER TABLE campaign_step_completions
    DROP CONSTRAINT campaign_step_completions_result_check,
    ADD CONSTRAINT campaign_step_completions_result_check CHECK (result IN ('success', 'failed', 'skipped')),
    -- The A/B variant the participant got (or is to get: a test slice's
    -- rows are written before they are claimed).
    ADD COLUMN variant_id uuid;

ALTER TABLE campaign_participants
    ADD COLUMN held_step_id uuid,
    ADD COLUMN held_until timestamptz;
-- The processor's path through a campaign's participants: those not held.
CREATE INDEX campaign_participants_due_idx ON campaign_participants (campaign_id, contact_id) WHERE held_until IS NULL;
-- Who is held, and until when: the pass's wake-up and the waiting counts.
CREATE INDEX campaign_participants_held_idx ON campaign_participants (campaign_id, held_until) WHERE held_until IS NOT NULL;

-- campaign_window_next is NULL when the instant at falls inside the weekly
-- window (ISO days 1 = Monday .. 7, minutes since local midnight, start
-- inclusive, end exclusive) read in the zone tz, else the next instant the
-- window opens there. Local wall time throughout: AT TIME ZONE applies the
-- zone's offset of that very instant, so a 09:00 start is 09:00 on both
-- sides of a daylight-saving change. A start that does not exist locally
-- (inside a spring-forward gap) is taken as the instant after the gap.
-- +goose StatementBegin
CREATE FUNCTION campaign_window_next(tz text, days integer[], start_minute integer, end_minute integer, at timestamptz)
RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN extract(isodow FROM l.t)::int = ANY (days)
         AND l.t - date_trunc('day', l.t) >= make_interval(mins => start_minute)
         AND l.t - date_trunc('day', l.t) < make_interval(mins => end_minute)
        THEN NULL
        ELSE (SELECT min((date_trunc('day', l.t) + make_interval(days => d, mins => start_minute)) AT TIME ZONE tz)
              FROM generate_series(0, 7) AS d
              WHERE extract(isodow FROM date_trunc('day', l.t) + make_interval(days => d))::int = ANY (days)
                AND date_trunc('day', l.t) + make_interval(days => d, mins => start_minute) > l.t)
    END
    FROM (SELECT at AT TIME ZONE tz AS t) AS l
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION campaign_window_next(text, integer[], integer, integer, timestamptz);
DROP INDEX campaign_participants_held_idx;
DROP INDEX campaign_participants_due_idx;
ALTER TABLE campaign_participants DROP COLUMN held_until, DROP COLUMN held_step_id;
DELETE FROM campaign_step_completions WHERE result = 'skipped';
ALTER TABLE campaign_step_completions
    DROP COLUMN variant_id,
    DROP CONSTRAINT campaign_step_completions_result_check,
    ADD CONSTRAINT campaign_step_completions_result_check CHECK (result IN ('success', 'failed'));
ALTER TABLE campaign_steps
    DROP CONSTRAINT campaign_steps_condition_check,
    DROP COLUMN decided_at, DROP COLUMN winner_variant_id, DROP COLUMN test_assigned, DROP COLUMN test_quota,
    DROP COLUMN test_started_at,
    DROP COLUMN ab_test, DROP COLUMN variants, DROP COLUMN condition_step_id, DROP COLUMN condition_if,
    DROP COLUMN send_window, DROP COLUMN delay_hours;
ALTER TABLE email_settings DROP COLUMN default_time_zone;
ALTER TABLE contacts DROP COLUMN time_zone;
