package accounts

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
)

const appPasswordColumns = `id, name, created_at, last_used_at`

func scanAppPassword(row pgx.Row) (AppPassword, error) {
	var p AppPassword
	err := row.Scan(&p.ID, &p.Name, &p.CreatedAt, &p.LastUsedAt)
	return p, err
}

func (store) countAppPasswords(ctx context.Context, db postgres.DB, userID uuid.UUID) (int, error) {
	var n int
	// The user's row is locked so that two concurrent creates cannot both
	// pass the limit.
	err := db.QueryRow(ctx, `
		WITH u AS (SELECT id FROM users WHERE id = $1 FOR NO KEY UPDATE)
		SELECT count(*) FROM app_passwords WHERE user_id = (SELECT id FROM u)`, userID).Scan(&n)
	return n, err
}

func (store) insertAppPassword(ctx context.Context, db postgres.DB, userID uuid.UUID, name string, hash []byte) (AppPassword, error) {
	return scanAppPassword(db.QueryRow(ctx, `
		INSERT INTO app_passwords (user_id, name, password_hash) VALUES ($1, $2, $3)
		RETURNING `+appPasswordColumns, userID, name, hash))
}

func (store) appPasswords(ctx context.Context, db postgres.DB, userID uuid.UUID) ([]AppPassword, error) {
	rows, err := db.Query(ctx, `SELECT `+appPasswordColumns+` FROM app_passwords WHERE user_id = $1 ORDER BY created_at DESC, id`, userID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (AppPassword, error) { return scanAppPassword(r) })
}

func (store) deleteAppPassword(ctx context.Context, db postgres.DB, userID, id uuid.UUID) error {
	tag, err := db.Exec(ctx, `DELETE FROM app_passwords WHERE user_id = $1 AND id = $2`, userID, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return apperr.NotFoundf("No app password with this id.")
	}
	return nil
}

// deleteAppPasswords revokes every app password of the user (a password
// change or reset).
func (store) deleteAppPasswords(ctx context.Context, db postgres.DB, userID uuid.UUID) error {
	_, err := db.Exec(ctx, `DELETE FROM app_passwords WHERE user_id = $1`, userID)
	return err
}

// appPasswordRow is what authenticating an app password reads.
type appPasswordRow struct {
	id, userID uuid.UUID
	email      string
	lastUsed   *time.Time
}

// appPasswordByHash is the one indexed lookup that checks an app password.
func (store) appPasswordByHash(ctx context.Context, db postgres.DB, hash []byte) (appPasswordRow, error) {
	var p appPasswordRow
	err := db.QueryRow(ctx, `
		SELECT p.id, p.user_id, u.email, p.last_used_at
		FROM app_passwords p JOIN users u ON u.id = p.user_id
		WHERE p.password_hash = $1`, hash).Scan(&p.id, &p.userID, &p.email, &p.lastUsed)
	return p, err
}

func (store) touchAppPassword(ctx context.Context, db postgres.DB, id uuid.UUID, now time.Time) error {
	_, err := db.Exec(ctx, `UPDATE app_passwords SET last_used_at = $2 WHERE id = $1`, id, now)
	return err
}
