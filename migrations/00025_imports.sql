-- +goose Up
-- Imports of contacts from a CSV or vCard file into a book. The file is kept
-- in the database (import_files) so whichever instance takes the job can
-- read it; processed_rows is the checkpoint, written in the transaction of
-- each chunk of rows, so a resumed import starts after the last committed
-- chunk and never writes a row twice.
CREATE TABLE imports (
    id              uuid PRIMARY KEY,
    book_id         uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    team_id         uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    status          text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'canceled')),
    format          text NOT NULL CHECK (format IN ('csv', 'vcard')),
    mode            text NOT NULL CHECK (mode IN ('skip', 'update', 'create')),
    dry_run         boolean NOT NULL,
    create_labels   boolean NOT NULL,
    mapping         jsonb NOT NULL DEFAULT '{}',
    total_rows      integer NOT NULL DEFAULT 0,
    processed_rows  integer NOT NULL DEFAULT 0,
    created         integer NOT NULL DEFAULT 0,
    updated         integer NOT NULL DEFAULT 0,
    skipped         integer NOT NULL DEFAULT 0,
    failed          integer NOT NULL DEFAULT 0,
    errors          jsonb NOT NULL DEFAULT '[]',
    failure_reason  text,
    created_by      uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL,
    started_at      timestamptz,
    finished_at     timestamptz
);
CREATE INDEX imports_book_idx ON imports (book_id, created_at DESC, id DESC);

CREATE TABLE import_files (
    import_id uuid PRIMARY KEY REFERENCES imports (id) ON DELETE CASCADE,
    content   bytea NOT NULL
);
-- The files are read whole and never updated; keep them out of line
-- without compression attempts on already dense text.
ALTER TABLE import_files ALTER COLUMN content SET STORAGE EXTERNAL;

-- +goose Down
DROP TABLE import_files;
DROP TABLE imports;
