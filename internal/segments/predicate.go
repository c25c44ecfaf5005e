package segments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Predicate is a compiled rule of a book: a condition over one contacts
// row that any statement of the book's contacts can add to its WHERE
// clause. Its values travel as parameters, numbered after the caller's.
type Predicate struct {
	root    node
	bookID  uuid.UUID
	timeout time.Duration
	// what names the rule in the error of a statement it made too slow:
	// "rule" for a rule in the request, the segment's name otherwise.
	what string
}

// Where writes the condition for the contacts row aliased alias, with
// its parameters appended to args (the statement's own, numbered $1 to
// $len(args)); it returns the SQL and the arguments of the whole
// statement. The book is not part of the condition: the caller's
// statement already reads the book's contacts only.
func (p *Predicate) Where(alias string, args []any) (string, []any) {
	w := &sqlWriter{args: args, alias: alias, bookID: p.bookID}
	p.root.writeTo(w)
	return w.b.String(), w.args
}

// BookID is the book the rule was compiled for.
func (p *Predicate) BookID() uuid.UUID { return p.bookID }

// evaluationMemory is the working memory a statement evaluating a rule
// may use per sort or hash: a condition under OR or NOT hashes the ids of
// every contact that satisfies it, which for a 100,000-contact book
// needs several megabytes; with less PostgreSQL would test each contact
// against the subquery's rows one by one.
const evaluationMemory = "16MB"

// Within runs fn, whose statements in tx evaluate the predicate, with the
// statement timeout and working memory of rule evaluation (SET LOCAL: only
// tx sees them), and restores both afterwards, so statements fn's caller
// runs later in tx are not bound by them. A statement that runs out of
// time is a 400 that names the rule: no rule may occupy the database
// longer than that.
func (p *Predicate) Within(ctx context.Context, tx postgres.DB, fn func() error) error {
	var timeout, mem string
	err := tx.QueryRow(ctx, `SELECT current_setting('statement_timeout'), current_setting('work_mem'),
		set_config('statement_timeout', $1, true), set_config('work_mem', $2, true)`,
		fmt.Sprintf("%dms", p.timeout.Milliseconds()), evaluationMemory).Scan(&timeout, &mem, new(string), new(string))
	if err != nil {
		return err
	}
	if err := fn(); err != nil {
		if isTimeout(err) && ctx.Err() == nil {
			return apperr.Wrap(err, apperr.InvalidInput,
				"%s took longer than %s to evaluate against this book: narrow it (fewer contains, ends_with or not_* conditions on large fields).",
				p.what, p.timeout)
		}
		return err
	}
	_, err = tx.Exec(ctx, `SELECT set_config('statement_timeout', $1, true), set_config('work_mem', $2, true)`, timeout, mem)
	return err
}

// isTimeout reports whether err is PostgreSQL cancelling a statement
// (query_canceled: the statement timeout).
func isTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "57014"
}
