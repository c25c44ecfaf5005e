-- +goose Up
-- No NOTIFY from event-writing transactions. PostgreSQL takes a
-- database-wide lock when a transaction that notified commits and holds it
-- through the commit's WAL flush, so every transaction writing events, of
-- every team, committed one at a time behind the others. The writing
-- instance now wakes its own dispatcher in-process after commit
-- (events.Outbox); dispatchers still poll, and still LISTEN for tools that
-- write events directly.
DROP TRIGGER events_notify_dispatchers ON events;
DROP FUNCTION events_notify_dispatchers();

-- +goose Down
-- +goose StatementBegin
CREATE FUNCTION events_notify_dispatchers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('contactbook_events', '');
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER events_notify_dispatchers AFTER INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_notify_dispatchers();
