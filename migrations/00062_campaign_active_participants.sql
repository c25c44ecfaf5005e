-- +goose Up
-- A contact's deletion takes its campaign participations with it (the
-- foreign key cascades); webhooks hear of each active one it ends as a
-- participant removed. The contacts package reads them here, before it
-- deletes.
CREATE VIEW campaign_active_participants AS
SELECT p.id, p.campaign_id, p.contact_id FROM campaign_participants p WHERE p.status = 'active';
COMMENT ON VIEW campaign_active_participants IS 'Owned by package campaigns: the active participations of each contact, which a contact''s deletion ends.';

-- +goose Down
DROP VIEW campaign_active_participants;
