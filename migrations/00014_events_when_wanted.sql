-- +goose Up
-- Events are written only when a webhook of the team could want them.
--
-- Most teams have no webhook for most event types, and writing the
-- outbox was the larger part of every contact change: 10,000 full
-- contact.updated bodies (10 MB) for one bulk label change, a third of a
-- single create. A change now asks events_wanted() in its own transaction
-- and skips the events nobody subscribes to.
--
-- The rule, made exact by an advisory lock per team, (7302, hashtext(team
-- id)): a change holds it shared from its check to its commit; inserting
-- or updating a webhook holds it exclusively. So a webhook whose
-- subscription commits before a change commits gets the change's events,
-- and one that commits after does not need to (it waited for the change).
-- The query inside the function takes its own snapshot after the lock is
-- granted (a VOLATILE PL/pgSQL function does), so a subscription that
-- committed while the change waited for the lock is seen.

-- +goose StatementBegin
CREATE FUNCTION events_wanted(team uuid, event_type text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(7302, hashtext(team::text));
    RETURN EXISTS (SELECT 1 FROM webhooks w WHERE w.team_id = team AND w.active AND event_type = ANY (w.events));
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION webhooks_hold_team_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7302, hashtext(NEW.team_id::text));
    RETURN NEW;
END $$;
-- +goose StatementEnd

CREATE TRIGGER webhooks_hold_team_changes BEFORE INSERT OR UPDATE OF team_id, events, active ON webhooks
    FOR EACH ROW EXECUTE FUNCTION webhooks_hold_team_changes();

-- +goose Down
DROP TRIGGER webhooks_hold_team_changes ON webhooks;
DROP FUNCTION webhooks_hold_team_changes();
DROP FUNCTION events_wanted(uuid, text);
