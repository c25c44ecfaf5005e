-- +goose Up
-- Contacts, their labels, custom field values, email index and interactions.
--
-- The tables that hang off a contact (contact_labels, contact_field_values,
-- contact_emails, interactions) carry no foreign keys. PostgreSQL checks and
-- cascades a foreign key with one internal query per row; on a bulk
-- operation over 10,000 contacts that alone costs about 0.1 s per key and
-- table. Instead, statement-level triggers below delete the dependent rows
-- set-based (one statement per parent statement), and every writer of a
-- dependent row locks its parents (FOR KEY SHARE, or by updating them) in
-- the same statement, which is the same guarantee a foreign key gives: a
-- parent deleted concurrently either waits for the writer or is skipped.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE contacts (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    book_id       uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    first_name    text NOT NULL DEFAULT '',
    last_name     text NOT NULL DEFAULT '',
    company       text NOT NULL DEFAULT '',
    job_title     text NOT NULL DEFAULT '',
    notes         text NOT NULL DEFAULT '',
    website       text NOT NULL DEFAULT '',
    emails        jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(emails) = 'array'),
    phones        jsonb NOT NULL DEFAULT '[]',
    addresses     jsonb NOT NULL DEFAULT '[]',
    dates         jsonb NOT NULL DEFAULT '[]',
    socials       jsonb NOT NULL DEFAULT '[]',
    relationships jsonb NOT NULL DEFAULT '[]',
    photo_url     text,
    starred       boolean NOT NULL DEFAULT false,
    birthday      date,
    -- Set by "unsubscribe from all": no campaign email reaches the contact.
    suppressed_at timestamptz,
    created_by    uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    -- What `q` searches: names, company and every email, lower-cased.
    search        text GENERATED ALWAYS AS (
                      lower(first_name || ' ' || last_name || ' ' || company || ' ' || jsonb_path_query_array(emails, '$[*].address')::text)
                  ) STORED,
    sort_name     text GENERATED ALWAYS AS (lower(btrim(first_name || ' ' || last_name || ' ' || company))) STORED
);
CREATE INDEX contacts_book_created_idx ON contacts (book_id, created_at, id);
CREATE INDEX contacts_book_updated_idx ON contacts (book_id, updated_at, id);
CREATE INDEX contacts_book_name_idx ON contacts (book_id, sort_name, id);
CREATE INDEX contacts_book_starred_idx ON contacts (book_id, created_at, id) WHERE starred;
CREATE INDEX contacts_search_trgm_idx ON contacts USING gin (search gin_trgm_ops);

-- Keep books.contact_count exact with one UPDATE per statement, so a bulk
-- delete of 10,000 contacts costs one counter update, not 10,000.
-- +goose StatementBegin
CREATE FUNCTION contacts_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE books b SET contact_count = b.contact_count + n.cnt
    FROM (SELECT book_id, count(*) AS cnt FROM new_rows GROUP BY book_id) n
    WHERE b.id = n.book_id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION contacts_count_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE books b SET contact_count = b.contact_count - o.cnt
    FROM (SELECT book_id, count(*) AS cnt FROM old_rows GROUP BY book_id) o
    WHERE b.id = o.book_id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_count_insert AFTER INSERT ON contacts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_count_insert();
CREATE TRIGGER contacts_count_delete AFTER DELETE ON contacts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_count_delete();

CREATE TABLE contact_labels (
    contact_id uuid NOT NULL, -- contacts (id), see the note at the top
    label_id   uuid NOT NULL, -- labels (id)
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (contact_id, label_id)
);
CREATE INDEX contact_labels_label_idx ON contact_labels (label_id, contact_id);

CREATE TABLE contact_field_values (
    contact_id uuid NOT NULL, -- contacts (id)
    field_id   uuid NOT NULL, -- field_definitions (id)
    value      text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (contact_id, field_id)
);
CREATE INDEX contact_field_values_field_idx ON contact_field_values (field_id);

