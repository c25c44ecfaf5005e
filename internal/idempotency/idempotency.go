// Package idempotency keeps the first answer to each Idempotency-Key of an
// API key, so that a client retrying a POST (after a timeout, a dropped
// connection) gets the answer of the request that ran instead of running
// it twice. The key's row is inserted before the request runs: a second
// instance given the same key finds it in PostgreSQL and answers "still
// running" rather than running the request too. Nothing here knows about
// HTTP; the middleware in internal/httpapi reads and writes the answers.
package idempotency

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Kept is how long the first answer to a key is replayed.
const Kept = 24 * time.Hour

// Abandoned is how long a request may hold its key without answering
// before a repeat takes the key over: its instance died mid-request (no
// request runs this long; the server's write timeout ends them first).
const Abandoned = 5 * time.Minute

// MaxKeyLen is the longest key accepted.
const MaxKeyLen = 255

// CheckKey reports whether k is an acceptable Idempotency-Key: 1 to 255
// printable ASCII characters (space to tilde).
func CheckKey(k string) error {
	if len(k) == 0 || len(k) > MaxKeyLen {
		return apperr.Invalidf("The Idempotency-Key header must be 1 to %d printable ASCII characters.", MaxKeyLen)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return apperr.Invalidf("The Idempotency-Key header must be 1 to %d printable ASCII characters.", MaxKeyLen)
		}
	}
	return nil
}

// Request identifies one keyed request: the API key it came with, the
// client's key, what it asked for (method and path) and a hash of what it
// sent (the book it names and its body).
type Request struct {
	APIKeyID uuid.UUID
	Key      string
	Path     string
	Hash     string
}

// Answer is a stored first answer.
type Answer struct {
	Status      int
	ContentType string
	Body        []byte
}

// State is what Begin found.
type State int

const (
	// Run: the key is this request's now; run it and Finish or Abandon.
	Run State = iota
	// Replay: the key has an answer; give it again (Claim.Answer).
	Replay
	// Running: the first request with the key has not answered yet.
	Running
	// Mismatch: the key was used for another path or body.
	Mismatch
)

// Claim is the outcome of Begin.
type Claim struct {
	State  State
	Answer Answer
	// id names this request's hold on the key (State Run).
	id uuid.UUID
}

// Store keeps the keys in PostgreSQL.
type Store struct {
	db  postgres.DB
	now func() time.Time
}

// New returns the store over db on the clock now (nil: time.Now).
func New(db postgres.DB, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, now: now}
}

// Errors the middleware answers.
var (
	ErrMismatch = apperr.New(apperr.IdempotencyMismatch,
		"This Idempotency-Key was already used for another request (another path or body); use a new key for a new request.")
	ErrRunning = apperr.New(apperr.Conflict,
		"A request with this Idempotency-Key is still running; retry once it has answered.")
)

// Begin takes the key for req, or says why not. One statement decides
// between instances: the insert wins the key, or the conflicting row is
// taken over when it expired (older than Kept) or was abandoned (no answer
// after Abandoned), or it is left as it is and read.
func (s *Store) Begin(ctx context.Context, req Request) (Claim, error) {
	for range 3 {
		now := s.now()
		id := uuid.New()
		var won bool
		err := s.db.QueryRow(ctx, `
			INSERT INTO idempotency_keys AS k (api_key_id, key, claim_id, request_path, request_hash, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (api_key_id, key) DO UPDATE SET
				claim_id = EXCLUDED.claim_id, request_path = EXCLUDED.request_path, request_hash = EXCLUDED.request_hash,
				created_at = EXCLUDED.created_at, status = NULL, content_type = NULL, body = NULL, completed_at = NULL
			WHERE k.created_at <= $7 OR (k.status IS NULL AND k.created_at <= $8)
			RETURNING true`,
			req.APIKeyID, req.Key, id, req.Path, req.Hash, now, now.Add(-Kept), now.Add(-Abandoned)).Scan(&won)
		if err == nil {
			return Claim{State: Run, id: id}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return Claim{}, err
		}
		var (
			path, hash string
			status     *int
			a          Answer
			ctype      *string
		)
		err = s.db.QueryRow(ctx, `
			SELECT request_path, request_hash, status, content_type, body FROM idempotency_keys
			WHERE api_key_id = $1 AND key = $2`, req.APIKeyID, req.Key).Scan(&path, &hash, &status, &ctype, &a.Body)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // the holder gave the key up in between: try again
		}
		if err != nil {
			return Claim{}, err
		}
		switch {
		case path != req.Path || hash != req.Hash:
			return Claim{State: Mismatch}, nil
		case status == nil:
			return Claim{State: Running}, nil
		}
		a.Status = *status
		if ctype != nil {
			a.ContentType = *ctype
		}
		return Claim{State: Replay, Answer: a}, nil
	}
	return Claim{State: Running}, nil
}

// Finish stores the answer of the request that holds the key.
func (s *Store) Finish(ctx context.Context, req Request, c Claim, a Answer) error {
	_, err := s.db.Exec(ctx, `
		UPDATE idempotency_keys SET status = $4, content_type = $5, body = $6, completed_at = $7
		WHERE api_key_id = $1 AND key = $2 AND claim_id = $3`,
		req.APIKeyID, req.Key, c.id, a.Status, a.ContentType, a.Body, s.now())
	return err
}

// Abandon gives the key up without an answer (a server error, a refusal
// for the rate limit): the client may try again with the same key.
func (s *Store) Abandon(ctx context.Context, req Request, c Claim) error {
	_, err := s.db.Exec(ctx, `DELETE FROM idempotency_keys WHERE api_key_id = $1 AND key = $2 AND claim_id = $3`,
		req.APIKeyID, req.Key, c.id)
	return err
}

// Keep reports whether an answer of this status is stored: every answer
// but a server error and a refusal for the rate limit, which the client
// may retry.
func Keep(status int) bool { return status < 500 && status != 429 }
