-- A campaign's audience: the segment whose members it enrolls by itself on
-- every pass, and whether a participant who stops matching leaves. A
-- segment that an audience names cannot be deleted (the key's check; NO
-- ACTION rather than RESTRICT, so deleting a book, which deletes both its
-- campaigns and its segments in one statement, still works); the service
-- names the campaign when it refuses.

-- +goose Up
ALTER TABLE campaigns
    ADD COLUMN audience_segment_id uuid REFERENCES segments (id),
    ADD COLUMN exit_on_segment_leave boolean NOT NULL DEFAULT false;
CREATE INDEX campaigns_audience_idx ON campaigns (audience_segment_id) WHERE audience_segment_id IS NOT NULL;

-- +goose Down
DROP INDEX campaigns_audience_idx;
ALTER TABLE campaigns DROP COLUMN exit_on_segment_leave, DROP COLUMN audience_segment_id;