-- Things that happened with a contact (campaign emails sent, ...). Writers
-- insert with INSERT ... SELECT FROM contacts ... FOR KEY SHARE (or hold the
-- contact row otherwise) so a concurrent delete cannot leave orphans.
CREATE TABLE interactions (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    contact_id  uuid NOT NULL, -- contacts (id)
    kind        text NOT NULL,
    detail      jsonb NOT NULL DEFAULT '{}',
    occurred_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX interactions_contact_idx ON interactions (contact_id, occurred_at);

-- Every email address of every contact, lower-cased, with whether its book
-- requires unique emails. The partial unique index is what enforces unique
-- emails: two concurrent requests adding the same address cannot both
-- commit, whatever they checked before. Triggers keep the table in step
-- with contacts.emails and with books.enforce_unique_emails; the check-email
-- endpoint reads it too.
CREATE TABLE contact_emails (
    contact_id    uuid NOT NULL, -- contacts (id)
    book_id       uuid NOT NULL,
    address_lower text NOT NULL,
    enforced      boolean NOT NULL,
    PRIMARY KEY (contact_id, address_lower)
);
CREATE INDEX contact_emails_book_address_idx ON contact_emails (book_id, address_lower);
CREATE UNIQUE INDEX contact_emails_enforced_key ON contact_emails (book_id, address_lower) WHERE enforced;

-- contact_emails rows of new contacts. The books rows are locked FOR SHARE
-- first so the enforce flag read here cannot change under the insert (a
-- concurrent toggle waits, then sees these rows).
-- +goose StatementBegin
CREATE FUNCTION contacts_emails_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM books WHERE id IN (SELECT DISTINCT book_id FROM new_rows) FOR SHARE;
    INSERT INTO contact_emails (contact_id, book_id, address_lower, enforced)
    SELECT DISTINCT n.id, n.book_id, lower(e.value ->> 'address'), b.enforce_unique_emails
    FROM new_rows n
    JOIN books b ON b.id = n.book_id
    CROSS JOIN LATERAL jsonb_array_elements(n.emails) e
    WHERE coalesce(e.value ->> 'address', '') <> '';
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_emails_insert AFTER INSERT ON contacts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_emails_insert();

-- A contact's emails changed (one contact per patch): replace its rows.
-- +goose StatementBegin
CREATE FUNCTION contacts_emails_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    enforce boolean;
BEGIN
    SELECT enforce_unique_emails INTO enforce FROM books WHERE id = NEW.book_id FOR SHARE;
    DELETE FROM contact_emails WHERE contact_id = NEW.id;
    INSERT INTO contact_emails (contact_id, book_id, address_lower, enforced)
    SELECT DISTINCT NEW.id, NEW.book_id, lower(e.value ->> 'address'), enforce
    FROM jsonb_array_elements(NEW.emails) e
    WHERE coalesce(e.value ->> 'address', '') <> '';
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_emails_update AFTER UPDATE OF emails, book_id ON contacts
    FOR EACH ROW WHEN (OLD.emails IS DISTINCT FROM NEW.emails OR OLD.book_id IS DISTINCT FROM NEW.book_id)
    EXECUTE FUNCTION contacts_emails_update();

-- Turning enforcement on marks every address of the book enforced; with
-- duplicates present the unique index refuses and the book update fails.
-- +goose StatementBegin
CREATE FUNCTION books_enforce_emails() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE contact_emails SET enforced = NEW.enforce_unique_emails WHERE book_id = NEW.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER books_enforce_emails AFTER UPDATE OF enforce_unique_emails ON books
    FOR EACH ROW WHEN (OLD.enforce_unique_emails IS DISTINCT FROM NEW.enforce_unique_emails)
    EXECUTE FUNCTION books_enforce_emails();

-- The set-based cascades that stand in for foreign keys (see the top). The
-- ids are taken out of the (wide) transition table first, so each delete
-- is an index lookup by id rather than a join against whole rows.
-- +goose StatementBegin
CREATE FUNCTION contacts_delete_dependents() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids uuid[] := ARRAY(SELECT id FROM old_rows);
BEGIN
    DELETE FROM contact_labels WHERE contact_id = ANY(ids);
    DELETE FROM contact_field_values WHERE contact_id = ANY(ids);
    DELETE FROM contact_emails WHERE contact_id = ANY(ids);
    DELETE FROM interactions WHERE contact_id = ANY(ids);
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_delete_dependents AFTER DELETE ON contacts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_delete_dependents();

-- +goose StatementBegin
CREATE FUNCTION labels_delete_dependents() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM contact_labels WHERE label_id = ANY(ARRAY(SELECT id FROM old_rows));
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER labels_delete_dependents AFTER DELETE ON labels
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION labels_delete_dependents();

-- +goose StatementBegin
CREATE FUNCTION field_definitions_delete_dependents() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM contact_field_values WHERE field_id = ANY(ARRAY(SELECT id FROM old_rows));
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER field_definitions_delete_dependents AFTER DELETE ON field_definitions
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION field_definitions_delete_dependents();

-- +goose Down
DROP TRIGGER field_definitions_delete_dependents ON field_definitions;
DROP TRIGGER labels_delete_dependents ON labels;
DROP TRIGGER books_enforce_emails ON books;
DROP TABLE contact_emails;
DROP TABLE interactions;
DROP TABLE contact_field_values;
DROP TABLE contact_labels;
DROP TABLE contacts;
DROP FUNCTION field_definitions_delete_dependents();
DROP FUNCTION labels_delete_dependents();
DROP FUNCTION contacts_delete_dependents();
DROP FUNCTION books_enforce_emails();
DROP FUNCTION contacts_emails_update();
DROP FUNCTION contacts_emails_insert();
DROP FUNCTION contacts_count_insert();
DROP FUNCTION contacts_count_delete();
