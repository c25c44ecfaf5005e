-- +goose Up
-- A send window is read in the contact's time zone. A participant held by
-- a window waits for the opening computed in the zone it had then, so a
-- change of the contact's zone lets its window holds go in the statement
-- that changes it, whichever writer that is (the API, an import, an
-- address book sync): the next pass reads the window in the new zone.
-- Holds of a step without a window (an undecided A/B test) do not depend
-- on the zone and stay. Owned by campaigns (its tables, the contacts'
-- column); a row trigger filtered by WHEN costs nothing to the writes
-- that keep the zone, and each changed contact is one probe of
-- campaign_participants_contact_idx.
-- +goose StatementBegin
CREATE FUNCTION contacts_time_zone_release_holds() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE campaign_participants p SET held_until = NULL, held_step_id = NULL
    FROM campaign_steps s
    WHERE p.contact_id = NEW.id AND p.held_until IS NOT NULL
      AND s.id = p.held_step_id AND s.send_window IS NOT NULL;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contacts_time_zone_release_holds AFTER UPDATE OF time_zone ON contacts
    FOR EACH ROW WHEN (OLD.time_zone IS DISTINCT FROM NEW.time_zone)
    EXECUTE FUNCTION contacts_time_zone_release_holds();

-- +goose Down
DROP TRIGGER contacts_time_zone_release_holds ON contacts;
DROP FUNCTION contacts_time_zone_release_holds();
