-- +goose Up
-- Single sign-on (OpenID Connect) per team; owned by package accounts,
-- which owns the users, memberships and sessions an SSO login makes.

-- sso_configs: a team's identity provider. The client secret is sealed
-- with the settings key (never stored or shown in clear).
CREATE TABLE sso_configs (
    team_id              uuid PRIMARY KEY REFERENCES teams (id) ON DELETE CASCADE,
    issuer               text NOT NULL,
    client_id            text NOT NULL,
    client_secret_sealed bytea NOT NULL,
    default_role         text NOT NULL CHECK (default_role IN ('viewer', 'member')),
    groups_claim         text NOT NULL DEFAULT '',
    role_map             jsonb NOT NULL DEFAULT '{}',
    enforce              boolean NOT NULL DEFAULT false,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);

-- sso_domains: the email domains that sign in through a team's provider.
-- One team per domain, so an address leads to one provider.
CREATE TABLE sso_domains (
    domain  text PRIMARY KEY CHECK (domain = lower(domain)),
    team_id uuid NOT NULL REFERENCES sso_configs (team_id) ON DELETE CASCADE
);
CREATE INDEX sso_domains_team_idx ON sso_domains (team_id);

-- sso_states: sign-ins under way, between the redirect to the provider and
-- its return, in the database so any instance can take the return. Keyed
-- by the SHA-256 of the state; used once (deleted by the callback), at
-- most 10 minutes old, swept after that.
CREATE TABLE sso_states (
    state_hash    bytea PRIMARY KEY,
    team_id       uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    nonce         text NOT NULL,
    code_verifier text NOT NULL,
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL
);
CREATE INDEX sso_states_expires_idx ON sso_states (expires_at);

-- +goose Down
DROP TABLE sso_states;
DROP TABLE sso_domains;
DROP TABLE sso_configs;
