-- +goose Up
-- Concurrent writes to one book no longer queue on the book's row.
--
-- Every contact insert used to lock its book's row three times: the
-- foreign key check (FOR KEY SHARE), the email trigger (FOR SHARE) and the
-- contact counter (UPDATE books SET contact_count = ...). The counter
-- update serialised all creates of a book until commit, and the shared
-- locks of concurrent transactions turned the row's lock into a growing
-- MultiXact that every reader of the row had to resolve: 20 clients
-- creating contacts in one book got 120 to 360 creates/s, waiting on
-- transactionid locks and the MultiXact SLRU, and reads of the book (every
-- contact request checks it) waited with them.
--
-- Now:
-- - The count lives in book_contact_counts, spread over 64 slots per book
--   (a connection always updates the slot of its backend pid), summed when
--   read.
-- - contacts.book_id has no foreign key. What it guaranteed (no contact in
--   a deleted book) is kept with a transaction-level advisory lock per
--   book, which lives in the lock manager and writes nothing to the row:
--   writers of contacts and of their email rows hold it shared; deleting a
--   book, or switching its unique-email enforcement, holds it exclusively.
--   An insert also checks that its book still exists once it holds the
--   lock, so an insert racing a book deletion fails like a foreign key
--   would (SQLSTATE 23503, constraint contacts_book_id_fkey).
-- - Deleting a book deletes its contacts and counter rows in statement
--   triggers.
--
-- The advisory lock is (7301, hashtext(book id)); 7301 names books among the
-- service's advisory locks (the two-key form does not collide with goose's).

CREATE TABLE book_contact_counts (
    book_id uuid NOT NULL,     -- books (id), see above
    slot    smallint NOT NULL, -- 0..63
    n       bigint NOT NULL,
    PRIMARY KEY (book_id, slot)
);
INSERT INTO book_contact_counts (book_id, slot, n)
SELECT id, 0, contact_count FROM books WHERE contact_count <> 0;
ALTER TABLE books DROP COLUMN contact_count;

ALTER TABLE contacts DROP CONSTRAINT contacts_book_id_fkey;

DROP TRIGGER contacts_count_insert ON contacts;
DROP FUNCTION contacts_count_insert();
DROP TRIGGER contacts_emails_insert ON contacts;
DROP FUNCTION contacts_emails_insert();

-- New contacts: hold their books, check the books exist, add the email
-- rows (with each book's enforcement flag, stable while the lock is held)
-- and count them.
-- +goose StatementBegin
CREATE FUNCTION contacts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids uuid[] := ARRAY(SELECT DISTINCT book_id FROM new_rows ORDER BY book_id);
    id  uuid;
BEGIN
    FOREACH id IN ARRAY ids LOOP
        PERFORM pg_advisory_xact_lock_shared(7301, hashtext(id::text));
    END LOOP;
    IF EXISTS (SELECT 1 FROM unnest(ids) AS i(id) WHERE NOT EXISTS (SELECT 1 FROM books b WHERE b.id = i.id)) THEN
        RAISE EXCEPTION 'insert or update on table "contacts" violates foreign key constraint "contacts_book_id_fkey"'
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'contacts_book_id_fkey', TABLE = 'contacts',
                  DETAIL = 'The book does not exist.';
    END IF;
    INSERT INTO contact_emails (contact_id, book_id, address_lower, enforced)
    SELECT DISTINCT n.id, n.book_id, lower(e.value ->> 'address'), b.enforce_unique_emails
    FROM new_rows n
    JOIN books b ON b.id = n.book_id
    CROSS JOIN LATERAL jsonb_array_elements(n.emails) e
    WHERE coalesce(e.value ->> 'address', '') <> '';
    INSERT INTO book_contact_counts AS k (book_id, slot, n)
    SELECT book_id, pg_backend_pid() % 64, count(*) FROM new_rows GROUP BY book_id
    ON CONFLICT (book_id, slot) DO UPDATE SET n = k.n + EXCLUDED.n;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_after_insert AFTER INSERT ON contacts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_after_insert();

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contacts_count_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO book_contact_counts AS k (book_id, slot, n)
    SELECT book_id, pg_backend_pid() % 64, -count(*) FROM old_rows GROUP BY book_id
    ON CONFLICT (book_id, slot) DO UPDATE SET n = k.n + EXCLUDED.n;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- A contact's emails changed: replace its rows, under the book's lock.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contacts_emails_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    enforce boolean;
BEGIN
    PERFORM pg_advisory_xact_lock_shared(7301, hashtext(NEW.book_id::text));
    SELECT enforce_unique_emails INTO enforce FROM books WHERE id = NEW.book_id;
    DELETE FROM contact_emails WHERE contact_id = NEW.id;
    INSERT INTO contact_emails (contact_id, book_id, address_lower, enforced)
    SELECT DISTINCT NEW.id, NEW.book_id, lower(e.value ->> 'address'), enforce
    FROM jsonb_array_elements(NEW.emails) e
    WHERE coalesce(e.value ->> 'address', '') <> '';
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- Switching enforcement waits for the book's contact writers, then marks
-- every address of the book; with duplicates present the unique index
-- refuses and the book update fails.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION books_enforce_emails() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7301, hashtext(NEW.id::text));
    UPDATE contact_emails SET enforced = NEW.enforce_unique_emails WHERE book_id = NEW.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- Deleting a book: wait for its contact writers, then take its contacts
