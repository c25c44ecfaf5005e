-- Read models, as in migration 00043, for the statements of other packages
-- that join these tables for speed: campaign sending's claim, enrollment,
-- audiences and step lists, the segment count, delivery's event ingest and
-- the webhook engine's reads of the outbox. Each view belongs to the
-- package named in its comment, which keeps it in step with its tables.
-- They are plain views of one SELECT with no aggregate, so PostgreSQL
-- inlines them and plans the reading statement as if the tables had been
-- named (its indexes, its row locks: FOR KEY SHARE of the view locks the
-- table's row).
-- +goose Up
CREATE VIEW contact_records AS
SELECT id, book_id, first_name, last_name, company, job_title, notes, website,
       emails, phones, addresses, dates, socials, relationships, photo_url,
       starred, birthday, suppressed_at, created_by, created_at, updated_at,
       search, sort_name, time_zone
FROM contacts;
COMMENT ON VIEW contact_records IS 'Owned by package contacts: the contact rows, for the set statements of other packages (campaign audiences, claims and enrollment, segment counts) whose segment rules may test any column.';

CREATE VIEW contact_custom_values AS
SELECT contact_id, field_id, value FROM contact_field_values;
COMMENT ON VIEW contact_custom_values IS 'Owned by package contacts: each contact''s custom field values, for merge data.';

CREATE VIEW contact_label_members AS
SELECT contact_id, label_id FROM contact_labels;
COMMENT ON VIEW contact_label_members IS 'Owned by package contacts: which contacts carry each label, for enrolling a label.';

CREATE VIEW campaign_email_recipients AS
SELECT cp.book_id, c.campaign_id, c.step_id, c.participant_id, p.contact_id
FROM campaign_step_completions c
JOIN campaigns cp ON cp.id = c.campaign_id
JOIN campaign_participants p ON p.id = c.participant_id
WHERE c.token_hash IS NOT NULL;
COMMENT ON VIEW campaign_email_recipients IS 'Owned by package campaigns: each campaign email handed to the provider and the contact it went to, which delivery matches provider events against.';

CREATE VIEW event_records AS
SELECT id, team_id, type, body, occurred_at FROM events;
COMMENT ON VIEW event_records IS 'Owned by package events: each outbox event as it was recorded, for the webhook engine''s deliveries, log and recovery.';

-- +goose Down
DROP VIEW event_records;
DROP VIEW campaign_email_recipients;
DROP VIEW contact_label_members;
DROP VIEW contact_custom_values;
DROP VIEW contact_records;
