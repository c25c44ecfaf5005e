-- Suppressions match on the SHA-256 of the lower-cased address, so that an
-- erased person's suppressions keep blocking without keeping the address:
-- erasure sets `email` to NULL and leaves `email_hash`. Every reader
-- (sending, enrollment marks, imports, forms) compares hashes; a trigger
-- fills the hash from the address on every write that carries one.

-- +goose Up
ALTER TABLE suppressions ADD COLUMN email_hash text;
UPDATE suppressions SET email_hash = encode(sha256(convert_to(email, 'UTF8')), 'hex');
ALTER TABLE suppressions ALTER COLUMN email_hash SET NOT NULL,
                         ALTER COLUMN email DROP NOT NULL;

-- +goose StatementBegin
CREATE FUNCTION suppressions_hash_email() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.email IS NOT NULL THEN
        NEW.email_hash := encode(sha256(convert_to(NEW.email, 'UTF8')), 'hex');
    END IF;
    RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER suppressions_hash_email BEFORE INSERT OR UPDATE OF email ON suppressions
    FOR EACH ROW EXECUTE FUNCTION suppressions_hash_email();

DROP INDEX suppressions_in_force_key;
CREATE UNIQUE INDEX suppressions_in_force_key ON suppressions (book_id, email_hash) WHERE lifted_at IS NULL;
CREATE INDEX suppressions_hash_idx ON suppressions (book_id, email_hash);

-- +goose Down
DROP INDEX suppressions_hash_idx;
DROP INDEX suppressions_in_force_key;
DELETE FROM suppressions WHERE email IS NULL;
CREATE UNIQUE INDEX suppressions_in_force_key ON suppressions (book_id, email) WHERE lifted_at IS NULL;
DROP TRIGGER suppressions_hash_email ON suppressions;
DROP FUNCTION suppressions_hash_email();
ALTER TABLE suppressions ALTER COLUMN email SET NOT NULL, DROP COLUMN email_hash;
