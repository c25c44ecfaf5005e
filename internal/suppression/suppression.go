// Package suppression keeps the addresses of a book that campaign email
// must not reach. Whatever the feed (the unsubscribe page, the provider's
// bounces and complaints, an import, the API), a suppression is made by
// one operation, Suppressor.Suppress, lifted by Suppressor.Lift, and read
// by one rule, ContactSuppressed (InForce gives the reason of single
// addresses). Service serves a book's list to its team.
package suppression

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/enum"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Reason says why an address is suppressed.
type Reason string

// Reasons.
const (
	ReasonUnsubscribe Reason = "unsubscribe"
	ReasonBounce      Reason = "bounce"
	ReasonComplaint   Reason = "complaint"
	ReasonDropped     Reason = "dropped"
	ReasonManual      Reason = "manual"
)

// Reasons is every reason, in the order the API documents them.
var Reasons = []Reason{ReasonUnsubscribe, ReasonBounce, ReasonComplaint, ReasonDropped, ReasonManual}

// ParseReason reads a suppression's `reason`.
func ParseReason(s string) (Reason, error) {
	return enum.Parse(Reasons, "`reason`", s)
}

// Source says where a suppression came from.
type Source string

// Sources.
const (
	SourceUnsubscribePage Source = "unsubscribe_page"
	SourceProvider        Source = "provider"
	SourceAPI             Source = "api"
	SourceImport          Source = "import"
)

// Sources is every source.
var Sources = []Source{SourceUnsubscribePage, SourceProvider, SourceAPI, SourceImport}

// Suppression is the record of one suppressed address in a book. Email is
// nil once the person was erased: the record then keeps only EmailHash,
// which every check compares, so the address stays blocked.
type Suppression struct {
	ID        uuid.UUID  `json:"id"`
	BookID    uuid.UUID  `json:"book_id"`
	Email     *string    `json:"email"` // lower-cased
	EmailHash string     `json:"email_hash"`
	Reason    Reason     `json:"reason"`
	Source    Source     `json:"source"`
	CreatedAt time.Time  `json:"created_at"`
	CreatedBy *uuid.UUID `json:"created_by"`
}

// Result is what one Suppress did.
type Result struct {
	// Recorded counts the addresses that were not suppressed before.
	Recorded int64
	// Contacts counts the contacts that became suppressed: every address
	// they hold is now suppressed.
	Contacts int64
}

// ContactSuppressed is the rule, in SQL for a contacts row aliased ct: a
// contact is suppressed once every address it holds is (or it asked to
// hear from no campaign of the book). No campaign email reaches a
// suppressed contact and enrollments skip it.
const ContactSuppressed = `(ct.suppressed_at IS NOT NULL)`

// Hash is the SHA-256 of the lower-cased, trimmed address in lowercase
// hex: what a suppression is matched on.
func Hash(address string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(address))))
	return hex.EncodeToString(sum[:])
}

// HashSQL is the SQL expression of Hash for an expression that is already
// lower-cased (such as contact_emails.address_lower), for readers that
// match suppressions in a statement of their own.
func HashSQL(lowerExpr string) string {
	return `encode(sha256(convert_to(` + lowerExpr + `, 'UTF8')), 'hex')`
}

// ReasonSQL is the SQL expression of the reason the address lowerExpr
// (lower-cased already) is suppressed in the book bookExpr, NULL when it
// is not: a statement of another package that needs it per row (the
// campaign's claim of its recipients) reads suppressions through it.
func ReasonSQL(bookExpr, lowerExpr string) string {
	return `(SELECT s.reason FROM suppressions s WHERE s.book_id = ` + bookExpr +
		` AND s.email_hash = ` + HashSQL(lowerExpr) + ` AND s.lifted_at IS NULL)`
}

// Suppressor makes suppressions, stamped by the service's clock. With an
// outbox it writes suppression.created and suppression.lifted for the
// webhooks that subscribe to them, in the caller's transaction.
type Suppressor struct {
	now    func() time.Time
	outbox *events.Outbox
}

// WithOutbox returns the Suppressor writing its events to o.
func (sp Suppressor) WithOutbox(o *events.Outbox) Suppressor {
	sp.outbox = o
	return sp
}

