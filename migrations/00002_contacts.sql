-- +goose Up
-- Contacts, their labels, custom field values and interactions.

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
    emails        jsonb NOT NULL DEFAULT '[]',
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
    contact_id uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    label_id   uuid NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (contact_id, label_id)
);
CREATE INDEX contact_labels_label_idx ON contact_labels (label_id, contact_id);

CREATE TABLE contact_field_values (
    contact_id uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    field_id   uuid NOT NULL REFERENCES field_definitions (id) ON DELETE CASCADE,
    value      text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (contact_id, field_id)
);
CREATE INDEX contact_field_values_field_idx ON contact_field_values (field_id);

-- Things that happened with a contact (campaign emails sent, ...).
CREATE TABLE interactions (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    contact_id  uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    kind        text NOT NULL,
    detail      jsonb NOT NULL DEFAULT '{}',
    occurred_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX interactions_contact_idx ON interactions (contact_id, occurred_at);

-- +goose Down
DROP TABLE interactions;
DROP TABLE contact_field_values;
DROP TABLE contact_labels;
DROP TABLE contacts;
DROP FUNCTION contacts_count_insert();
DROP FUNCTION contacts_count_delete();
