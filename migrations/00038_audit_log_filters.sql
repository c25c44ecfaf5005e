-- The audit log's filters by action and by actor read these indexes, newest
-- first, within a team.
-- +goose Up
CREATE INDEX audit_log_team_action_idx ON audit_log (team_id, action, at DESC, id DESC);
CREATE INDEX audit_log_team_actor_idx ON audit_log (team_id, actor_id, at DESC, id DESC);

-- +goose Down
DROP INDEX audit_log_team_actor_idx;
DROP INDEX audit_log_team_action_idx;
