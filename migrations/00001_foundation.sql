-- +goose Up
-- Accounts, teams, API keys, books, labels, custom field definitions and
-- the events outbox that webhooks deliver from.

CREATE TABLE users (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email         text NOT NULL,
    name          text NOT NULL,
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
-- Emails compare case-insensitively.
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE teams (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                   text NOT NULL,
    campaign_addon         text NOT NULL DEFAULT 'none'
                           CHECK (campaign_addon IN ('none', 'trial', 'active', 'canceled')),
    trial_ends_at          timestamptz,
    trial_started_at       timestamptz,
    stripe_customer_id     text,
    stripe_subscription_id text,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE team_members (
    team_id   uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role      text NOT NULL CHECK (role IN ('viewer', 'member', 'admin', 'owner')),
    joined_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user_idx ON team_members (user_id);

CREATE TABLE api_keys (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    team_id      uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    name         text NOT NULL,
    prefix       text NOT NULL,
    key_hash     bytea NOT NULL,
    created_by   uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz
);
-- Authenticating a key is this one indexed lookup.
CREATE UNIQUE INDEX api_keys_hash_key ON api_keys (key_hash);
CREATE INDEX api_keys_team_idx ON api_keys (team_id, created_at);

CREATE TABLE books (
    id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    team_id               uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    name                  text NOT NULL,
    slug                  text NOT NULL,
    color                 text NOT NULL DEFAULT '#4F46E5',
    icon                  text NOT NULL DEFAULT 'book',
    enforce_unique_emails boolean NOT NULL DEFAULT false,
    -- Kept by statement-level triggers on contacts so that counting a
    -- 100k-contact book never rescans it.
    contact_count         bigint NOT NULL DEFAULT 0,
    created_by            uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT books_team_slug_key UNIQUE (team_id, slug)
);

CREATE TABLE labels (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    book_id    uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    name       text NOT NULL,
    color      text NOT NULL DEFAULT '#6B7280',
    sort_order integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX labels_book_idx ON labels (book_id, sort_order);

CREATE TABLE field_definitions (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    book_id    uuid NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    key        text NOT NULL CHECK (key ~ '^[a-z][a-z0-9_]{0,63}$'),
    name       text NOT NULL,
    type       text NOT NULL CHECK (type IN ('text', 'url', 'number', 'date')),
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT field_definitions_book_key_key UNIQUE (book_id, key)
);

-- The transactional outbox: a change and its event commit together. body is
-- the exact webhook request body, built once and re-sent byte for byte.
CREATE TABLE events (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    team_id     uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    book_id     uuid,
    type        text NOT NULL,
    body        bytea NOT NULL,
    occurred_at timestamptz NOT NULL DEFAULT now(),
    -- Set once the event has been fanned out into webhook deliveries.
    dispatched_at timestamptz
);
CREATE INDEX events_undispatched_idx ON events (occurred_at) WHERE dispatched_at IS NULL;
CREATE INDEX events_team_idx ON events (team_id, occurred_at);

-- +goose Down
DROP TABLE events;
DROP TABLE field_definitions;
DROP TABLE labels;
DROP TABLE books;
DROP TABLE api_keys;
DROP TABLE team_members;
DROP TABLE teams;
DROP TABLE users;