-- (their own triggers and foreign keys cascade further) and its counter.
-- +goose StatementBegin
CREATE FUNCTION books_hold_for_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7301, hashtext(OLD.id::text));
    RETURN OLD;
END $$;
-- +goose StatementEnd
CREATE TRIGGER books_hold_for_delete BEFORE DELETE ON books
    FOR EACH ROW EXECUTE FUNCTION books_hold_for_delete();

-- +goose StatementBegin
CREATE FUNCTION books_delete_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM contacts c USING old_rows o WHERE c.book_id = o.id;
    DELETE FROM book_contact_counts k USING old_rows o WHERE k.book_id = o.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER books_delete_contacts AFTER DELETE ON books
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION books_delete_contacts();

-- +goose Down
DROP TRIGGER books_delete_contacts ON books;
DROP FUNCTION books_delete_contacts();
DROP TRIGGER books_hold_for_delete ON books;
DROP FUNCTION books_hold_for_delete();
DROP TRIGGER contacts_after_insert ON contacts;
DROP FUNCTION contacts_after_insert();

ALTER TABLE books ADD COLUMN contact_count bigint NOT NULL DEFAULT 0;
UPDATE books b SET contact_count = k.n FROM (SELECT book_id, sum(n) AS n FROM book_contact_counts GROUP BY book_id) k
WHERE k.book_id = b.id;

-- +goose StatementBegin
CREATE FUNCTION contacts_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE books b SET contact_count = b.contact_count + n.cnt
    FROM (SELECT book_id, count(*) AS cnt FROM new_rows GROUP BY book_id) n
    WHERE b.id = n.book_id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_count_insert AFTER INSERT ON contacts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contacts_count_insert();
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contacts_count_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE books b SET contact_count = b.contact_count - o.cnt
    FROM (SELECT book_id, count(*) AS cnt FROM old_rows GROUP BY book_id) o
    WHERE b.id = o.book_id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
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
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contacts_emails_update() RETURNS trigger LANGUAGE plpgsql AS $$
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
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION books_enforce_emails() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE contact_emails SET enforced = NEW.enforce_unique_emails WHERE book_id = NEW.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
DROP TABLE book_contact_counts;
DELETE FROM contacts c WHERE NOT EXISTS (SELECT 1 FROM books b WHERE b.id = c.book_id);
ALTER TABLE contacts ADD CONSTRAINT contacts_book_id_fkey FOREIGN KEY (book_id) REFERENCES books (id) ON DELETE CASCADE;
