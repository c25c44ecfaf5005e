-- +goose Up
-- Webhook operations: admin-requested sends (test, retry, recovery),
-- automatic switch-off of a webhook that only fails, and a per-webhook
-- delivery rate limit.

-- rate_limit: deliveries a second, or NULL for no limit. disabled_at and
-- disabled_reason are set when the service switched the webhook off after
-- failing for too long (active is then false); switching it on clears them.
ALTER TABLE webhooks
    ADD COLUMN rate_limit      integer CHECK (rate_limit BETWEEN 1 AND 1000),
    ADD COLUMN disabled_at     timestamptz,
    ADD COLUMN disabled_reason text;

-- held: pending when its webhook was switched off automatically; kept,
-- not sent, until the webhook is switched on again.
-- manual: the next attempt was asked for by an admin (a test, a retry or a
-- recovery): it is made once, without automatic retries, and logged so.
-- slotted: next_attempt_at is a send time already counted against the
-- webhook's rate limit, so claiming the row then takes no further slot.
-- recovery_id: the last recovery that queued the delivery again, so a
-- recovery that resumes after a crash does not send it twice.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_status_check;
ALTER TABLE webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_status_check
        CHECK (status IN ('pending', 'held', 'succeeded', 'failed', 'canceled')),
    ADD COLUMN manual      boolean NOT NULL DEFAULT false,
    ADD COLUMN slotted     boolean NOT NULL DEFAULT false,
    ADD COLUMN recovery_id uuid;

ALTER TABLE webhook_attempts ADD COLUMN manual boolean NOT NULL DEFAULT false;
-- The last success of a webhook, read at every failed attempt to decide
-- whether it has been failing long enough to be switched off.
CREATE INDEX webhook_attempts_success_idx ON webhook_attempts (webhook_id, created_at) WHERE success;

-- The rate limit's schedule: the first free send time of each limited
-- webhook. A claim advances it by one interval (1 s / rate_limit) per
-- delivery it takes or schedules, under the row's lock, so the instances
-- share one schedule.
CREATE TABLE webhook_rate_slots (
    webhook_id   uuid PRIMARY KEY REFERENCES webhooks (id) ON DELETE CASCADE,
    next_slot_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE webhook_rate_slots;
DROP INDEX webhook_attempts_success_idx;
ALTER TABLE webhook_attempts DROP COLUMN manual;
UPDATE webhook_deliveries SET status = 'canceled' WHERE status = 'held';
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_status_check;
ALTER TABLE webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_status_check
        CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled')),
    DROP COLUMN manual,
    DROP COLUMN slotted,
    DROP COLUMN recovery_id;
ALTER TABLE webhooks DROP COLUMN rate_limit, DROP COLUMN disabled_at, DROP COLUMN disabled_reason;
