-- +goose Up
-- Transactional emails (package transactional): one row per message,
-- queued in the request's transaction and sent once by whichever instance
-- claims it. body_html is kept only while the message may still be sent.
-- sending_at is stamped before the provider is called: a row queued with
-- sending_at set belongs to a send in progress (or one whose instance
-- died, settled as "outcome unknown" after a lease), never claimed again.
CREATE TABLE transactional_messages (
    id                  uuid PRIMARY KEY,
    book_id             uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    template_id         uuid NOT NULL,
    contact_id          uuid,
    email               text NOT NULL,
    name                text NOT NULL DEFAULT '',
    subject             text NOT NULL,
    body_html           text,
    reply_to            text NOT NULL DEFAULT '',
    status              text NOT NULL CHECK (status IN ('queued', 'sent', 'failed', 'suppressed')),
    detail              text NOT NULL DEFAULT '',
    provider_message_id text,
    attempts            integer NOT NULL DEFAULT 0,
    next_attempt_at     timestamptz,
    sending_at          timestamptz,
    created_at          timestamptz NOT NULL,
    sent_at             timestamptz,
    delivered_at        timestamptz,
    opened_at           timestamptz,
    clicked_at          timestamptz,
    bounced_at          timestamptz,
    complained_at       timestamptz
);
-- The claim: due messages, oldest due first.
CREATE INDEX transactional_messages_due_idx ON transactional_messages (next_attempt_at)
    WHERE status = 'queued' AND sending_at IS NULL;
-- The reaper: sends whose instance never recorded an outcome.
CREATE INDEX transactional_messages_sending_idx ON transactional_messages (sending_at)
    WHERE status = 'queued' AND sending_at IS NOT NULL;
-- The lists, newest first (ids are time-ordered), by status or template.
CREATE INDEX transactional_messages_book_idx ON transactional_messages (book_id, id DESC);
CREATE INDEX transactional_messages_book_status_idx ON transactional_messages (book_id, status, id DESC);
CREATE INDEX transactional_messages_book_template_idx ON transactional_messages (book_id, template_id, id DESC);
CREATE INDEX transactional_messages_contact_idx ON transactional_messages (contact_id) WHERE contact_id IS NOT NULL;
-- Provider feedback that names no message id is matched on the
-- provider's own message id.
CREATE INDEX transactional_messages_provider_idx ON transactional_messages (book_id, provider_message_id)
    WHERE provider_message_id IS NOT NULL;

-- What the provider reported of each message, once per provider event.
CREATE TABLE transactional_events (
    book_id           uuid NOT NULL,
    provider_event_id text NOT NULL,
    message_id        uuid NOT NULL REFERENCES transactional_messages (id) ON DELETE CASCADE,
    kind              text NOT NULL CHECK (kind IN ('processed', 'delivered', 'deferred', 'bounced', 'blocked', 'dropped',
                                                    'opened', 'clicked', 'complained', 'unsubscribed')),
    detail            text NOT NULL DEFAULT '',
    occurred_at       timestamptz NOT NULL,
    received_at       timestamptz NOT NULL,
    PRIMARY KEY (book_id, provider_event_id)
);
CREATE INDEX transactional_events_message_idx ON transactional_events (message_id, occurred_at);

-- A contact's messages go with it (its erasure included).
-- +goose StatementBegin
CREATE FUNCTION contacts_delete_transactional() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM transactional_messages t USING old_rows o WHERE t.contact_id = o.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_delete_transactional AFTER DELETE ON contacts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_delete_transactional();

-- Product events (package tracking): what the team's systems report of a
-- contact ("order.paid"), kept for EVENT_RETENTION. Ids are UUIDv7, so
-- the retention prune walks the primary key from its left edge.
CREATE TABLE tracked_events (
    id          uuid PRIMARY KEY,
    book_id     uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    contact_id  uuid NOT NULL,
    name        text NOT NULL,
    properties  jsonb NOT NULL DEFAULT '{}',
    occurred_at timestamptz NOT NULL,
    created_at  timestamptz NOT NULL
);
-- A contact's timeline, newest first.
CREATE INDEX tracked_events_contact_idx ON tracked_events (contact_id, occurred_at DESC, id DESC);
-- The segment condition `event`: members from the index alone.
CREATE INDEX tracked_events_book_name_idx ON tracked_events (book_id, name, occurred_at) INCLUDE (contact_id);

-- +goose StatementBegin
CREATE FUNCTION contacts_delete_tracked_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM tracked_events t USING old_rows o WHERE t.contact_id = o.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_delete_tracked_events AFTER DELETE ON contacts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_delete_tracked_events();

-- Read models for a contact's activity (package delivery) and the
-- segment condition (package segments).
CREATE VIEW transactional_message_records AS
SELECT id, book_id, template_id, contact_id, status, detail, created_at, sent_at FROM transactional_messages;
COMMENT ON VIEW transactional_message_records IS 'Owned by package transactional: each transactional email and its outcome, for a contact''s activity.';
CREATE VIEW transactional_event_records AS
SELECT e.message_id, m.contact_id, m.template_id, e.kind, e.detail, e.occurred_at
FROM transactional_events e JOIN transactional_messages m ON m.id = e.message_id;
COMMENT ON VIEW transactional_event_records IS 'Owned by package transactional: what the provider reported of each transactional email, for a contact''s activity.';
CREATE VIEW tracked_event_records AS
SELECT book_id, contact_id, name, occurred_at FROM tracked_events;
COMMENT ON VIEW tracked_event_records IS 'Owned by package tracking: which contact had which product event when, for the segment condition event.';

-- +goose Down
DROP VIEW tracked_event_records;
DROP VIEW transactional_event_records;
DROP VIEW transactional_message_records;
DROP TRIGGER contacts_delete_tracked_events ON contacts;
DROP FUNCTION contacts_delete_tracked_events();
DROP TABLE tracked_events;
DROP TRIGGER contacts_delete_transactional ON contacts;
DROP FUNCTION contacts_delete_transactional();
DROP TABLE transactional_events;
DROP TABLE transactional_messages;
