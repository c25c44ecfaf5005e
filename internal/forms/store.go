package forms

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
)

// store holds the package's SQL: forms, form_submissions,
// form_post_counts and consents.
type store struct{}

var errFormNotFound = apperr.NotFoundf("No form with this id.")

// formColumns reads a forms row aliased f, with its counts summed over
// their shards (see countShards).
const formColumns = `f.id, f.book_id, f.name, f.fields, f.label_ids, f.double_opt_in, f.consent_text, f.success_message,
	f.redirect_url, f.enabled,
	COALESCE((SELECT sum(c.submissions) FROM form_counts c WHERE c.form_id = f.id), 0)::bigint,
	COALESCE((SELECT sum(c.confirmed) FROM form_counts c WHERE c.form_id = f.id), 0)::bigint,
	f.created_at, f.updated_at`

// countShards is how many rows a form's counts are spread over, so that
// concurrent submissions rarely wait on each other's counter row.
const countShards = 16

func scanForm(row pgx.Row) (Form, error) {
	var f Form
	var fields []byte
	err := row.Scan(&f.ID, &f.BookID, &f.Name, &fields, &f.LabelIDs, &f.DoubleOptIn, &f.ConsentText, &f.SuccessMessage,
		&f.RedirectURL, &f.Enabled, &f.SubmissionsCount, &f.ConfirmedCount, &f.CreatedAt, &f.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Form{}, errFormNotFound
	}
	if err != nil {
		return Form{}, err
	}
	if err := json.Unmarshal(fields, &f.Fields); err != nil {
		return Form{}, err
	}
	f.normalize()
	return f, nil
}

func (store) insert(ctx context.Context, db postgres.DB, f Form, createdBy *uuid.UUID) (Form, error) {
	return scanForm(db.QueryRow(ctx, `
		INSERT INTO forms AS f (id, book_id, name, fields, label_ids, double_opt_in, consent_text, success_message,
			redirect_url, enabled, created_by, created_at, updated_at)
		VALUES (@id, @book_id, @name, @fields, @label_ids, @double_opt_in, @consent_text, @success_message,
			@redirect_url, @enabled, @created_by, @now, @now)
		RETURNING `+formColumns, pgx.StrictNamedArgs{
		"id": f.ID, "book_id": f.BookID, "name": f.Name, "fields": f.Fields, "label_ids": f.LabelIDs,
		"double_opt_in": f.DoubleOptIn, "consent_text": f.ConsentText, "success_message": f.SuccessMessage,
		"redirect_url": f.RedirectURL, "enabled": f.Enabled, "created_by": createdBy, "now": f.CreatedAt,
	}))
}

func (store) update(ctx context.Context, db postgres.DB, f Form) (Form, error) {
	return scanForm(db.QueryRow(ctx, `
		UPDATE forms AS f SET name = @name, fields = @fields, label_ids = @label_ids, double_opt_in = @double_opt_in,
			consent_text = @consent_text, success_message = @success_message, redirect_url = @redirect_url,
			enabled = @enabled, updated_at = @now
		WHERE id = @id
		RETURNING `+formColumns, pgx.StrictNamedArgs{
		"id": f.ID, "name": f.Name, "fields": f.Fields, "label_ids": f.LabelIDs,
		"double_opt_in": f.DoubleOptIn, "consent_text": f.ConsentText, "success_message": f.SuccessMessage,
		"redirect_url": f.RedirectURL, "enabled": f.Enabled, "now": f.UpdatedAt,
	}))
}

// form loads a form; lock holds it for the transaction (a patch).
func (store) form(ctx context.Context, db postgres.DB, id uuid.UUID, lock bool) (Form, error) {
	q := `SELECT ` + formColumns + ` FROM forms f WHERE f.id = $1`
	if lock {
		q += ` FOR NO KEY UPDATE OF f`
	}
	return scanForm(db.QueryRow(ctx, q, id))
}

func (store) list(ctx context.Context, db postgres.DB, bookID uuid.UUID) ([]Form, error) {
	rows, err := db.Query(ctx, `SELECT `+formColumns+` FROM forms f WHERE f.book_id = $1 ORDER BY lower(f.name), f.id`, bookID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Form, error) { return scanForm(r) })
}

func (store) delete(ctx context.Context, db postgres.DB, id uuid.UUID) error {
	tag, err := db.Exec(ctx, `DELETE FROM forms WHERE id = $1`, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return errFormNotFound
	}
	return nil
}

