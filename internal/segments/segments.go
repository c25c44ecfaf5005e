// Package segments owns segments: saved rules over a book's contacts that
// are evaluated whenever they are read, so their members are always the
// contacts that match now. It owns the rule language (its types, limits
// and the errors that name the place at fault), the one compiler from a
// rule to parameterised SQL (Predicate: values only ever travel as
// parameters), and the segments table. Other packages narrow their own
// statements with a Predicate: the contacts list, export and bulk
// operations, and the campaigns' enrollment and audiences.
package segments

import (
	"time"

	"github.com/google/uuid"
)

// Segment is a saved rule of a book, as the API returns it.
type Segment struct {
	ID          uuid.UUID  `json:"id"`
	BookID      uuid.UUID  `json:"book_id"`
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Rule        Rule       `json:"rule"`
	CreatedBy   *uuid.UUID `json:"created_by"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	// ContactCount is how many contacts match now; only a single
	// segment's answer carries it.
	ContactCount *int64 `json:"contact_count,omitempty"`
}

// Input is a new segment.
type Input struct {
	Name        *string
	Description *string
	Rule        *Rule
}

// Patch changes a segment; nil fields stay as they are.
type Patch = Input

// Limits of the rule language and of segments.
const (
	// MaxConditions bounds the conditions of one rule.
	MaxConditions = 50
	// MaxGroups bounds the groups (all, any, not) on any path from the
	// root of a rule to a leaf, the root included.
	MaxGroups = 5
	// MaxLabels bounds the label ids of one labels condition.
	MaxLabels = 100
	// MaxText bounds a text value of a condition.
	MaxText = 500
	// MaxDays bounds within_last_days and not_within_last_days.
	MaxDays = 3650
	// MaxName bounds a segment's name; MaxDescription its description.
	MaxName        = 100
	MaxDescription = 2000
	// PreviewSize is how many contacts a preview shows.
	PreviewSize = 10
)

// DefaultStatementTimeout bounds every statement that evaluates a rule,
// whatever it asks: a rule can be written that no index serves.
const DefaultStatementTimeout = 5 * time.Second
