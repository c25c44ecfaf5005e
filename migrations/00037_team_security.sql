-- Team security: two-factor sign-in, session details, a team's 2FA
-- requirement, API key scope and expiry.
-- +goose Up

-- A user's TOTP secret, sealed with the settings key (AES-256-GCM, the user
-- id as additional data). totp_pending_secret is a setup not yet confirmed
-- by a code; totp_secret is set only once 2FA is on. totp_last_step is the
-- time step of the last accepted code: a code of that step or an earlier
-- one is refused, so a code works once.
ALTER TABLE users
    ADD COLUMN totp_secret         bytea,
    ADD COLUMN totp_pending_secret bytea,
    ADD COLUMN totp_enabled_at     timestamptz,
    ADD COLUMN totp_last_step      bigint NOT NULL DEFAULT 0;

-- Single-use recovery codes, stored as SHA-256 (each carries 80 random
-- bits, so a fast hash is safe). A used code keeps its row with used_at.
CREATE TABLE recovery_codes (
    user_id   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash bytea NOT NULL,
    used_at   timestamptz,
    PRIMARY KEY (user_id, code_hash)
);

-- The pending second step of a login: a right password for an account
-- with 2FA. The token is only in the login answer; the row keeps its
-- SHA-256. A success deletes the row, so the token works once.
CREATE TABLE mfa_challenges (
    token_hash bytea PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX mfa_challenges_expires_idx ON mfa_challenges (expires_at);

-- What the session list shows. last_seen_at is kept to the minute.
ALTER TABLE sessions
    ADD COLUMN last_seen_at timestamptz,
    ADD COLUMN ip           text NOT NULL DEFAULT '',
    ADD COLUMN user_agent   text NOT NULL DEFAULT '';

ALTER TABLE teams ADD COLUMN require_two_factor boolean NOT NULL DEFAULT false;

ALTER TABLE api_keys
    ADD COLUMN scope      text NOT NULL DEFAULT 'full' CHECK (scope IN ('full', 'read')),
    ADD COLUMN expires_at timestamptz;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN expires_at, DROP COLUMN scope;
ALTER TABLE teams DROP COLUMN require_two_factor;
ALTER TABLE sessions DROP COLUMN user_agent, DROP COLUMN ip, DROP COLUMN last_seen_at;
DROP TABLE mfa_challenges;
DROP TABLE recovery_codes;
ALTER TABLE users DROP COLUMN totp_last_step, DROP COLUMN totp_enabled_at, DROP COLUMN totp_pending_secret, DROP COLUMN totp_secret;