// countPost counts one post of ip to the form in the window starting at
// window, and returns the counts of that window and of the one before.
func (store) countPost(ctx context.Context, db postgres.DB, formID uuid.UUID, ip string, window, previous time.Time) (cur, prev int, err error) {
	err = db.QueryRow(ctx, `
		WITH counted AS (
			INSERT INTO form_post_counts AS c (form_id, ip, window_start, n) VALUES ($1, $2, $3, 1)
			ON CONFLICT (form_id, ip, window_start) DO UPDATE SET n = c.n + 1
			RETURNING n
		)
		SELECT (SELECT n FROM counted),
		       COALESCE((SELECT n FROM form_post_counts WHERE form_id = $1 AND ip = $2 AND window_start = $4), 0)`,
		formID, ip, window, previous).Scan(&cur, &prev)
	return cur, prev, err
}

// lockAddress serialises the submissions of one address to one form for
// the transaction, so that the cap on confirmation emails holds.
func (store) lockAddress(ctx context.Context, tx *postgres.Tx, formID uuid.UUID, email string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "form:"+formID.String()+":"+email)
	return err
}

// mailedSince counts the confirmation emails queued for the address by
// the form since a moment.
func (store) mailedSince(ctx context.Context, db postgres.DB, formID uuid.UUID, email string, since time.Time) (int, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT count(*) FROM form_submissions
		WHERE form_id = $1 AND email = $2 AND mailed AND submitted_at > $3`, formID, email, since).Scan(&n)
	return n, err
}

// held is a submission waiting for its confirmation.
type held struct {
	ID          uuid.UUID
	FormID      uuid.UUID
	BookID      uuid.UUID
	Email       string
	Fields      map[string]string
	TopicIDs    []uuid.UUID
	ConsentText string
	IP          string
	UserAgent   string
	TokenHash   []byte
	Mailed      bool
	SentAt      *time.Time
	SubmittedAt time.Time
	ExpiresAt   time.Time
	ConfirmedAt *time.Time
}

const heldColumns = `id, form_id, book_id, email, fields, topic_ids, consent_text, ip, user_agent,
	token_hash, mailed, sent_at, submitted_at, expires_at, confirmed_at`

func scanHeld(row pgx.Row) (held, error) {
	var h held
	var fields []byte
	err := row.Scan(&h.ID, &h.FormID, &h.BookID, &h.Email, &fields, &h.TopicIDs, &h.ConsentText, &h.IP, &h.UserAgent,
		&h.TokenHash, &h.Mailed, &h.SentAt, &h.SubmittedAt, &h.ExpiresAt, &h.ConfirmedAt)
	if err != nil {
		return held{}, err
	}
	return h, json.Unmarshal(fields, &h.Fields)
}

func (store) insertHeld(ctx context.Context, tx *postgres.Tx, h held) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO form_submissions (id, form_id, book_id, email, fields, topic_ids, consent_text, ip, user_agent,
			token_hash, mailed, submitted_at, expires_at)
		VALUES (@id, @form_id, @book_id, @email, @fields, @topic_ids, @consent_text, @ip, @user_agent,
			@token_hash, @mailed, @submitted_at, @expires_at)`, pgx.StrictNamedArgs{
		"id": h.ID, "form_id": h.FormID, "book_id": h.BookID, "email": h.Email, "fields": h.Fields,
		"topic_ids": h.TopicIDs, "consent_text": h.ConsentText, "ip": h.IP, "user_agent": h.UserAgent,
		"token_hash": h.TokenHash, "mailed": h.Mailed, "submitted_at": h.SubmittedAt, "expires_at": h.ExpiresAt,
	})
	return err
}

// counted adds to the form's counts, in one of its shards at random.
func (store) counted(ctx context.Context, db postgres.DB, formID uuid.UUID, submissions, confirmed int) error {
	_, err := db.Exec(ctx, `
		INSERT INTO form_counts AS c (form_id, shard, submissions, confirmed) VALUES ($1, $2, $3, $4)
		ON CONFLICT (form_id, shard) DO UPDATE SET submissions = c.submissions + EXCLUDED.submissions, confirmed = c.confirmed + EXCLUDED.confirmed`,
		formID, rand.IntN(countShards), submissions, confirmed)
	return err
}

var errUnknownToken = apperr.NotFoundf("This confirmation link is not valid: it was used already, has expired or is incomplete.")

// pending finds the unconfirmed, unexpired submission of a token hash.
func (store) pending(ctx context.Context, db postgres.DB, hash []byte, now time.Time) (held, error) {
	h, err := scanHeld(db.QueryRow(ctx, `SELECT `+heldColumns+` FROM form_submissions
		WHERE token_hash = $1 AND confirmed_at IS NULL AND expires_at > $2`, hash, now))
	if errors.Is(err, pgx.ErrNoRows) {
		return held{}, errUnknownToken
	}
	return h, err
}

// claim marks the submission of a token confirmed, once: of two
// confirmations at once, the second waits for the first and finds nothing.
func (store) claim(ctx context.Context, tx *postgres.Tx, hash []byte, now time.Time) (held, error) {
	h, err := scanHeld(tx.QueryRow(ctx, `UPDATE form_submissions SET confirmed_at = $2
		WHERE token_hash = $1 AND confirmed_at IS NULL AND expires_at > $2
		RETURNING `+heldColumns, hash, now))
	if errors.Is(err, pgx.ErrNoRows) {
		return held{}, errUnknownToken
	}
	return h, err
}

