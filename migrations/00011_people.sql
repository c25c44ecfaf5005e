-- +goose Up
-- Login sessions, invitations, password resets, login and reset throttles,
-- and the outbox of account emails.

-- Every login token names its session; a token is accepted only while its
-- row exists. Logout deletes one row, a password change or reset all rows
-- of the user. Rows past expires_at are swept.
CREATE TABLE sessions (
    id         uuid PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_user_idx ON sessions (user_id);
CREATE INDEX sessions_expires_idx ON sessions (expires_at);

-- A pending invitation per team and address; the token is only in the
-- email, the row keeps its SHA-256. Accepted invitations are kept until
-- swept; replaced and revoked ones are deleted, so their links die.
CREATE TABLE invitations (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    team_id     uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    email       text NOT NULL,
    role        text NOT NULL CHECK (role IN ('viewer', 'member', 'admin', 'owner')),
    token_hash  bytea NOT NULL,
    invited_by  uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    accepted_at timestamptz
);
CREATE UNIQUE INDEX invitations_token_key ON invitations (token_hash);
CREATE UNIQUE INDEX invitations_pending_key ON invitations (team_id, lower(email)) WHERE accepted_at IS NULL;
CREATE INDEX invitations_expires_idx ON invitations (expires_at);

-- One live reset per user: a new one replaces the row, so the old link dies.
CREATE TABLE password_resets (
    user_id    uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    token_hash bytea NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX password_resets_token_key ON password_resets (token_hash);

-- Attempt counters of login and reset requests, one row per key (an email
-- or a client IP) and window, shared by every instance.
CREATE TABLE auth_throttles (
    key          text PRIMARY KEY,
    window_start timestamptz NOT NULL,
    n            integer NOT NULL
);
CREATE INDEX auth_throttles_window_idx ON auth_throttles (window_start);

-- Account emails written in the transaction that asks for them and sent by
-- a worker after commit. A row is deleted once sent; next_attempt_at is
-- both the retry time and the lease of a worker that claimed it.
CREATE TABLE account_emails (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    kind            text NOT NULL,
    to_email        text NOT NULL,
    to_name         text NOT NULL DEFAULT '',
    subject         text NOT NULL,
    html            text NOT NULL,
    text            text NOT NULL,
    link            text NOT NULL,
    created_at      timestamptz NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    failed_at       timestamptz,
    last_error      text
);
CREATE INDEX account_emails_due_idx ON account_emails (next_attempt_at) WHERE failed_at IS NULL;

-- +goose Down
DROP TABLE account_emails;
DROP TABLE auth_throttles;
DROP TABLE password_resets;
DROP TABLE invitations;
DROP TABLE sessions;
