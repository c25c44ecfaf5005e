-- +goose Up
-- A campaign may start on a product event (package campaigns): an event
-- of that name enrolls its contact. entry_properties keeps the entering
-- event's properties on the participant, for {{event.*}} in the
-- campaign's emails.
ALTER TABLE campaigns ADD COLUMN entry_event text
    CHECK (entry_event ~ '^[a-z0-9_.:-]{1,100}$');
CREATE INDEX campaigns_entry_event_idx ON campaigns (book_id, entry_event) WHERE entry_event IS NOT NULL;
ALTER TABLE campaign_participants ADD COLUMN entry_properties jsonb;

-- +goose Down
ALTER TABLE campaign_participants DROP COLUMN entry_properties;
DROP INDEX campaigns_entry_event_idx;
ALTER TABLE campaigns DROP COLUMN entry_event;