// heldByID loads a submission for its confirmation email.
func (store) heldByID(ctx context.Context, db postgres.DB, id uuid.UUID) (held, error) {
	h, err := scanHeld(db.QueryRow(ctx, `SELECT `+heldColumns+` FROM form_submissions WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return held{}, apperr.NotFoundf("The submission is gone.")
	}
	return h, err
}

// errOutcomeUnknown: an earlier attempt handed the email to the provider
// and never recorded the answer (its instance died).
var errOutcomeUnknown = errors.New("an earlier attempt may have sent this confirmation email (its instance stopped before recording the provider's answer); it is not sent again")

// beginSend stamps the submission as being sent with the hash of the token
// its email is about to carry; the stamp commits before the provider is
// called. ok is false when there is nothing to send (sent, confirmed or
// gone); a submission found stamped already gives errOutcomeUnknown.
func (store) beginSend(ctx context.Context, db postgres.Pool, id uuid.UUID, hash []byte, now time.Time) (ok bool, err error) {
	err = postgres.InTx(ctx, db, func(tx *postgres.Tx) error {
		var sendingAt, sentAt, confirmedAt *time.Time
		err := tx.QueryRow(ctx, `SELECT sending_at, sent_at, confirmed_at FROM form_submissions WHERE id = $1 FOR UPDATE`, id).
			Scan(&sendingAt, &sentAt, &confirmedAt)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil
		case err != nil:
			return err
		case sentAt != nil || confirmedAt != nil:
			return nil
		case sendingAt != nil:
			return errOutcomeUnknown
		}
		_, err = tx.Exec(ctx, `UPDATE form_submissions SET sending_at = $2, token_hash = $3 WHERE id = $1`, id, now, hash)
		ok = err == nil
		return err
	})
	return ok, err
}

// unstamp lets a later attempt send an email the provider refused for now.
func (store) unstamp(ctx context.Context, db postgres.DB, id uuid.UUID) error {
	_, err := db.Exec(ctx, `UPDATE form_submissions SET sending_at = NULL WHERE id = $1`, id)
	return err
}

func (store) markSent(ctx context.Context, db postgres.DB, id uuid.UUID, now time.Time) error {
	_, err := db.Exec(ctx, `UPDATE form_submissions SET sent_at = $2 WHERE id = $1`, id, now)
	return err
}

func (store) insertConsent(ctx context.Context, tx *postgres.Tx, bookID uuid.UUID, c Consent) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO consents (id, contact_id, book_id, form_id, method, text, ip, user_agent, submitted_at, confirmed_at)
		VALUES (@id, @contact_id, @book_id, @form_id, @method, @text, @ip, @user_agent, @submitted_at, @confirmed_at)`,
		pgx.StrictNamedArgs{
			"id": c.ID, "contact_id": c.ContactID, "book_id": bookID, "form_id": c.FormID, "method": c.Method,
			"text": c.Text, "ip": c.IP, "user_agent": c.UserAgent, "submitted_at": c.SubmittedAt, "confirmed_at": c.ConfirmedAt,
		})
	return err
}

func (store) consents(ctx context.Context, db postgres.DB, contactID uuid.UUID) ([]Consent, error) {
	rows, err := db.Query(ctx, `SELECT id, contact_id, form_id, method, text, ip, user_agent, submitted_at, confirmed_at
		FROM consents WHERE contact_id = $1 ORDER BY confirmed_at DESC, id`, contactID)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Consent, error) {
		var c Consent
		err := r.Scan(&c.ID, &c.ContactID, &c.FormID, &c.Method, &c.Text, &c.IP, &c.UserAgent, &c.SubmittedAt, &c.ConfirmedAt)
		return c, err
	})
	return out, err
}

// forgetAddresses deletes the book's submissions of the addresses, held
// or confirmed (erasure).
func (store) forgetAddresses(ctx context.Context, tx *postgres.Tx, bookID uuid.UUID, addresses []string) error {
	_, err := tx.Exec(ctx, `DELETE FROM form_submissions WHERE book_id = $1 AND email = ANY($2::text[])`, bookID, addresses)
	return err
}

// prune deletes the submissions whose 7 days have passed and the post
// counts no limit reads any more.
func (store) prune(ctx context.Context, db postgres.DB, now time.Time) (int64, error) {
	tag, err := db.Exec(ctx, `DELETE FROM form_submissions WHERE expires_at <= $1`, now)
	if err != nil {
		return 0, err
	}
	if _, err := db.Exec(ctx, `DELETE FROM form_post_counts WHERE window_start < $1`, now.Add(-2*postWindow)); err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}
