-- Read models for the segment compiler, which joins other packages' tables
-- inside one rule statement: a contact's addresses (contacts), the
-- delivery feedback of the email.* conditions (delivery) and campaign
-- membership with its status (campaigns). Plain one-query views, inlined
-- by PostgreSQL, so each condition keeps its plan and indexes (the
-- engagement condition stays an index-only scan of
-- delivery_events_book_kind_idx).
-- +goose Up
CREATE VIEW contact_addresses AS
SELECT contact_id, book_id, address_lower FROM contact_emails;
COMMENT ON VIEW contact_addresses IS 'Owned by package contacts: every address of each contact, lower-cased, for matching rules on email.';

CREATE VIEW delivery_event_records AS
SELECT book_id, contact_id, campaign_id, kind, occurred_at FROM delivery_events;
COMMENT ON VIEW delivery_event_records IS 'Owned by package delivery: what the provider reported of each email, for engagement conditions.';

-- A column appended: CREATE OR REPLACE keeps the view's existing columns.
CREATE OR REPLACE VIEW campaign_participations AS
SELECT campaign_id, contact_id, enrolled_at, removed_at, status FROM campaign_participants;

-- +goose Down
DROP VIEW campaign_participations;
CREATE VIEW campaign_participations AS
SELECT campaign_id, contact_id, enrolled_at, removed_at FROM campaign_participants;
COMMENT ON VIEW campaign_participations IS 'Owned by package campaigns: when each contact entered and left each campaign, for a contact''s activity.';
DROP VIEW delivery_event_records;
DROP VIEW contact_addresses;
