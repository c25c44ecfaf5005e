// Package suppression keeps the addresses of a book that campaign email
// must not reach. Whatever the feed (the unsubscribe page, the provider's
// bounces and complaints, an import, the API), a suppression is made by
// one operation, Suppressor.Suppress, and read by one rule,
// ContactSuppressed.
package suppression

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

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

// Source says where a suppression came from.
type Source string

// Sources.
const (
	SourceUnsubscribePage Source = "unsubscribe_page"
	SourceProvider        Source = "provider"
	SourceAPI             Source = "api"
	SourceImport          Source = "import"
)

// Suppression is the record of one suppressed address in a book.
type Suppression struct {
	ID        uuid.UUID
	BookID    uuid.UUID
	Email     string // lower-cased
	Reason    Reason
	Source    Source
	CreatedAt time.Time
	CreatedBy *uuid.UUID
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

// Suppressor makes suppressions, stamped by the service's clock.
type Suppressor struct {
	now func() time.Time
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
// asked (nil for the recipient or the provider). It runs in the caller's transaction, so a suppression commits with
// whatever asked for it.
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
	var out Result
	err := tx.QueryRow(ctx, `
		WITH recorded AS (
			INSERT INTO suppressions (book_id, email, reason, source, created_at, created_by)
			SELECT $1, e, $3, $4, $5, $6 FROM (SELECT DISTINCT unnest($2::text[]) AS e) a
			ON CONFLICT (book_id, email) WHERE lifted_at IS NULL DO NOTHING
			RETURNING email
		), marked AS (
			UPDATE contacts ct SET suppressed_at = $5
			WHERE ct.book_id = $1 AND ct.suppressed_at IS NULL
			  AND ct.id IN (SELECT contact_id FROM contact_emails WHERE book_id = $1 AND address_lower = ANY($2::text[]))
			  AND NOT EXISTS (
				SELECT 1 FROM contact_emails ce
				WHERE ce.contact_id = ct.id AND ce.address_lower <> ALL($2::text[])
				  AND NOT EXISTS (SELECT 1 FROM suppressions s
				                  WHERE s.book_id = $1 AND s.email = ce.address_lower AND s.lifted_at IS NULL))
			RETURNING 1
		)
		SELECT (SELECT count(*) FROM recorded), (SELECT count(*) FROM marked)`,
		bookID, clean, reason, source, sp.now(), actor).Scan(&out.Recorded, &out.Contacts)
	return out, postgres.Translate(err)
}
