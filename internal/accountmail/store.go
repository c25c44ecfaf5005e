package accountmail

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
)

func insert(ctx context.Context, db postgres.DB, now time.Time, m Message) error {
	_, err := db.Exec(ctx, `
		INSERT INTO account_emails (kind, to_email, to_name, subject, html, text, link, created_at, next_attempt_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
		m.Kind, m.To, m.ToName, m.Subject, m.HTML, m.Text, m.Link, now)
	return postgres.Translate(err)
}

// queued is a claimed message.
type queued struct {
	Message
	id       uuid.UUID
	attempts int // including the one just claimed
}

// claim leases up to n due messages: SKIP LOCKED lets workers of several
// instances claim side by side, and the lease (next_attempt_at moved
// forward) keeps a claimed message from being sent twice while its
// worker lives.
func claim(ctx context.Context, db postgres.DB, now time.Time, n int, lease time.Duration) ([]queued, error) {
	rows, err := db.Query(ctx, `
		UPDATE account_emails e SET attempts = e.attempts + 1, next_attempt_at = $2
		WHERE e.id IN (
			SELECT id FROM account_emails
			WHERE failed_at IS NULL AND next_attempt_at <= $1
			ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING e.id, e.kind, e.to_email, e.to_name, e.subject, e.html, e.text, e.link, e.attempts`,
		now, now.Add(lease), n)
	if err != nil {
		return nil, postgres.Translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (queued, error) {
		var q queued
		err := r.Scan(&q.id, &q.Kind, &q.To, &q.ToName, &q.Subject, &q.HTML, &q.Text, &q.Link, &q.attempts)
		return q, err
	})
	return out, postgres.Translate(err)
}

func remove(ctx context.Context, db postgres.DB, id uuid.UUID) error {
	_, err := db.Exec(ctx, `DELETE FROM account_emails WHERE id = $1`, id)
	return postgres.Translate(err)
}

func reschedule(ctx context.Context, db postgres.DB, id uuid.UUID, at time.Time, reason string) error {
	_, err := db.Exec(ctx, `UPDATE account_emails SET next_attempt_at = $2, last_error = $3 WHERE id = $1`, id, at, reason)
	return postgres.Translate(err)
}

// fail gives a message up. Its body and link go: they carry a live token,
// and nobody will send them any more.
func fail(ctx context.Context, db postgres.DB, id uuid.UUID, now time.Time, reason string) error {
	_, err := db.Exec(ctx, `
		UPDATE account_emails SET failed_at = $2, last_error = $3, html = '', text = '', link = ''
		WHERE id = $1`, id, now, reason)
	return postgres.Translate(err)
}

func pruneFailed(ctx context.Context, db postgres.DB, before time.Time) error {
	_, err := db.Exec(ctx, `DELETE FROM account_emails WHERE failed_at < $1`, before)
	return postgres.Translate(err)
}
