-- +goose Up
-- Webhook events about a campaign email name the email (its completion
-- row), the A/B variant it went out with and the provider's message id:
-- delivery reads them where it matches the provider's events.
CREATE OR REPLACE VIEW campaign_email_recipients AS
SELECT cp.book_id, c.campaign_id, c.step_id, c.participant_id, p.contact_id,
       c.id AS email_id, c.variant_id, c.provider_message_id
FROM campaign_step_completions c
JOIN campaigns cp ON cp.id = c.campaign_id
JOIN campaign_participants p ON p.id = c.participant_id
WHERE c.token_hash IS NOT NULL;

-- +goose Down
DROP VIEW campaign_email_recipients;
CREATE VIEW campaign_email_recipients AS
SELECT cp.book_id, c.campaign_id, c.step_id, c.participant_id, p.contact_id
FROM campaign_step_completions c
JOIN campaigns cp ON cp.id = c.campaign_id
JOIN campaign_participants p ON p.id = c.participant_id
WHERE c.token_hash IS NOT NULL;
COMMENT ON VIEW campaign_email_recipients IS 'Owned by package campaigns: each campaign email handed to the provider and the contact it went to, which delivery matches provider events against.';
