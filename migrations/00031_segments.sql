-- Segments: saved rules over a book's contacts, evaluated whenever they
-- are read (the rule is compiled to SQL then), so nothing here holds
-- members. The rule is kept as the JSON the API takes and returns.
--
-- The engagement conditions (email.opened within the last N days, ...)
-- ask the delivery events of a book for one kind of event since a time;
-- the index below answers that from the index alone, with the contact and
-- campaign it needs, instead of scanning every event of the book.

-- +goose Up
CREATE TABLE segments (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    book_id     uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    description text NOT NULL DEFAULT '',
    rule        jsonb NOT NULL,
    created_by  uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
-- A name is unique in its book, compared as written; the list is sorted by it.
CREATE UNIQUE INDEX segments_book_name_key ON segments (book_id, name);

CREATE INDEX delivery_events_book_kind_idx ON delivery_events (book_id, kind, occurred_at)
    INCLUDE (contact_id, campaign_id);

-- +goose Down
DROP INDEX delivery_events_book_kind_idx;
DROP TABLE segments;
