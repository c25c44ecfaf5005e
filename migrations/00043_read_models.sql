-- Read models: what a package's statements may read of another package's
-- tables where a join in the same statement is needed for speed. Each
-- view belongs to the package that owns the tables it reads (named in its
-- comment), which keeps it in step with those tables; every other package
-- reads that data through the view, or through an exported function of
-- the owner, never from the tables. They are plain views of one SELECT
-- with no aggregate, so PostgreSQL inlines them into the statement that
-- reads them and plans it as if the tables had been named.
-- +goose Up
CREATE VIEW book_teams AS
SELECT id AS book_id, team_id FROM books;
COMMENT ON VIEW book_teams IS 'Owned by package books: the team owning each book, for the authorization lookups of other packages.';

CREATE VIEW label_refs AS
SELECT id, book_id, name, color, sort_order FROM labels;
COMMENT ON VIEW label_refs IS 'Owned by package books: what a contact shows of each of its labels, and their order.';

CREATE VIEW field_keys AS
SELECT id, book_id, key, name, type FROM field_definitions;
COMMENT ON VIEW field_keys IS 'Owned by package books: the key, name and type of each custom field, which contact values and merge tags are named by.';

CREATE VIEW campaign_email_sends AS
SELECT cp.book_id, cp.id AS campaign_id, s.id AS step_id, t.participant_id, p.contact_id,
       t.completed_at, t.result, t.result_detail
FROM campaigns cp
JOIN campaign_steps s ON s.campaign_id = cp.id AND s.step_type = 'email'
JOIN campaign_step_completions t ON t.step_id = s.id
JOIN campaign_participants p ON p.id = t.participant_id;
COMMENT ON VIEW campaign_email_sends IS 'Owned by package campaigns: each email step worked for a participant (result NULL while it is being sent), for segment rules and a contact''s activity.';

CREATE VIEW campaign_participations AS
SELECT campaign_id, contact_id, enrolled_at, removed_at FROM campaign_participants;
COMMENT ON VIEW campaign_participations IS 'Owned by package campaigns: when each contact entered and left each campaign, for a contact''s activity.';

CREATE VIEW actor_names AS
SELECT 'user'::text AS actor_type, id, email AS name FROM users
UNION ALL
SELECT 'api_key', id, name FROM api_keys;
COMMENT ON VIEW actor_names IS 'Owned by package accounts: the name the audit log records for a user (its email) or an API key.';

-- +goose Down
DROP VIEW actor_names;
DROP VIEW campaign_participations;
DROP VIEW campaign_email_sends;
DROP VIEW field_keys;
DROP VIEW label_refs;
DROP VIEW book_teams;
