-- When a signed batch of the email provider's events last reached a book:
-- the email settings' setup checklist shows whether events are arriving.
-- +goose Up
ALTER TABLE email_settings ADD COLUMN events_received_at timestamptz;

-- +goose Down
ALTER TABLE email_settings DROP COLUMN events_received_at;
