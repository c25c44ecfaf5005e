-- +goose Up
-- A book sends through the provider its email settings name: sendgrid
-- (every book before this migration), smtp or ses. Secrets are sealed
-- with the settings key like mailer_api_key_enc. The bounce mailbox is
-- read for an SMTP book's delivery status notifications; its password is
-- sealed apart from the rest of it.
ALTER TABLE email_settings
    ADD COLUMN provider text NOT NULL DEFAULT 'sendgrid' CHECK (provider IN ('sendgrid', 'smtp', 'ses')),
    ADD COLUMN smtp_host text NOT NULL DEFAULT '',
    ADD COLUMN smtp_port integer NOT NULL DEFAULT 587 CHECK (smtp_port BETWEEN 1 AND 65535),
    ADD COLUMN smtp_security text NOT NULL DEFAULT 'starttls' CHECK (smtp_security IN ('starttls', 'tls', 'none')),
    ADD COLUMN smtp_username text NOT NULL DEFAULT '',
    ADD COLUMN smtp_password_enc bytea,
    ADD COLUMN smtp_max_connections integer NOT NULL DEFAULT 4 CHECK (smtp_max_connections BETWEEN 1 AND 20),
    ADD COLUMN ses_region text NOT NULL DEFAULT '',
    ADD COLUMN ses_access_key_id text NOT NULL DEFAULT '',
    ADD COLUMN ses_secret_access_key_enc bytea,
    ADD COLUMN ses_configuration_set text NOT NULL DEFAULT '',
    ADD COLUMN max_send_rate integer CHECK (max_send_rate BETWEEN 1 AND 1000),
    ADD COLUMN bounce_mailbox jsonb,
    ADD COLUMN bounce_imap_password_enc bytea;

-- Owned by package campaigns: the message id of each campaign email sent
-- one message per recipient (SMTP: the service's own Message-ID; SES: the
-- id SES answered), which the provider's feedback names. SendGrid's
-- emails are matched by their custom arguments and have no row here.
-- Kept apart from campaign_step_completions, whose rows are updated in
-- place (HOT) and would lose that with an index on the message id.
CREATE TABLE campaign_email_messages (
    message_id     text PRIMARY KEY,
    book_id        uuid NOT NULL,
    campaign_id    uuid NOT NULL,
    step_id        uuid NOT NULL,
    participant_id uuid NOT NULL,
    sent_at        timestamptz NOT NULL
);
CREATE INDEX campaign_email_messages_step_idx ON campaign_email_messages (step_id);

-- +goose StatementBegin
CREATE FUNCTION campaign_steps_delete_messages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM campaign_email_messages m USING old_rows o WHERE m.step_id = o.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER campaign_steps_delete_messages AFTER DELETE ON campaign_steps
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION campaign_steps_delete_messages();

CREATE VIEW campaign_email_message_ids AS
SELECT message_id, book_id, campaign_id, step_id, participant_id FROM campaign_email_messages;
COMMENT ON VIEW campaign_email_message_ids IS 'Owned by package campaigns: the message id of each campaign email sent one message per recipient, which delivery matches SES and bounce-mailbox feedback against.';

-- Owned by package mailer: the next free send time of each book's
-- max_send_rate schedule, shared by every instance (advanced in one
-- statement, so two instances never take the same time).
CREATE TABLE mailer_send_slots (
    pace_key     text PRIMARY KEY,
    next_slot_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE mailer_send_slots;
DROP VIEW campaign_email_message_ids;
DROP TRIGGER campaign_steps_delete_messages ON campaign_steps;
DROP FUNCTION campaign_steps_delete_messages();
DROP TABLE campaign_email_messages;
ALTER TABLE email_settings
    DROP COLUMN provider, DROP COLUMN smtp_host, DROP COLUMN smtp_port, DROP COLUMN smtp_security,
    DROP COLUMN smtp_username, DROP COLUMN smtp_password_enc, DROP COLUMN smtp_max_connections,
    DROP COLUMN ses_region, DROP COLUMN ses_access_key_id, DROP COLUMN ses_secret_access_key_enc,
    DROP COLUMN ses_configuration_set, DROP COLUMN max_send_rate, DROP COLUMN bounce_mailbox,
    DROP COLUMN bounce_imap_password_enc;