// wanted returns the team of the book and whether an active webhook of it
// subscribes to typ (never without an outbox).
func (sp Suppressor) wanted(ctx context.Context, db postgres.DB, bookID uuid.UUID, typ string) (uuid.UUID, bool, error) {
	if sp.outbox == nil {
		return uuid.Nil, false, nil
	}
	var team uuid.UUID
	var yes bool
	err := db.QueryRow(ctx, `SELECT team_id, `+events.WantedSQL("team_id", "$2")+` FROM book_teams WHERE book_id = $1`, bookID, typ).Scan(&team, &yes)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, false, nil
	}
	return team, yes, err
}

// emit writes one suppression event of typ per suppression given.
func (sp Suppressor) emit(ctx context.Context, db postgres.DB, teamID, bookID uuid.UUID, typ string, ids []uuid.UUID, emails []*string, reasons []string, sources []string, at time.Time) error {
	book := bookID
	evs := make([]events.Event, len(ids))
	for i, id := range ids {
		evs[i] = events.Event{Type: typ, TeamID: teamID, BookID: &book, Data: events.SuppressionData{
			SuppressionID: id, Address: emails[i], Reason: reasons[i], Source: sources[i], OccurredAt: at.UTC(),
		}}
	}
	return sp.outbox.AppendIn(ctx, db, at, evs...)
}

// New returns a Suppressor on the clock now (nil: time.Now).
func New(now func() time.Time) Suppressor {
	if now == nil {
		now = time.Now
	}
	return Suppressor{now: now}
}

// Suppress records each address (trimmed, lower-cased; empty ones are
// skipped) as suppressed in the book unless a suppression is already in
// force for it, and marks the book's contacts that hold one of the
// addresses and no address that is not suppressed. actor is the user who
// asked (nil for the recipient, the provider or an API key). It runs in
// the caller's transaction, so a suppression commits with whatever asked
// for it.
func (sp Suppressor) Suppress(ctx context.Context, tx postgres.DB, bookID uuid.UUID, addresses []string, reason Reason, source Source, actor *uuid.UUID) (Result, error) {
	clean := make([]string, 0, len(addresses))
	for _, a := range addresses {
		if a = strings.ToLower(strings.TrimSpace(a)); a != "" {
			clean = append(clean, a)
		}
	}
	if len(clean) == 0 {
		return Result{}, nil
	}
	// An address of the book under a suppression in force, by hash.
	listed := func(address string) string {
		return `EXISTS (SELECT 1 FROM suppressions s WHERE s.book_id = $1 AND s.email_hash = ` + HashSQL(address) + ` AND s.lifted_at IS NULL)`
	}
	team, want, err := sp.wanted(ctx, tx, bookID, events.SuppressionCreated)
	if err != nil {
		return Result{}, err
	}
	var out Result
	var ids []uuid.UUID
	var emails []*string
	now := sp.now()
	err = tx.QueryRow(ctx, `
		WITH recorded AS (
			INSERT INTO suppressions (book_id, email, reason, source, created_at, created_by)
			SELECT $1, e, $3, $4, $5, $6 FROM (SELECT DISTINCT unnest($2::text[]) AS e) a
			ON CONFLICT (book_id, email_hash) WHERE lifted_at IS NULL DO NOTHING
			RETURNING id, email
		), marked AS (
			`+contacts.MarkSuppressedSQL("$1", "$5", "$2::text[]", listed)+`
		)
		SELECT (SELECT count(*) FROM recorded), (SELECT count(*) FROM marked),
		       CASE WHEN $7 THEN ARRAY(SELECT id FROM recorded) END, CASE WHEN $7 THEN ARRAY(SELECT email FROM recorded) END`,
		bookID, clean, reason, source, now, actor, want).Scan(&out.Recorded, &out.Contacts, &ids, &emails)
	if err != nil || len(ids) == 0 {
		return out, err
	}
	reasons, sources := make([]string, len(ids)), make([]string, len(ids))
	for i := range ids {
		reasons[i], sources[i] = string(reason), string(source)
	}
	return out, sp.emit(ctx, tx, team, bookID, events.SuppressionCreated, ids, emails, reasons, sources, now)
}

