-- +goose Up
-- Billing: the payment provider's webhook events already handled, so a
-- retried or replayed delivery changes nothing, and the time of the last
-- provider event applied to each team, so a late retry of an older event
-- (an "active" update arriving after the cancellation) cannot undo a newer
-- one.

CREATE TABLE billing_events (
    -- The provider's event id (evt_...): one row per event ever handled.
    event_id     text PRIMARY KEY,
    type         text NOT NULL,
    team_id      uuid REFERENCES teams (id) ON DELETE SET NULL,
    -- What handling the event did: applied, ignored, unknown_team, stale.
    outcome      text NOT NULL,
    -- When the provider says the event happened.
    created_at   timestamptz NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX billing_events_team_idx ON billing_events (team_id, processed_at) WHERE team_id IS NOT NULL;

ALTER TABLE teams ADD COLUMN billing_event_at timestamptz;
-- Subscription events without a team id in metadata find their team here.
CREATE INDEX teams_stripe_subscription_idx ON teams (stripe_subscription_id)
    WHERE stripe_subscription_id IS NOT NULL;

-- +goose Down
DROP INDEX teams_stripe_subscription_idx;
ALTER TABLE teams DROP COLUMN billing_event_at;
DROP TABLE billing_events;
