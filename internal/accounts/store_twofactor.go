package accounts

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
)

// Two-factor sign-in.

func (store) twoFactorOn(ctx context.Context, db postgres.DB, userID uuid.UUID) (bool, error) {
	var on bool
	err := db.QueryRow(ctx, `SELECT totp_enabled_at IS NOT NULL FROM users WHERE id = $1`, userID).Scan(&on)
	return on, err
}

func (store) setPendingTOTP(ctx context.Context, db postgres.DB, userID uuid.UUID, sealed []byte) error {
	_, err := db.Exec(ctx, `UPDATE users SET totp_pending_secret = $2 WHERE id = $1 AND totp_enabled_at IS NULL`, userID, sealed)
	return err
}

// totpState is a user's sealed secrets and the last accepted time step.
type totpState struct {
	pending, active []byte
	lastStep        int64
}

// totpSecrets reads the user's TOTP state under the row lock, so that two
// uses of one code racing are one after the other, and the second sees
// the step the first accepted.
func (store) totpSecrets(ctx context.Context, db postgres.DB, userID uuid.UUID) (totpState, error) {
	var t totpState
	err := db.QueryRow(ctx, `
		SELECT totp_pending_secret, CASE WHEN totp_enabled_at IS NOT NULL THEN totp_secret END, totp_last_step
		FROM users WHERE id = $1 FOR UPDATE`, userID).Scan(&t.pending, &t.active, &t.lastStep)
	return t, err
}

func (store) enableTOTP(ctx context.Context, db postgres.DB, userID uuid.UUID, now time.Time, step int64) error {
	_, err := db.Exec(ctx, `
		UPDATE users SET totp_secret = totp_pending_secret, totp_pending_secret = NULL, totp_enabled_at = $2, totp_last_step = $3
		WHERE id = $1`, userID, now, step)
	return err
}

func (store) disableTOTP(ctx context.Context, db postgres.DB, userID uuid.UUID) error {
	_, err := db.Exec(ctx, `
		WITH codes AS (DELETE FROM recovery_codes WHERE user_id = $1)
		UPDATE users SET totp_secret = NULL, totp_pending_secret = NULL, totp_enabled_at = NULL, totp_last_step = 0
		WHERE id = $1`, userID)
	return err
}

func (store) setLastStep(ctx context.Context, db postgres.DB, userID uuid.UUID, step int64) error {
	_, err := db.Exec(ctx, `UPDATE users SET totp_last_step = $2 WHERE id = $1`, userID, step)
	return err
}

func (store) replaceRecoveryCodes(ctx context.Context, db postgres.DB, userID uuid.UUID, hashes [][]byte) error {
	_, err := db.Exec(ctx, `
		WITH old AS (DELETE FROM recovery_codes WHERE user_id = $1)
		INSERT INTO recovery_codes (user_id, code_hash) SELECT $1, h FROM unnest($2::bytea[]) AS h`, userID, hashes)
	return err
}

// useRecoveryCode marks an unused code of the user used; false when there
// is no such code.
func (store) useRecoveryCode(ctx context.Context, db postgres.DB, userID uuid.UUID, hash []byte, now time.Time) (bool, error) {
	tag, err := db.Exec(ctx, `
		UPDATE recovery_codes SET used_at = $3 WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL`, userID, hash, now)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

func (store) insertChallenge(ctx context.Context, db postgres.DB, hash []byte, userID uuid.UUID, now, exp time.Time) error {
	_, err := db.Exec(ctx, `INSERT INTO mfa_challenges (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`, hash, userID, now, exp)
	return err
}

// challenge returns the user (id and email) of an unexpired challenge.
func (store) challenge(ctx context.Context, db postgres.DB, hash []byte, now time.Time) (uuid.UUID, string, error) {
	var id uuid.UUID
	var email string
	err := db.QueryRow(ctx, `
		SELECT u.id, u.email FROM mfa_challenges c JOIN users u ON u.id = c.user_id
		WHERE c.token_hash = $1 AND c.expires_at > $2`, hash, now).Scan(&id, &email)
	return id, email, err
}

// takeChallenge deletes an unexpired challenge of the user; false when it
// is gone (used, expired, or taken by a concurrent request).
func (store) takeChallenge(ctx context.Context, db postgres.DB, hash []byte, userID uuid.UUID, now time.Time) (bool, error) {
	var got uuid.UUID
	err := db.QueryRow(ctx, `
		DELETE FROM mfa_challenges WHERE token_hash = $1 AND user_id = $2 AND expires_at > $3 RETURNING user_id`,
		hash, userID, now).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}
