-- +goose Up
-- Campaigns: email templates, campaigns and their steps, participants, the
-- step completion records that make every email go out at most once (and
-- hold the unsubscribe token of each sent email), the claims in flight and
-- the per-book email settings.

CREATE TABLE email_templates (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    book_id    uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    name       text NOT NULL,
    subject    text NOT NULL DEFAULT '',
    body_html  text NOT NULL DEFAULT '',
    created_by uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX email_templates_book_idx ON email_templates (book_id, name);

CREATE TABLE campaigns (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    book_id     uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    name        text NOT NULL,
    description text NOT NULL DEFAULT '',
    status      text NOT NULL DEFAULT 'draft'
                CHECK (status IN ('draft', 'active', 'paused', 'archived')),
    created_by  uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX campaigns_book_idx ON campaigns (book_id, created_at);
-- The scheduler's question every tick: which campaigns are active?
CREATE INDEX campaigns_active_idx ON campaigns (book_id) WHERE status = 'active';

CREATE TABLE campaign_steps (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    campaign_id         uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    step_type           text NOT NULL CHECK (step_type IN ('email', 'trigger')),
    name                text NOT NULL,
    sort_order          integer NOT NULL,
    active              boolean NOT NULL DEFAULT true,
    schedule_type       text NOT NULL CHECK (schedule_type IN ('immediate', 'delay', 'fixed_date')),
    delay_days          integer NOT NULL DEFAULT 0 CHECK (delay_days >= 0),
    fixed_date          date,
    -- A deleted template or target campaign leaves the step in place; the
    -- processor records the step as failed for its participants, and a
    -- PATCH of the step must name a new one.
    email_template_id   uuid REFERENCES email_templates (id) ON DELETE SET NULL,
    sender_name         text NOT NULL DEFAULT '',
    sender_email        text NOT NULL DEFAULT '',
    trigger_campaign_id uuid REFERENCES campaigns (id) ON DELETE SET NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX campaign_steps_campaign_idx ON campaign_steps (campaign_id, sort_order);
CREATE INDEX campaign_steps_template_idx ON campaign_steps (email_template_id) WHERE email_template_id IS NOT NULL;
CREATE INDEX campaign_steps_trigger_idx ON campaign_steps (trigger_campaign_id) WHERE trigger_campaign_id IS NOT NULL;

CREATE TABLE campaign_participants (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    campaign_id  uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    contact_id   uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    status       text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'removed')),
    enrolled_at  timestamptz NOT NULL,
    enrolled_by  uuid REFERENCES users (id) ON DELETE SET NULL,
    completed_at timestamptz,
    removed_at   timestamptz,
    -- Also the processor's path: it walks a campaign's participants in
    -- contact order through this index.
    CONSTRAINT campaign_participants_campaign_contact_key UNIQUE (campaign_id, contact_id)
) WITH (fillfactor = 70); -- room for heap-only status updates
-- Listings (removed excluded) in enrollment order.
CREATE INDEX campaign_participants_list_idx ON campaign_participants (campaign_id, enrolled_at, id);
CREATE INDEX campaign_participants_contact_idx ON campaign_participants (contact_id);

-- One row per participant and step, written BEFORE an email is sent: the
-- primary key is the at-most-once guarantee. A row is in one of four states:
--   claimed:   result IS NULL, lease_until set   (a processor is working on it)
--   retryable: result IS NULL, lease_until NULL  (transient provider error; tries < 3)
--   success / failed: result set                 (the completion record)
-- A claim whose lease ran out without a recorded answer is never re-sent
-- once its send began: the next pass records it as failed ("delivery
-- outcome unknown"). A claim that never reached the provider (see
-- campaign_claims.sending_at) is given back and sent later.
--
-- The row also stands for the unsubscribe token of the email it sends: the
-- token carries the step and participant ids (the key) and a secret whose
-- SHA-256 is token_hash, so a sent email costs one row and no extra index.
-- Recording the result changes no indexed column and the pages keep room
-- (fillfactor), so it is a heap-only update. No foreign keys: a foreign
-- key is checked with one query per inserted row, which would cut the
-- sending rate by a third; the triggers below delete rows set-based with
-- their participant or step, and every writer locks the participant row
-- (FOR UPDATE, in the claim statement) and the step row (FOR KEY SHARE)
-- first, which gives the same guarantee against orphans.
CREATE TABLE campaign_step_completions (
    step_id             uuid NOT NULL,
    participant_id      uuid NOT NULL,
    id                  uuid NOT NULL DEFAULT gen_random_uuid(),
    campaign_id         uuid NOT NULL,
    result              text CHECK (result IN ('success', 'failed')),
    result_detail       text NOT NULL DEFAULT '',
    tries               integer NOT NULL DEFAULT 0,
    claim_id            uuid,
    claimed_at          timestamptz,
    lease_until         timestamptz,
    retry_at            timestamptz,
    provider_message_id text NOT NULL DEFAULT '',
    token_hash          bytea,
    completed_at        timestamptz,
    -- Step first: stats and step-contact listings read a step's rows.
    PRIMARY KEY (step_id, participant_id),
    CHECK ((result IS NULL) = (completed_at IS NULL))
) WITH (fillfactor = 50);

-- +goose StatementBegin
CREATE FUNCTION campaign_participants_delete_completions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM campaign_step_completions t
    USING old_rows o JOIN campaign_steps s ON s.campaign_id = o.campaign_id
    WHERE t.step_id = s.id AND t.participant_id = o.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER campaign_participants_delete_completions AFTER DELETE ON campaign_participants
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION campaign_participants_delete_completions();

-- +goose StatementBegin
CREATE FUNCTION campaign_steps_delete_completions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM campaign_step_completions t USING old_rows o WHERE t.step_id = o.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER campaign_steps_delete_completions AFTER DELETE ON campaign_steps
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION campaign_steps_delete_completions();

-- One row per claimed chunk (up to 1,000 participants) while it is in
-- flight: how the next pass finds claims whose lease ran out without
-- scanning the completions.
CREATE TABLE campaign_claims (
    id              uuid PRIMARY KEY,
    campaign_id     uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    step_id         uuid NOT NULL,
    lease_until     timestamptz NOT NULL,
    participant_ids uuid[] NOT NULL,
    -- Set, and committed, just before the chunk goes to the provider: only
    -- from then on may its emails have left.
    sending_at      timestamptz
);
CREATE INDEX campaign_claims_campaign_idx ON campaign_claims (campaign_id, lease_until);

-- One per book. The provider key is AES-256-GCM encrypted (nonce || sealed
-- box, the book id as additional data) with the configured settings key.
CREATE TABLE email_settings (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    book_id            uuid NOT NULL UNIQUE REFERENCES books (id) ON DELETE CASCADE,
    sender_name        text NOT NULL DEFAULT '',
    sender_email       text NOT NULL DEFAULT '',
    reply_to_email     text NOT NULL DEFAULT '',
    company_name       text NOT NULL DEFAULT '',
    address_line1      text NOT NULL DEFAULT '',
    address_line2      text NOT NULL DEFAULT '',
    city               text NOT NULL DEFAULT '',
    state              text NOT NULL DEFAULT '',
    postal_code        text NOT NULL DEFAULT '',
    country            text NOT NULL DEFAULT '',
    mailer_api_key_enc bytea,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE email_settings;
DROP TABLE campaign_claims;
DROP TABLE campaign_step_completions;
DROP TABLE campaign_participants;
DROP TABLE campaign_steps;
DROP TABLE campaigns;
DROP TABLE email_templates;
DROP FUNCTION campaign_steps_delete_completions();
DROP FUNCTION campaign_participants_delete_completions();
