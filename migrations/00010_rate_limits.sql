-- +goose Up
-- Request counters of rate limits, per key (the client IP) and fixed window,
-- shared by every instance of the service. Rows older than two windows are
-- deleted as new counts come in.
CREATE TABLE rate_limit_counters (
    key          text NOT NULL,
    window_start timestamptz NOT NULL,
    n            integer NOT NULL,
    PRIMARY KEY (key, window_start)
);
CREATE INDEX rate_limit_counters_window_idx ON rate_limit_counters (window_start);

-- +goose Down
DROP TABLE rate_limit_counters;
