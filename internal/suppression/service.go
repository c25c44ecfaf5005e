package suppression

import (
	"context"
	"errors"
	"io"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/csvsafe"
	"github.com/contactbook/contactbook/internal/enum"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Valid reports whether r is one of the reasons.
func (r Reason) Valid() bool {
	return slices.Contains(Reasons, r)
}

// Filter narrows a listing: reason, and q (a part of the address).
type Filter struct {
	Reason Reason
	Q      string
	Limit  int
	Offset int
}

// AddInput is the body of a manual suppression.
type AddInput struct {
	Email  string `json:"email"`
	Reason Reason `json:"reason"`
}

// Service serves the suppression list of a book to its team.
type Service struct {
	db postgres.Pool
	sp Suppressor
}

// NewService returns the suppression list service.
func NewService(db postgres.Pool, sp Suppressor) *Service {
	return &Service{db: db, sp: sp}
}

var errNotFound = apperr.NotFoundf("Suppression not found.")

// List pages the suppressions in force in the book, newest first (viewer).
func (s *Service) List(ctx context.Context, sc access.Scope, f Filter) ([]Suppression, int64, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return nil, 0, err
	}
	if f.Reason != "" && !f.Reason.Valid() {
		return nil, 0, apperr.Invalidf("The query parameter reason must be one of %s.", enum.Join(Reasons))
	}
	return list(ctx, s.db, sc.Book.ID, f)
}

// ExportBatch is how many suppressions one statement of an export reads.
const ExportBatch = 5000

// Export writes the suppressions in force in the book that match f (its
// Limit and Offset are ignored), newest first, as CSV with a header row:
// email, reason, source, created_at (RFC 3339, UTC). open is called once
// the book's access has been checked, before the first byte, so a refusal
// still becomes an error answer; it returns where to write. Rows are read
// ExportBatch at a time after the last one written (keyset), so a list of
// any length streams in constant memory (viewer).
func (s *Service) Export(ctx context.Context, sc access.Scope, f Filter, open func() io.Writer) error {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return err
	}
	if f.Reason != "" && !f.Reason.Valid() {
		return apperr.Invalidf("The query parameter reason must be one of %s.", enum.Join(Reasons))
	}
	out := csvsafe.NewWriter(open())
	if err := out.Write([]string{"email", "reason", "source", "created_at"}); err != nil {
		return err
	}
	var after *Suppression
	for {
		batch, err := exportBatch(ctx, s.db, sc.Book.ID, f, after)
		if err != nil {
			return err
		}
		for _, x := range batch {
			email := x.EmailHash // an erased person's record keeps only the hash
			if x.Email != nil {
				email = *x.Email
			}
			if err := out.Write([]string{email, string(x.Reason), string(x.Source), x.CreatedAt.UTC().Format(time.RFC3339)}); err != nil {
				return err
			}
		}
		out.Flush()
		if err := out.Error(); err != nil {
			return err
		}
		if len(batch) < ExportBatch {
			return nil
		}
		after = &batch[len(batch)-1]
	}
}

// Add suppresses one address by hand (member). created is false when a
// suppression was already in force: the existing record is returned.
func (s *Service) Add(ctx context.Context, sc access.Scope, in AddInput) (out Suppression, created bool, err error) {
	if err := sc.Require(ctx, auth.RoleMember); err != nil {
		return Suppression{}, false, err
	}
	email := strings.ToLower(strings.TrimSpace(in.Email))
	if a, perr := mail.ParseAddress(email); perr != nil || a.Address != email || len(email) > 254 {
		return Suppression{}, false, apperr.Invalidf("`email` must be an email address.")
	}
	if in.Reason == "" {
		in.Reason = ReasonManual
	}
	if _, err := ParseReason(string(in.Reason)); err != nil {
		return Suppression{}, false, err
	}
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		res, err := s.sp.Suppress(ctx, tx, sc.Book.ID, []string{email}, in.Reason, SourceAPI, sc.Actor.CreatedBy())
		if err != nil {
			return err
		}
		created = res.Recorded == 1
		out, err = inForce(ctx, tx, sc.Book.ID, email)
		return err
	})
	return out, created, err
}

// Lift ends a suppression (admin of the book's team); the record stays,
// with who lifted it and when. Contacts holding the address are no longer
// suppressed unless each of their other addresses still is. Lifting a
// lifted suppression changes nothing.
func (s *Service) Lift(ctx context.Context, actor *auth.Actor, id uuid.UUID) error {
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		var bookID, teamID uuid.UUID
		err := tx.QueryRow(ctx, `SELECT s.book_id, b.team_id FROM suppressions s JOIN book_teams b ON b.book_id = s.book_id WHERE s.id = $1`, id).
			Scan(&bookID, &teamID)
		if errors.Is(err, pgx.ErrNoRows) {
			return errNotFound
		}
		if err != nil {
			return err
		}
		if err := actor.RequireAdminOrKey(ctx, teamID, errNotFound); err != nil {
			return err
		}
		if err := s.sp.Lift(ctx, tx, id, actor.CreatedBy()); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{
			TeamID: teamID, Actor: audit.From(actor), Action: "suppression.lifted", TargetType: "suppression", TargetID: id.String(),
			Details: map[string]any{"book_id": bookID},
		})
	})
}
