package accountmail

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
)

func insert(ctx context.Context, db postgres.DB, now time.Time, m Message) (uuid.UUID, error) {
	var id uuid.UUID
	err := db.QueryRow(ctx, `
		INSERT INTO account_emails (kind, to_email, to_name, subject, html, text, link, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		m.Kind, m.To, m.ToName, m.Subject, m.HTML, m.Text, m.Link, now).Scan(&id)
	return id, err
}

// Why an email cannot be sent by an attempt.
var (
	// errGone: the email was sent or given up by an earlier attempt.
	errGone = errors.New("account email no longer queued")
	// errOutcomeUnknown: an earlier attempt handed the email to the
	// provider and never recorded the answer (its instance died).
	errOutcomeUnknown = errors.New("an earlier attempt may have sent this account email (its instance stopped before recording the provider's answer); it is not sent again")
)

// begin stamps the email as being sent and returns it; the stamp commits
// before the provider is called. An email found stamped already is
// deleted (its body holds a live token) and errOutcomeUnknown returned.
func begin(ctx context.Context, db postgres.Pool, id uuid.UUID, now time.Time) (Message, error) {
	var m Message
	unknown := false
	err := postgres.InTx(ctx, db, func(tx *postgres.Tx) error {
		var sendingAt *time.Time
		err := tx.QueryRow(ctx, `
			SELECT kind, to_email, to_name, subject, html, text, link, sending_at
			FROM account_emails WHERE id = $1 FOR UPDATE`, id).
			Scan(&m.Kind, &m.To, &m.ToName, &m.Subject, &m.HTML, &m.Text, &m.Link, &sendingAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return errGone
		}
		if err != nil {
			return err
		}
		if sendingAt != nil {
			unknown = true
			_, err := tx.Exec(ctx, `DELETE FROM account_emails WHERE id = $1`, id)
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE account_emails SET sending_at = $2 WHERE id = $1`, id, now)
		return err
	})
	if err == nil && unknown {
		err = errOutcomeUnknown
	}
	return m, err
}

// remove deletes an email that was sent or given up.
func remove(ctx context.Context, db postgres.DB, id uuid.UUID) error {
	_, err := db.Exec(ctx, `DELETE FROM account_emails WHERE id = $1`, id)
	return err
}

// unstamp lets a later attempt send an email the provider refused for now.
func unstamp(ctx context.Context, db postgres.DB, id uuid.UUID) error {
	_, err := db.Exec(ctx, `UPDATE account_emails SET sending_at = NULL WHERE id = $1`, id)
	return err
}

// queuedIDs lists every email of the table.
func queuedIDs(ctx context.Context, db postgres.DB) ([]uuid.UUID, error) {
	rows, err := db.Query(ctx, `SELECT id FROM account_emails ORDER BY created_at`)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	return ids, err
}
