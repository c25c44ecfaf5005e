-- Suppressions: one record per address and book that campaign email must
-- not reach, with why (reason) and where it came from (source). Lifting a
-- suppression keeps the record with who lifted it and when; at most one
-- record per address and book is in force.
--
-- contacts.suppressed_at stays the mark that enrollment and sending read:
-- a contact is marked when every address it holds is suppressed.

-- +goose Up
CREATE TABLE suppressions (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    book_id    uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    email      text NOT NULL CHECK (email = lower(email) AND email <> ''),
    reason     text NOT NULL CHECK (reason IN ('unsubscribe', 'bounce', 'complaint', 'dropped', 'manual')),
    source     text NOT NULL CHECK (source IN ('unsubscribe_page', 'provider', 'api', 'import')),
    created_at timestamptz NOT NULL,
    created_by uuid REFERENCES users (id) ON DELETE SET NULL,
    lifted_at  timestamptz,
    lifted_by  uuid REFERENCES users (id) ON DELETE SET NULL
);
CREATE UNIQUE INDEX suppressions_in_force_key ON suppressions (book_id, email) WHERE lifted_at IS NULL;
CREATE INDEX suppressions_book_created_idx ON suppressions (book_id, created_at, id);

-- +goose Down
DROP TABLE suppressions;
