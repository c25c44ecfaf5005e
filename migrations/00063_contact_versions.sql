-- A contact's sync version (its CardDAV ETag, the numbers a book's sync
-- token is made of) moves out of contacts into a narrow table of its own,
-- owned by package contacts:
--   * contact_versions: per contact, its book and the number it took at
--     its last change (its row, its labels, its custom values, the name of
--     one of its labels), from the sequence contact_sync_seq.
-- Numbering a change of labels or custom values used to rewrite the
-- contact's row, and a contact row is wide and indexed many times (names,
-- emails, the trigram search): adding 10,000 contacts to a label rewrote
-- 10,000 of them. Now it rewrites 10,000 rows of three columns.
-- The numbering rules of 00058 stay: a writer holds the book's sync lock
-- (advisory, (7303, hashtext(book id))) shared from before it takes a
-- number until it commits; numbers are taken one statement at a time.
-- +goose Up
CREATE TABLE contact_versions (
    contact_id uuid PRIMARY KEY,
    book_id    uuid NOT NULL,
    sync_seq   bigint NOT NULL
);
INSERT INTO contact_versions (contact_id, book_id, sync_seq) SELECT id, book_id, sync_seq FROM contacts;
CREATE INDEX contact_versions_sync_idx ON contact_versions (book_id, sync_seq);

DROP TRIGGER contacts_take_sync_seq ON contacts;
DROP FUNCTION contacts_take_sync_seq();

-- A written contact row takes a number: one statement per statement.
-- +goose StatementBegin
CREATE FUNCTION contacts_version_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(7303, hashtext(b::text)) FROM (SELECT DISTINCT book_id FROM new_rows) AS x(b);
    INSERT INTO contact_versions (contact_id, book_id, sync_seq)
    SELECT n.id, n.book_id, nextval('contact_sync_seq') FROM new_rows n ORDER BY n.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_version_inserted AFTER INSERT ON contacts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_version_inserted();

-- contacts_touch gives each of the contacts ids a new number. Each row
-- takes its book's sync lock right before its number (the subquery runs
-- first: a volatile target is never pulled up). It drives from ids to the
-- versions by key whatever the statistics say (a generic plan of
-- "= ANY(ids)" chose a sequential scan), and locks them in id order so
-- that two bulk changes cannot deadlock.
-- +goose StatementBegin
CREATE FUNCTION contacts_touch(ids uuid[]) RETURNS void LANGUAGE sql AS $$
    UPDATE contact_versions v
    SET sync_seq = (SELECT nextval('contact_sync_seq')
                    FROM (SELECT pg_advisory_xact_lock_shared(7303, hashtext(v.book_id::text))) AS held)
    WHERE v.contact_id IN (SELECT t.contact_id FROM unnest(ids) AS i(id)
                           JOIN contact_versions t ON t.contact_id = i.id
                           ORDER BY t.contact_id FOR NO KEY UPDATE OF t);
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION contacts_version_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM contacts_touch(ARRAY(SELECT id FROM new_rows));
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_version_updated AFTER UPDATE ON contacts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_version_updated();

-- A change of a contact's labels or custom values is a change of the
-- contact. An added label or value has its contact (held FOR KEY SHARE);
-- a removed one may be going with its contact (the cascade of a delete),
-- which is then not there to number: its tombstone tells.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contacts_touch_from_children() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM contacts_touch(ARRAY(
            SELECT c.id FROM unnest(ARRAY(SELECT DISTINCT contact_id FROM changed_rows)) AS i(id)
            JOIN contacts c ON c.id = i.id));
    ELSE
        PERFORM contacts_touch(ARRAY(SELECT DISTINCT contact_id FROM changed_rows));
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- A renamed label changes the cards (CATEGORIES) of its contacts.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION labels_rename_touch_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM contacts_touch(ARRAY(
        SELECT cl.contact_id FROM new_rows n
        JOIN old_rows o ON o.id = n.id
        JOIN contact_labels cl ON cl.label_id = n.id
        WHERE o.name IS DISTINCT FROM n.name));
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- A deleted contact leaves a tombstone in its book, unless the book
-- itself is going (a deleted book has nobody to tell), and its version
-- goes.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contacts_leave_tombstones() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(7303, hashtext(b::text)) FROM (SELECT DISTINCT book_id FROM old_rows) AS x(b);
    INSERT INTO contact_tombstones (book_id, sync_seq, contact_id, vcard_name)
    SELECT o.book_id, nextval('contact_sync_seq'), o.id, o.vcard_name FROM old_rows o
    WHERE EXISTS (SELECT 1 FROM book_teams b WHERE b.book_id = o.book_id);
    DELETE FROM contact_versions v WHERE v.contact_id = ANY(ARRAY(SELECT id FROM old_rows));
    RETURN NULL;
