-- Sign-up forms: the forms of a book, the submissions held for a double
-- opt-in confirmation, and the consent records of contacts. Labels gain
-- `public` and `description`: public labels are the topics a person may
-- choose on a form and on the preference page.
--
-- A held submission carries the address and values a person typed until it
-- is confirmed or its 7 days pass; then a periodic job deletes it. The
-- confirmation token is stored only as its SHA-256.

-- +goose Up
ALTER TABLE labels
    ADD COLUMN public      boolean NOT NULL DEFAULT false,
    ADD COLUMN description text NOT NULL DEFAULT '' CHECK (length(description) <= 1000);

CREATE TABLE forms (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    book_id           uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    name              text NOT NULL,
    fields            jsonb NOT NULL DEFAULT '[]',
    label_ids         uuid[] NOT NULL DEFAULT '{}',
    double_opt_in     boolean NOT NULL DEFAULT true,
    consent_text      text NOT NULL DEFAULT '',
    success_message   text NOT NULL DEFAULT '',
    redirect_url      text NOT NULL DEFAULT '',
    enabled           boolean NOT NULL DEFAULT true,
    created_by        uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL
);
CREATE INDEX forms_book_name_idx ON forms (book_id, name, id);

-- A form's submission and sign-up counts, spread over 16 rows per form
-- that each write adds to at random and reads sum: one counter row would
-- be locked by every submission's transaction until it commits, so a busy
-- form's posts would commit one at a time.
CREATE TABLE form_counts (
    form_id     uuid NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    shard       smallint NOT NULL,
    submissions bigint NOT NULL DEFAULT 0,
    confirmed   bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (form_id, shard)
);

-- One row per accepted submission of a double opt-in form, from the post
-- until it is confirmed (confirmed_at) or deleted after expires_at.
-- mailed says whether a confirmation email was queued for it (the
-- per-address cap counts these); sending_at is stamped, and committed,
-- before the provider is called (a retry that finds it stamped does not
-- send again), sent_at is when the provider took it.
CREATE TABLE form_submissions (
    id           uuid PRIMARY KEY,
    form_id      uuid NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    book_id      uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    email        text NOT NULL CHECK (email = lower(email)),
    fields       jsonb NOT NULL DEFAULT '{}',
    topic_ids    uuid[] NOT NULL DEFAULT '{}',
    consent_text text NOT NULL DEFAULT '',
    ip           text NOT NULL DEFAULT '',
    user_agent   text NOT NULL DEFAULT '',
    token_hash   bytea NOT NULL UNIQUE,
    mailed       boolean NOT NULL,
    sending_at   timestamptz,
    sent_at      timestamptz,
    submitted_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    confirmed_at timestamptz
);
CREATE INDEX form_submissions_address_idx ON form_submissions (form_id, email, submitted_at);
CREATE INDEX form_submissions_book_address_idx ON form_submissions (book_id, email);
CREATE INDEX form_submissions_expiry_idx ON form_submissions (expires_at);

-- Submissions counted per client IP and form, for the limit of 10 in 10
-- minutes; counted in the database so the limit holds across instances.
CREATE TABLE form_post_counts (
    form_id      uuid NOT NULL,
    ip           text NOT NULL,
    window_start timestamptz NOT NULL,
    n            integer NOT NULL,
    PRIMARY KEY (form_id, ip, window_start)
);
CREATE INDEX form_post_counts_window_idx ON form_post_counts (window_start);

-- What a person agreed to, when and from where.
CREATE TABLE consents (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    contact_id   uuid NOT NULL, -- contacts (id), see the trigger below
    book_id      uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    form_id      uuid REFERENCES forms (id) ON DELETE SET NULL,
    method       text NOT NULL CHECK (method IN ('single', 'double')),
    text         text NOT NULL,
    ip           text NOT NULL,
    user_agent   text NOT NULL,
    submitted_at timestamptz NOT NULL,
    confirmed_at timestamptz NOT NULL
);
CREATE INDEX consents_contact_idx ON consents (contact_id, confirmed_at);

-- Like the other tables that hang off a contact, consents carry no foreign
-- key to contacts (a per-row check on every bulk delete): a statement-level
-- trigger deletes them with their contacts, and their writer holds the
-- contact it writes for (it created or updated it in the same transaction).
-- +goose StatementBegin
CREATE FUNCTION contacts_delete_consents() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM consents WHERE contact_id = ANY(ARRAY(SELECT id FROM old_rows));
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_delete_consents AFTER DELETE ON contacts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_delete_consents();

-- +goose Down
DROP TRIGGER contacts_delete_consents ON contacts;
DROP FUNCTION contacts_delete_consents();
DROP TABLE consents;
DROP TABLE form_post_counts;
DROP TABLE form_submissions;
DROP TABLE form_counts;
DROP TABLE forms;
ALTER TABLE labels DROP COLUMN description, DROP COLUMN public;
