-- +goose Up
-- enabled_at: when the webhook was created or last switched on. The
-- automatic switch-off counts a webhook's failures from the latest of its
-- last success and this time, so a webhook switched on again gets the
-- whole WEBHOOK_DISABLE_AFTER before it can be switched off once more,
-- however old its last success.
--
-- The last switch-on of existing webhooks was not recorded. Their last
-- change (updated_at) is the latest it can have been, so none of them is
-- switched off sooner than the rule says.
ALTER TABLE webhooks ADD COLUMN enabled_at timestamptz;
UPDATE webhooks SET enabled_at = updated_at;
ALTER TABLE webhooks ALTER COLUMN enabled_at SET NOT NULL, ALTER COLUMN enabled_at SET DEFAULT now();

-- +goose Down
ALTER TABLE webhooks DROP COLUMN enabled_at;