END $$;
-- +goose StatementEnd

DROP VIEW contact_records;
CREATE VIEW contact_records AS
SELECT id, book_id, first_name, last_name, company, job_title, notes, website,
       emails, phones, addresses, dates, socials, relationships, photo_url,
       starred, birthday, suppressed_at, created_by, created_at, updated_at,
       search, sort_name, time_zone, vcard_name, vcard_props
FROM contacts;
COMMENT ON VIEW contact_records IS 'Owned by package contacts: the contact rows, for the set statements of other packages (campaign audiences, claims and enrollment, segment counts) whose segment rules may test any column.';

DROP INDEX contacts_sync_idx;
ALTER TABLE contacts DROP COLUMN sync_seq;

-- +goose Down
ALTER TABLE contacts ADD COLUMN sync_seq bigint;
UPDATE contacts c SET sync_seq = v.sync_seq FROM contact_versions v WHERE v.contact_id = c.id;
ALTER TABLE contacts ALTER COLUMN sync_seq SET DEFAULT nextval('contact_sync_seq');
UPDATE contacts SET sync_seq = DEFAULT WHERE sync_seq IS NULL;
ALTER TABLE contacts ALTER COLUMN sync_seq SET NOT NULL;
CREATE INDEX contacts_sync_idx ON contacts (book_id, sync_seq);

DROP VIEW contact_records;
CREATE VIEW contact_records AS
SELECT id, book_id, first_name, last_name, company, job_title, notes, website,
       emails, phones, addresses, dates, socials, relationships, photo_url,
       starred, birthday, suppressed_at, created_by, created_at, updated_at,
       search, sort_name, time_zone, sync_seq, vcard_name, vcard_props
FROM contacts;
COMMENT ON VIEW contact_records IS 'Owned by package contacts: the contact rows, for the set statements of other packages (campaign audiences, claims and enrollment, segment counts) whose segment rules may test any column.';

DROP TRIGGER contacts_version_updated ON contacts;
DROP FUNCTION contacts_version_updated();
DROP TRIGGER contacts_version_inserted ON contacts;
DROP FUNCTION contacts_version_inserted();

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contacts_touch_from_children() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE contacts c SET sync_seq = nextval('contact_sync_seq')
    WHERE c.id IN (SELECT t.id FROM contacts t
                   WHERE t.id = ANY(ARRAY(SELECT DISTINCT contact_id FROM changed_rows))
                   ORDER BY t.id FOR NO KEY UPDATE);
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION labels_rename_touch_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE contacts c SET sync_seq = nextval('contact_sync_seq')
    WHERE c.id IN (SELECT t.id FROM contacts t
                   WHERE t.id = ANY(ARRAY(
                       SELECT cl.contact_id FROM contact_labels cl
                       JOIN new_rows n ON n.id = cl.label_id
                       JOIN old_rows o ON o.id = n.id
                       WHERE o.name IS DISTINCT FROM n.name))
                   ORDER BY t.id FOR NO KEY UPDATE);
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contacts_leave_tombstones() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(7303, hashtext(b::text)) FROM (SELECT DISTINCT book_id FROM old_rows) AS x(b);
    INSERT INTO contact_tombstones (book_id, sync_seq, contact_id, vcard_name)
    SELECT o.book_id, nextval('contact_sync_seq'), o.id, o.vcard_name FROM old_rows o
    WHERE EXISTS (SELECT 1 FROM book_teams b WHERE b.book_id = o.book_id);
    RETURN NULL;
END $$;
-- +goose StatementEnd
DROP FUNCTION contacts_touch(uuid[]);

-- +goose StatementBegin
CREATE FUNCTION contacts_take_sync_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(7303, hashtext(NEW.book_id::text));
    NEW.sync_seq := nextval('contact_sync_seq');
    RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_take_sync_seq BEFORE INSERT OR UPDATE ON contacts
    FOR EACH ROW EXECUTE FUNCTION contacts_take_sync_seq();

DROP TABLE contact_versions;
