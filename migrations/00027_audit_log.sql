-- The team's audit log: who did what, written in the transaction of the
-- change it records. The service only ever inserts rows; retention deletes
-- rows older than the configured age (at least 400 days).
-- +goose Up
CREATE TABLE audit_log (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    team_id     uuid NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    actor_type  text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'system')),
    actor_id    uuid,
    actor_name  text NOT NULL DEFAULT '',
    action      text NOT NULL,
    target_type text NOT NULL DEFAULT '',
    target_id   text NOT NULL DEFAULT '',
    ip          text NOT NULL DEFAULT '',
    user_agent  text NOT NULL DEFAULT '',
    details     jsonb NOT NULL DEFAULT '{}'
);
-- No foreign key to teams: entries outlive a deleted team's rows until
-- retention removes them, as an audit record must.
CREATE INDEX audit_log_team_at_idx ON audit_log (team_id, at DESC, id DESC);
CREATE INDEX audit_log_at_idx ON audit_log (at);

-- +goose Down
DROP TABLE audit_log;
