-- App passwords (owned by accounts): what a phone or desktop address book
-- signs in with over CardDAV (HTTP Basic, the account's email and one of
-- these), since no two-factor prompt can reach a client's settings. The
-- password itself is shown once; the row keeps its SHA-256 (each carries
-- 100 random bits, so a fast hash is safe and keeps every request's check
-- one indexed lookup). Deleting the row revokes it. last_used_at is kept
-- to the minute.
-- +goose Up
CREATE TABLE app_passwords (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          text NOT NULL,
    password_hash bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_used_at  timestamptz
);
CREATE UNIQUE INDEX app_passwords_hash_key ON app_passwords (password_hash);
CREATE INDEX app_passwords_user_idx ON app_passwords (user_id, created_at);

-- +goose Down
DROP TABLE app_passwords;
