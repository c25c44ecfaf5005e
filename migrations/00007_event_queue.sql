-- +goose Up
-- Events waiting to be fanned out into webhook deliveries. The dispatcher
-- used to mark the outbox row itself (events.dispatched_at), which wrote
-- every event a second time: 10 MB of heap and WAL after each bulk change
-- of 10,000 contacts, competing with the next request. Now each event gets
-- a narrow queue row in the same transaction, and the dispatcher deletes
-- it; events rows are written once and never updated.
--
-- No foreign key to events (a per-row check on every row of a bulk
-- change): events are only ever deleted with their team, and the trigger
-- below takes the team's queue rows with them.
CREATE TABLE event_queue (
    event_id    uuid PRIMARY KEY, -- events (id)
    team_id     uuid NOT NULL,
    type        text NOT NULL,
    occurred_at timestamptz NOT NULL
);
CREATE INDEX event_queue_order_idx ON event_queue (occurred_at);

INSERT INTO event_queue (event_id, team_id, type, occurred_at)
SELECT id, team_id, type, occurred_at FROM events WHERE dispatched_at IS NULL;
DROP INDEX events_undispatched_idx;
ALTER TABLE events DROP COLUMN dispatched_at;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION teams_delete_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM event_queue q USING old_rows o WHERE q.team_id = o.id;
    DELETE FROM events e USING old_rows o WHERE e.team_id = o.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose Down
ALTER TABLE events ADD COLUMN dispatched_at timestamptz;
UPDATE events e SET dispatched_at = e.occurred_at
WHERE NOT EXISTS (SELECT 1 FROM event_queue q WHERE q.event_id = e.id);
CREATE INDEX events_undispatched_idx ON events (occurred_at) WHERE dispatched_at IS NULL;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION teams_delete_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM events e USING old_rows o WHERE e.team_id = o.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
DROP TABLE event_queue;
