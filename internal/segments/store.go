package segments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
)

// store is the segments SQL.
type store struct{}

const segmentColumns = `s.id, s.book_id, s.name, s.description, s.rule, s.created_by, s.created_at, s.updated_at`

var errSegmentNotFound = apperr.NotFoundf("No segment with this id.")

// nameKey is the unique index of names in a book.
const nameKey = "segments_book_name_key"

func scanSegment(row pgx.Row, extra ...any) (Segment, error) {
	var (
		s    Segment
		rule []byte
	)
	if err := row.Scan(append([]any{&s.ID, &s.BookID, &s.Name, &s.Description, &rule, &s.CreatedBy, &s.CreatedAt, &s.UpdatedAt}, extra...)...); err != nil {
		return Segment{}, err
	}
	r, err := ParseStoredRule(rule)
	if err != nil {
		return Segment{}, fmt.Errorf("segment %s: %w", s.ID, err)
	}
	s.Rule = r
	return s, nil
}

func (store) list(ctx context.Context, db postgres.DB, bookID uuid.UUID) ([]Segment, error) {
	rows, err := db.Query(ctx, `SELECT `+segmentColumns+` FROM segments s WHERE s.book_id = $1 ORDER BY s.name, s.id`, bookID)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Segment, error) { return scanSegment(r) })
	return out, err
}

// byID loads a segment and the team owning its book. forUpdate locks it
// for the rest of the transaction.
func (store) byID(ctx context.Context, db postgres.DB, id uuid.UUID, forUpdate bool) (Segment, uuid.UUID, error) {
	lock := ""
	if forUpdate {
		lock = " FOR NO KEY UPDATE OF s"
	}
	var teamID uuid.UUID
	seg, err := scanSegment(db.QueryRow(ctx, `
		SELECT `+segmentColumns+`, b.team_id FROM segments s JOIN book_teams b ON b.book_id = s.book_id
		WHERE s.id = $1`+lock, id), &teamID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Segment{}, uuid.Nil, errSegmentNotFound
	}
	return seg, teamID, err
}

func (store) insert(ctx context.Context, db postgres.DB, s Segment) (Segment, error) {
	rule, err := json.Marshal(s.Rule)
	if err != nil {
		return Segment{}, err
	}
	out, err := scanSegment(db.QueryRow(ctx, `
		INSERT INTO segments AS s (book_id, name, description, rule, created_by, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING `+segmentColumns,
		s.BookID, s.Name, s.Description, rule, s.CreatedBy, s.CreatedAt))
	return out, writeErr(err, s.Name)
}

func (store) update(ctx context.Context, db postgres.DB, s Segment, now time.Time) (Segment, error) {
	rule, err := json.Marshal(s.Rule)
	if err != nil {
		return Segment{}, err
	}
	out, err := scanSegment(db.QueryRow(ctx, `
		UPDATE segments AS s SET name = $2, description = $3, rule = $4, updated_at = $5
		WHERE s.id = $1 RETURNING `+segmentColumns, s.ID, s.Name, s.Description, rule, now))
	return out, writeErr(err, s.Name)
}

// remove deletes a segment; the campaigns' audience key refuses it while
// a campaign names it.
func (store) remove(ctx context.Context, db postgres.DB, id uuid.UUID) error {
	_, err := db.Exec(ctx, `DELETE FROM segments WHERE id = $1`, id)
	if postgres.IsForeignKeyViolation(err) {
		return apperr.Wrap(err, apperr.Conflict, "A campaign's audience names this segment; give the campaign another audience first.")
	}
	return err
}

func writeErr(err error, name string) error {
	if postgres.IsUniqueViolation(err, nameKey) {
		return apperr.Wrap(err, apperr.Conflict, "`name`: a segment named %q already exists in this book.", name)
	}
	return err
}

// count counts the book's contacts that satisfy the predicate.
func (store) count(ctx context.Context, db postgres.DB, p *Predicate) (int64, error) {
	where, args := p.Where("c", []any{p.bookID})
	var n int64
	err := db.QueryRow(ctx, `SELECT count(*) FROM contacts c WHERE c.book_id = $1 AND `+where, args...).Scan(&n)
	return n, err
}