// Lift ends the suppression id, recording who (nil: an API key) and when,
// and unmarks the book's contacts that hold its address: they now hold an
// address that is not suppressed. A suppression already lifted keeps its
// record as it is. It runs in the caller's transaction.
func (sp Suppressor) Lift(ctx context.Context, tx postgres.DB, id uuid.UUID, actor *uuid.UUID) error {
	isLifted := func(address string) string { return HashSQL(address) + ` = l.email_hash` }
	now := sp.now()
	_, err := tx.Exec(ctx, `
		WITH lifted AS (
			UPDATE suppressions SET lifted_at = $2, lifted_by = $3
			WHERE id = $1 AND lifted_at IS NULL
			RETURNING book_id, email_hash
		)
		`+contacts.UnmarkSuppressedSQL("lifted l", "l.book_id", isLifted),
		id, now, actor)
	if err != nil || sp.outbox == nil {
		return err
	}
	// The suppression as lifted now (none when it was lifted before).
	var bookID uuid.UUID
	var email *string
	var reason, source string
	err = tx.QueryRow(ctx, `SELECT book_id, email, reason, source FROM suppressions WHERE id = $1 AND lifted_at = $2`, id, now).
		Scan(&bookID, &email, &reason, &source)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	team, want, err := sp.wanted(ctx, tx, bookID, events.SuppressionLifted)
	if err != nil || !want {
		return err
	}
	return sp.emit(ctx, tx, team, bookID, events.SuppressionLifted, []uuid.UUID{id}, []*string{email}, []string{reason}, []string{source}, now)
}

// remarkSQL sets or clears the suppressed mark of the contact $1 of the
// book $2 by the rule, at time $3. In a book without a suppression in
// force (most books) no contact is marked, and the first test, evaluated
// once, ends the statement.
var remarkSQL = contacts.RemarkSuppressedSQL("$1", "$2", "$3::timestamptz",
	`EXISTS (SELECT 1 FROM suppressions WHERE book_id = $2 AND lifted_at IS NULL)`,
	func(address string) string {
		return `EXISTS (
				SELECT 1 FROM suppressions s
				WHERE s.book_id = $2 AND s.email_hash = ` + HashSQL(address) + ` AND s.lifted_at IS NULL)`
	})

// Remark makes the suppressed mark of the book's contact true to its
// addresses after a write changed those: a contact created with a
// suppressed address is as unreachable as one whose address was
// suppressed later, and one given an address that is not suppressed is
// reachable again. It runs in the caller's transaction.
func (sp Suppressor) Remark(ctx context.Context, db postgres.DB, bookID, contactID uuid.UUID) error {
	_, err := db.Exec(ctx, remarkSQL, contactID, bookID, sp.now())
	return err
}

// QueueRemark is Remark as a statement of the caller's batch, after the
// write it follows.
func (sp Suppressor) QueueRemark(b *pgx.Batch, bookID, contactID uuid.UUID) {
	b.Queue(remarkSQL, contactID, bookID, sp.now())
}

