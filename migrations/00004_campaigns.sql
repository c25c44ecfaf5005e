-- +goose Up
-- Campaigns: email templates, campaigns and their steps, participants, the
-- step completion records that make every email go out at most once, the
-- per-book email settings and the unsubscribe tokens of sent emails.

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
    CONSTRAINT campaign_participants_campaign_contact_key UNIQUE (campaign_id, contact_id)
);
-- The processor walks a campaign's active participants in id order.
CREATE INDEX campaign_participants_active_idx ON campaign_participants (campaign_id, id) WHERE status = 'active';
-- Listings (removed excluded) in enrollment order.
CREATE INDEX campaign_participants_list_idx ON campaign_participants (campaign_id, enrolled_at, id);
CREATE INDEX campaign_participants_contact_idx ON campaign_participants (contact_id);

-- One row per participant and step, written BEFORE an email is sent: the
-- unique key is the at-most-once guarantee. A row is in one of four states:
--   claimed:   result IS NULL, lease_until set   (a processor is working on it)
--   retryable: result IS NULL, lease_until NULL  (transient provider error; tries < 3)
--   success / failed: result set                 (the completion record)
-- A claim whose lease ran out without a recorded answer is never re-sent:
-- the next pass records it as failed ("delivery outcome unknown").
CREATE TABLE campaign_step_completions (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    participant_id      uuid NOT NULL REFERENCES campaign_participants (id) ON DELETE CASCADE,
    step_id             uuid NOT NULL REFERENCES campaign_steps (id) ON DELETE CASCADE,
    -- Denormalised for the reaper; rows go with their participant.
    campaign_id         uuid NOT NULL,
    result              text CHECK (result IN ('success', 'failed')),
    result_detail       text NOT NULL DEFAULT '',
    tries               integer NOT NULL DEFAULT 0,
    claim_id            uuid,
    claimed_at          timestamptz,
    lease_until         timestamptz,
    retry_at            timestamptz,
    provider_message_id text NOT NULL DEFAULT '',
    completed_at        timestamptz,
    CONSTRAINT campaign_step_completions_participant_step_key UNIQUE (participant_id, step_id),
    CHECK ((result IS NULL) = (completed_at IS NULL))
) WITH (fillfactor = 80);
-- Stats and step-contact listings.
CREATE INDEX campaign_step_completions_step_idx ON campaign_step_completions (step_id, completed_at);
-- In-flight and retryable rows only: what the lease reaper scans.
CREATE INDEX campaign_step_completions_open_idx ON campaign_step_completions (campaign_id, lease_until) WHERE result IS NULL;

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

-- One per sent campaign email; only the SHA-256 of the token is stored.
-- The token is bound to its email's contact and book (rows go with them)
-- and names the campaign, participant and step without foreign keys: the
-- link keeps working ("leave all") after the campaign is deleted, and
-- deleting 100,000 participants does not have to touch this table.
CREATE TABLE unsubscribe_tokens (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    token_hash     bytea NOT NULL,
    contact_id     uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    book_id        uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    campaign_id    uuid NOT NULL,
    participant_id uuid NOT NULL,
    step_id        uuid NOT NULL,
    email          text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT unsubscribe_tokens_hash_key UNIQUE (token_hash)
);
CREATE INDEX unsubscribe_tokens_contact_idx ON unsubscribe_tokens (contact_id);

-- +goose Down
DROP TABLE unsubscribe_tokens;
DROP TABLE email_settings;
DROP TABLE campaign_step_completions;
DROP TABLE campaign_participants;
DROP TABLE campaign_steps;
DROP TABLE campaigns;
DROP TABLE email_templates;
