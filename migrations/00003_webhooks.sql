-- +goose Up
-- Outbound webhooks: the subscriptions, one delivery per event and
-- subscribed webhook (the work queue), and every attempt (the delivery log).

CREATE TABLE webhooks (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    team_id    uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    url        text NOT NULL,
    events     text[] NOT NULL CHECK (cardinality(events) > 0),
    -- `whsec_` + base64 of 32 random bytes. Kept in clear because every
    -- delivery is signed with it; it is only ever shown at creation.
    secret     text NOT NULL,
    active     boolean NOT NULL DEFAULT true,
    created_by uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
-- The fan-out joins events to the team's active webhooks.
CREATE INDEX webhooks_team_idx ON webhooks (team_id, created_at);

-- One row per (event, subscribed webhook): the delivery work queue. A
-- worker claims due rows with FOR UPDATE SKIP LOCKED and stamps a lease;
-- a lease that runs out (the instance died) makes the row claimable again.
CREATE TABLE webhook_deliveries (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    event_id        uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    webhook_id      uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    -- canceled: the webhook was deactivated before the delivery finished.
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    lease_owner     text,
    lease_until     timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT webhook_deliveries_event_webhook_key UNIQUE (event_id, webhook_id)
) WITH (fillfactor = 80); -- room for the claim's lease stamp to be a HOT update
-- The claim query: pending rows by due time. Finished rows leave the index.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
-- Deactivating a webhook cancels its pending deliveries; deleting it
-- cascades to all of them.
CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id);

-- The delivery log: one row per HTTP attempt.
CREATE TABLE webhook_attempts (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- Breaks ties between attempts logged at the same instant, so "newest
    -- first" is stable.
    seq             bigint GENERATED ALWAYS AS IDENTITY,
    -- The log belongs to the webhook and goes with it; delivery_id and
    -- event_id are not foreign keys, so logging an attempt checks (and
    -- indexes) as little as possible at thousands of attempts a second.
    delivery_id     uuid NOT NULL,
    webhook_id      uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id        uuid NOT NULL,
    event_type      text NOT NULL,
    attempt         integer NOT NULL,
    -- NULL when no HTTP response came back (network error, timeout, refusal).
    response_status integer,
    -- The first 4 KB of the response body.
    response_body   text NOT NULL DEFAULT '',
    -- Why no response came back; NULL when one did.
    error           text,
    duration_ms     integer NOT NULL,
    success         boolean NOT NULL,
    created_at      timestamptz NOT NULL
);
-- The log listing: a webhook's attempts, newest first (also serves the
-- cascade when the webhook is deleted).
CREATE INDEX webhook_attempts_log_idx ON webhook_attempts (webhook_id, created_at DESC, seq DESC);

-- Wake the dispatchers as soon as events commit (NOTIFY is delivered at
-- commit). Statement level: one notification per insert, however many
-- rows; PostgreSQL also folds equal notifications of one transaction.
-- +goose StatementBegin
CREATE FUNCTION events_notify_dispatchers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('contactbook_events', '');
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER events_notify_dispatchers AFTER INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_notify_dispatchers();

-- +goose Down
DROP TRIGGER events_notify_dispatchers ON events;
DROP FUNCTION events_notify_dispatchers();
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
