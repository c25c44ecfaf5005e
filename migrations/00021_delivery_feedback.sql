-- Delivery feedback from the email provider (SendGrid's signed Event
-- Webhook): the events received, each email's delivery state, and counters
-- that the campaign stats and the deliverability report read, so neither
-- counts an event log at query time.
--
-- No foreign keys on the per-event and per-email tables: a key is checked
-- with one query per inserted row, and a batch inserts up to 1,000 rows.
-- Statement-level triggers delete them with their contact or participant
-- instead.

-- +goose Up
ALTER TABLE email_settings
    ADD COLUMN event_webhook_public_key text NOT NULL DEFAULT '',
    ADD COLUMN track_opens boolean NOT NULL DEFAULT false,
    ADD COLUMN track_clicks boolean NOT NULL DEFAULT false;

-- One row per provider event applied to an email of the book. The primary
-- key is the deduplication: SendGrid resends a batch it did not see
-- acknowledged, and two instances may receive the same batch. kind is the
-- activity type the contact's timeline shows.
CREATE TABLE delivery_events (
    book_id        uuid NOT NULL,
    sg_event_id    text NOT NULL,
    contact_id     uuid NOT NULL,
    campaign_id    uuid NOT NULL,
    step_id        uuid NOT NULL,
    participant_id uuid NOT NULL,
    kind           text NOT NULL CHECK (kind IN ('processed', 'delivered', 'deferred', 'bounced', 'blocked', 'dropped',
                                                 'opened', 'clicked', 'complained', 'unsubscribed')),
    detail         text NOT NULL DEFAULT '',
    occurred_at    timestamptz NOT NULL,
    received_at    timestamptz NOT NULL,
    PRIMARY KEY (book_id, sg_event_id)
);
CREATE INDEX delivery_events_contact_idx ON delivery_events (contact_id, occurred_at);

-- One row per campaign email that heard from the provider: its latest
-- delivery state and when each kind of engagement first happened (the
-- unique counts count these once).
CREATE TABLE email_deliveries (
    participant_id  uuid NOT NULL,
    step_id         uuid NOT NULL,
    state           text CHECK (state IN ('processed', 'delivered', 'deferred', 'bounced', 'blocked', 'dropped')),
    state_at        timestamptz, -- NULL state: only engagement heard so far
    delivered_at    timestamptz,
    opened_at       timestamptz,
    clicked_at      timestamptz,
    bounced_at      timestamptz,
    complained_at   timestamptz,
    unsubscribed_at timestamptz,
    PRIMARY KEY (participant_id, step_id)
);

-- Unique engagement per campaign step (what the campaign stats show).
CREATE TABLE delivery_step_counts (
    step_id      uuid PRIMARY KEY REFERENCES campaign_steps (id) ON DELETE CASCADE,
    delivered    bigint NOT NULL DEFAULT 0,
    opened       bigint NOT NULL DEFAULT 0,
    clicked      bigint NOT NULL DEFAULT 0,
    bounced      bigint NOT NULL DEFAULT 0,
    complained   bigint NOT NULL DEFAULT 0,
    unsubscribed bigint NOT NULL DEFAULT 0
);

-- Per book and UTC day: emails sent (by the campaign runner, on the day
-- they were sent) and unique engagement (on the day the provider says it
-- happened). The deliverability report sums at most 365 rows.
CREATE TABLE delivery_daily_counts (
    book_id      uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    day          date NOT NULL,
    sent         bigint NOT NULL DEFAULT 0,
    delivered    bigint NOT NULL DEFAULT 0,
    bounced      bigint NOT NULL DEFAULT 0,
    complained   bigint NOT NULL DEFAULT 0,
    unsubscribed bigint NOT NULL DEFAULT 0,
    opened       bigint NOT NULL DEFAULT 0,
    clicked      bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (book_id, day)
);

-- +goose StatementBegin
CREATE FUNCTION contacts_delete_delivery_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM delivery_events t USING old_rows o WHERE t.contact_id = o.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_delete_delivery_events AFTER DELETE ON contacts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_delete_delivery_events();

-- +goose StatementBegin
CREATE FUNCTION campaign_participants_delete_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM email_deliveries t USING old_rows o WHERE t.participant_id = o.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER campaign_participants_delete_deliveries AFTER DELETE ON campaign_participants
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION campaign_participants_delete_deliveries();

-- +goose Down
DROP TRIGGER campaign_participants_delete_deliveries ON campaign_participants;
DROP FUNCTION campaign_participants_delete_deliveries();
DROP TRIGGER contacts_delete_delivery_events ON contacts;
DROP FUNCTION contacts_delete_delivery_events();
DROP TABLE delivery_daily_counts;
DROP TABLE delivery_step_counts;
DROP TABLE email_deliveries;
DROP TABLE delivery_events;
ALTER TABLE email_settings DROP COLUMN track_clicks, DROP COLUMN track_opens, DROP COLUMN event_webhook_public_key;
