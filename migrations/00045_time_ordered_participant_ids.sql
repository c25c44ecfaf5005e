-- Participants are enrolled by the tens of thousands in one statement (an
-- audience, a label, a segment). With random ids every row lands on a
-- random page of the primary key and of the enrollment-order index
-- (campaign_id, enrolled_at, id), which made index upkeep most of an
-- enrollment's cost. Time-ordered ids (the layout of UUID version 7: 48
-- bits of Unix milliseconds, then random bits) append instead: a
-- 100,000-contact enrollment takes about half the CPU. The ids stay
-- opaque to clients; they reveal no more than enrolled_at already does.
-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION uuid_time_ordered() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT encode(
        set_bit(set_bit(
            overlay(uuid_send(gen_random_uuid())
                    PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                    FROM 1 FOR 6),
            52, 1), 53, 1),
        'hex')::uuid
$$;
-- +goose StatementEnd
ALTER TABLE campaign_participants ALTER COLUMN id SET DEFAULT uuid_time_ordered();

-- +goose Down
ALTER TABLE campaign_participants ALTER COLUMN id SET DEFAULT gen_random_uuid();
DROP FUNCTION uuid_time_ordered();