// AnyInForce reports whether the book has a suppression in force: most
// have none, which spares a caller hashing and sending its addresses.
func AnyInForce(ctx context.Context, db postgres.DB, bookID uuid.UUID) (bool, error) {
	var some bool
	err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM suppressions WHERE book_id = $1 AND lifted_at IS NULL)`, bookID).Scan(&some)
	return some, err
}

// InForce returns, for each of the addresses (lower-cased) that is
// suppressed in the book, the reason. It matches by hash, so the
// suppressions of an erased person count too.
func InForce(ctx context.Context, db postgres.DB, bookID uuid.UUID, addresses []string) (map[string]Reason, error) {
	byHash := make(map[string]string, len(addresses))
	hashes := make([]string, 0, len(addresses))
	for _, a := range addresses {
		h := Hash(a)
		if _, dup := byHash[h]; !dup {
			hashes = append(hashes, h)
		}
		byHash[h] = a
	}
	rows, err := db.Query(ctx, `SELECT email_hash, reason FROM suppressions
		WHERE book_id = $1 AND email_hash = ANY($2::text[]) AND lifted_at IS NULL`, bookID, hashes)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]Reason{}
	for rows.Next() {
		var h string
		var r Reason
		if err := rows.Scan(&h, &r); err != nil {
			return nil, err
		}
		out[byHash[h]] = r
	}
	return out, rows.Err()
}

// LiftUnsubscribe lifts the unsubscribe suppression in force for address
// in the book, if there is one (the person asked to hear from the book
// again); a suppression for any other reason stays. It reports whether
// one was lifted, and runs in the caller's transaction.
func (sp Suppressor) LiftUnsubscribe(ctx context.Context, tx postgres.DB, bookID uuid.UUID, address string) (bool, error) {
	var id uuid.UUID
	err := tx.QueryRow(ctx, `SELECT id FROM suppressions
		WHERE book_id = $1 AND email_hash = $2 AND lifted_at IS NULL AND reason = $3`,
		bookID, Hash(address), ReasonUnsubscribe).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, sp.Lift(ctx, tx, id, nil)
}

// Forget removes the addresses from the book's suppression records, in
// force or lifted, keeping their hashes: the records keep blocking the
// addresses without holding them (erasure). It runs in the caller's
// transaction and returns how many records it changed.
func Forget(ctx context.Context, tx postgres.DB, bookID uuid.UUID, addresses []string) (int64, error) {
	hashes := make([]string, 0, len(addresses))
	for _, a := range addresses {
		hashes = append(hashes, Hash(a))
	}
	tag, err := tx.Exec(ctx, `UPDATE suppressions SET email = NULL
		WHERE book_id = $1 AND email_hash = ANY($2::text[]) AND email IS NOT NULL`, bookID, hashes)
	return tag.RowsAffected(), err
}

// OfAddresses returns the book's suppression records in force for the
// addresses, matched by hash (a person's data export).
func OfAddresses(ctx context.Context, db postgres.DB, bookID uuid.UUID, addresses []string) ([]Suppression, error) {
	hashes := make([]string, 0, len(addresses))
	for _, a := range addresses {
		hashes = append(hashes, Hash(a))
	}
	rows, err := db.Query(ctx, `SELECT `+columns+` FROM suppressions
		WHERE book_id = $1 AND email_hash = ANY($2::text[]) AND lifted_at IS NULL ORDER BY created_at, id`, bookID, hashes)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Suppression, error) { return scan(r) })
	return out, err
}

const columns = `id, book_id, email, email_hash, reason, source, created_at, created_by`

func scan(row pgx.Row) (Suppression, error) {
	var s Suppression
	err := row.Scan(&s.ID, &s.BookID, &s.Email, &s.EmailHash, &s.Reason, &s.Source, &s.CreatedAt, &s.CreatedBy)
	return s, err
}

// inForce is the suppression in force for one address.
func inForce(ctx context.Context, db postgres.DB, bookID uuid.UUID, email string) (Suppression, error) {
	s, err := scan(db.QueryRow(ctx, `SELECT `+columns+` FROM suppressions WHERE book_id = $1 AND email_hash = $2 AND lifted_at IS NULL`, bookID, Hash(email)))
	return s, err
}

// listWhere selects the suppressions in force of a book ($1) that match a
// reason ($2, empty for any) and a part of the address ($3, empty for any).
const listWhere = `book_id = $1 AND lifted_at IS NULL AND ($2 = '' OR reason = $2) AND ($3 = '' OR strpos(email, $3) > 0)`

// list pages the suppressions in force, newest first.
func list(ctx context.Context, db postgres.DB, bookID uuid.UUID, f Filter) ([]Suppression, int64, error) {
	q := strings.ToLower(strings.TrimSpace(f.Q))
	var total int64
	if err := db.QueryRow(ctx, `SELECT count(*) FROM suppressions WHERE `+listWhere, bookID, f.Reason, q).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.Query(ctx, `SELECT `+columns+` FROM suppressions WHERE `+listWhere+`
		ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`, bookID, f.Reason, q, f.Limit, f.Offset)
	if err != nil {
		return nil, 0, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Suppression, error) { return scan(r) })
	return out, total, err
}

// exportBatch reads the next ExportBatch suppressions of an export, in the
// order of list, after the one last written (none: from the start).
func exportBatch(ctx context.Context, db postgres.DB, bookID uuid.UUID, f Filter, after *Suppression) ([]Suppression, error) {
	q := strings.ToLower(strings.TrimSpace(f.Q))
	var (
		afterAt *time.Time
		afterID *uuid.UUID
	)
	if after != nil {
		afterAt, afterID = &after.CreatedAt, &after.ID
	}
	rows, err := db.Query(ctx, `SELECT `+columns+` FROM suppressions WHERE `+listWhere+`
		AND ($4::timestamptz IS NULL OR (created_at, id) < ($4, $5))
		ORDER BY created_at DESC, id DESC LIMIT $6`, bookID, f.Reason, q, afterAt, afterID, ExportBatch)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Suppression, error) { return scan(r) })
	return out, err
}
