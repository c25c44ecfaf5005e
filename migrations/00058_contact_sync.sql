-- What address book clients (CardDAV) need of contacts, owned by package
-- contacts:
--   * sync_seq: a number from one sequence, taken again by every change
--     of the contact (its row, its labels, its custom values, the name of
--     one of its labels). A contact's ETag is its sync_seq; a book's sync
--     token is the largest sync_seq among its contacts and tombstones, so
--     "what changed since" is one range scan of (book_id, sync_seq).
--   * vcard_name: the resource name a client chose for a contact it
--     created ("<its UID>.vcf"), kept so the client finds it there again;
--     null for contacts made elsewhere (their name is "<id>.vcf").
--   * vcard_props: the vCard properties the client sent, as JSON
--     ({"NAME": [{"Value", "Params", "Group"}]}), so that what the service
--     has no field for (photos, X- properties, parameters, groups) is
--     returned as it came.
--   * contact_tombstones: a deleted contact of a book, so a sync can
--     report the deletion; pruned with the event retention.
--     contact_sync_horizons records, per book, the newest sync_seq pruned:
--     an older sync token can no longer be answered.
-- +goose Up
CREATE SEQUENCE contact_sync_seq;

ALTER TABLE contacts
    ADD COLUMN sync_seq    bigint NOT NULL DEFAULT nextval('contact_sync_seq'), -- the trigger below takes it
    ADD COLUMN vcard_name  text,
    ADD COLUMN vcard_props jsonb;
CREATE INDEX contacts_sync_idx ON contacts (book_id, sync_seq);
CREATE UNIQUE INDEX contacts_vcard_name_key ON contacts (book_id, vcard_name) WHERE vcard_name IS NOT NULL;

CREATE TABLE contact_tombstones (
    book_id    uuid NOT NULL,
    sync_seq   bigint NOT NULL,
    contact_id uuid NOT NULL,
    vcard_name text,
    deleted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (book_id, sync_seq)
);
CREATE INDEX contact_tombstones_deleted_idx ON contact_tombstones (deleted_at);

CREATE TABLE contact_sync_horizons (
    book_id        uuid PRIMARY KEY,
    pruned_through bigint NOT NULL
);

-- Every write of a contact's row takes a new number. Numbers are taken
-- in one order but committed in another, so a reader of a book's sync
-- token must not see number n+1 committed while n is still to come: the
-- writer holds the book's sync lock (advisory, (7303, hashtext(book id)))
-- shared from before it takes its number until it commits, and the
-- reader takes it exclusively for a moment (it waits for the writers in
-- flight), so every number below the token it reads is committed.
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

-- A change of a contact's labels or custom values is a change of the
-- contact: one statement per statement of the change, locking the
-- contacts in id order (so two bulk changes cannot deadlock).
-- +goose StatementBegin
CREATE FUNCTION contacts_touch_from_children() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE contacts c SET sync_seq = nextval('contact_sync_seq')
    WHERE c.id IN (SELECT t.id FROM contacts t
                   WHERE t.id = ANY(ARRAY(SELECT DISTINCT contact_id FROM changed_rows))
                   ORDER BY t.id FOR NO KEY UPDATE);
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contact_labels_touch_insert AFTER INSERT ON contact_labels
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_touch_from_children();
CREATE TRIGGER contact_labels_touch_delete AFTER DELETE ON contact_labels
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_touch_from_children();
CREATE TRIGGER contact_field_values_touch_insert AFTER INSERT ON contact_field_values
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_touch_from_children();
CREATE TRIGGER contact_field_values_touch_update AFTER UPDATE ON contact_field_values
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_touch_from_children();
CREATE TRIGGER contact_field_values_touch_delete AFTER DELETE ON contact_field_values
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_touch_from_children();

-- A renamed label changes the cards (CATEGORIES) of its contacts.
-- +goose StatementBegin
CREATE FUNCTION labels_rename_touch_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER labels_rename_touch_contacts AFTER UPDATE ON labels
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION labels_rename_touch_contacts();

-- A deleted contact leaves a tombstone in its book, unless the book
-- itself is going (a deleted book has nobody to tell).
-- +goose StatementBegin
CREATE FUNCTION contacts_leave_tombstones() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(7303, hashtext(b::text)) FROM (SELECT DISTINCT book_id FROM old_rows) AS x(b);
    INSERT INTO contact_tombstones (book_id, sync_seq, contact_id, vcard_name)
    SELECT o.book_id, nextval('contact_sync_seq'), o.id, o.vcard_name FROM old_rows o
    WHERE EXISTS (SELECT 1 FROM book_teams b WHERE b.book_id = o.book_id);
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_leave_tombstones AFTER DELETE ON contacts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_leave_tombstones();

-- The read model lists every column of contacts.
CREATE OR REPLACE VIEW contact_records AS
SELECT id, book_id, first_name, last_name, company, job_title, notes, website,
       emails, phones, addresses, dates, socials, relationships, photo_url,
       starred, birthday, suppressed_at, created_by, created_at, updated_at,
       search, sort_name, time_zone, sync_seq, vcard_name, vcard_props
FROM contacts;

-- +goose Down
DROP VIEW contact_records;
CREATE VIEW contact_records AS
SELECT id, book_id, first_name, last_name, company, job_title, notes, website,
       emails, phones, addresses, dates, socials, relationships, photo_url,
       starred, birthday, suppressed_at, created_by, created_at, updated_at,
       search, sort_name, time_zone
FROM contacts;
COMMENT ON VIEW contact_records IS 'Owned by package contacts: the contact rows, for the set statements of other packages (campaign audiences, claims and enrollment, segment counts) whose segment rules may test any column.';
DROP TRIGGER contacts_leave_tombstones ON contacts;
DROP FUNCTION contacts_leave_tombstones();
DROP TRIGGER labels_rename_touch_contacts ON labels;
DROP FUNCTION labels_rename_touch_contacts();
DROP TRIGGER contact_field_values_touch_delete ON contact_field_values;
DROP TRIGGER contact_field_values_touch_update ON contact_field_values;
DROP TRIGGER contact_field_values_touch_insert ON contact_field_values;
DROP TRIGGER contact_labels_touch_delete ON contact_labels;
DROP TRIGGER contact_labels_touch_insert ON contact_labels;
DROP FUNCTION contacts_touch_from_children();
DROP TRIGGER contacts_take_sync_seq ON contacts;
DROP FUNCTION contacts_take_sync_seq();
DROP TABLE contact_sync_horizons;
DROP TABLE contact_tombstones;
DROP INDEX contacts_vcard_name_key;
DROP INDEX contacts_sync_idx;
ALTER TABLE contacts DROP COLUMN vcard_props, DROP COLUMN vcard_name, DROP COLUMN sync_seq;
DROP SEQUENCE contact_sync_seq;
