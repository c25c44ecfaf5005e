-- Account emails are sent by River jobs (kind account_email), one per
-- email, enqueued in the transaction that writes the email's row. The row
-- keeps the rendered email (its token stays out of river_job, which is
-- kept after the job ends) and sending_at, stamped just before the email
-- goes to the provider: an attempt that finds it stamped knows an earlier
-- one may have sent it, and does not send it again. River now holds the
-- attempts, retry times and errors, so the columns of the hand-run queue
-- go. Rows still queued by an earlier version stay and are given a job by
-- the periodic account_email_requeue job, which runs when the leader
-- starts; rows that had given up (their body was already blanked) go.
-- +goose Up
DELETE FROM account_emails WHERE failed_at IS NOT NULL;
DROP INDEX account_emails_due_idx;
ALTER TABLE account_emails
    DROP COLUMN attempts,
    DROP COLUMN next_attempt_at,
    DROP COLUMN failed_at,
    DROP COLUMN last_error,
    ADD COLUMN sending_at timestamptz;

-- +goose Down
ALTER TABLE account_emails
    DROP COLUMN sending_at,
    ADD COLUMN attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN next_attempt_at timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN failed_at timestamptz,
    ADD COLUMN last_error text;
CREATE INDEX account_emails_due_idx ON account_emails (next_attempt_at) WHERE failed_at IS NULL;
