-- +goose Up
-- The first answer to each Idempotency-Key of an API key, kept 24 hours
-- (package idempotency). The row is inserted before the request runs, so
-- a second instance given the same key sees it at once: status NULL is a
-- request still running. claim_id names the request that owns the row,
-- so only it stores the answer. No foreign key: a revoked key's rows go
-- with the retention prune, like the other short-lived tables.
CREATE TABLE idempotency_keys (
    api_key_id   uuid NOT NULL,
    key          text NOT NULL,
    claim_id     uuid NOT NULL,
    request_path text NOT NULL,
    request_hash text NOT NULL,
    status       integer,
    content_type text,
    body         bytea,
    created_at   timestamptz NOT NULL,
    completed_at timestamptz,
    PRIMARY KEY (api_key_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
