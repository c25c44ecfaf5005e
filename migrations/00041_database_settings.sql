-- Session settings the service wants on every connection live on the
-- database, where every new session picks them up whatever reaches it: a
-- direct connection or a pooler's server connection (PgBouncer refuses
-- startup parameters it does not know, so they cannot come from the
-- client). JIT compilation is off: it pays off for long analytic queries,
-- not for statements that each touch at most tens of thousands of rows,
-- and its cost arrives unannounced when a table's growth pushes a plan's
-- estimate past jit_above_cost (measured on an INSERT ... SELECT of 10,000
-- events: 300 ms of its 700 ms were compiling).
--
-- Only the database's owner (or a superuser) may set it; a role that is
-- neither gets a warning and the server's default, which an operator can
-- set with the same statement.
-- +goose Up
-- +goose StatementBegin
DO $$
BEGIN
    EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());
EXCEPTION WHEN insufficient_privilege THEN
    RAISE WARNING 'contactbook: cannot set jit = off on database %: run ALTER DATABASE % SET jit = off as its owner',
        current_database(), current_database();
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
    EXECUTE format('ALTER DATABASE %I RESET jit', current_database());
EXCEPTION WHEN insufficient_privilege THEN
    NULL;
END
$$;
-- +goose StatementEnd
