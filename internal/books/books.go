// Package books owns a team's books, the labels of each book and the
// custom field definitions of each book. It also answers the question every
// book-scoped request starts with: may this actor use this book?
package books

import (
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"golang.org/x/text/unicode/norm"

	"github.com/contactbook/contactbook/internal/enum"
	"github.com/contactbook/contactbook/internal/optional"
)

// Book holds contacts and labels.
type Book struct {
	ID                  uuid.UUID  `json:"id"`
	TeamID              uuid.UUID  `json:"team_id"`
	Name                string     `json:"name" validate:"required,max=200"`
	Slug                string     `json:"slug"`
	Color               string     `json:"color" validate:"hexcolor6"`
	Icon                string     `json:"icon" validate:"max=64"`
	EnforceUniqueEmails bool       `json:"enforce_unique_emails"`
	ContactCount        int64      `json:"contact_count"`
	CreatedBy           *uuid.UUID `json:"created_by"`
	CreatedAt           time.Time  `json:"created_at"`
	UpdatedAt           time.Time  `json:"updated_at"`
}

// Defaults of a new book.
const (
	DefaultColor = "#4F46E5"
	DefaultIcon  = "book"
)

// CreateInput is a new book.
type CreateInput struct {
	TeamID              uuid.UUID `json:"team_id"`
	Name                string    `json:"name"`
	Color               *string   `json:"color"`
	Icon                *string   `json:"icon"`
	EnforceUniqueEmails bool      `json:"enforce_unique_emails"`
}

// Patch changes a book; omitted fields stay.
type Patch struct {
	Name                optional.Value[string] `json:"name"`
	Color               optional.Value[string] `json:"color"`
	Icon                optional.Value[string] `json:"icon"`
	EnforceUniqueEmails optional.Value[bool]   `json:"enforce_unique_emails"`
}

// Label tags contacts of one book.
type Label struct {
	ID        uuid.UUID `json:"id"`
	BookID    uuid.UUID `json:"book_id"`
	Name      string    `json:"name" validate:"required,max=100"`
	Color     string    `json:"color" validate:"hexcolor6"`
	SortOrder int       `json:"sort_order" validate:"gte=0,lte=1000000"`
	// Public labels are topics: a sign-up form and the preference page
	// offer them to the people themselves, with their description.
	Public      bool      `json:"public"`
	Description string    `json:"description" validate:"max=1000"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// MaxLabelSortOrder bounds a label's sort_order (the database checks it
// too). Far below the integer column's limit, it leaves an append (last
// + 1) no way to overflow; labels appended at the bound share it and sort
// by name.
const MaxLabelSortOrder = 1_000_000

// DefaultLabelColor is a new label's colour when none is given.
const DefaultLabelColor = "#6B7280"

// LabelInput is a new label.
type LabelInput struct {
	Name        string  `json:"name"`
	Color       *string `json:"color"`
	Public      bool    `json:"public"`
	Description string  `json:"description"`
}

// LabelPatch changes a label.
type LabelPatch struct {
	Name        optional.Value[string] `json:"name"`
	Color       optional.Value[string] `json:"color"`
	SortOrder   optional.Value[int]    `json:"sort_order"`
	Public      optional.Value[bool]   `json:"public"`
	Description optional.Value[string] `json:"description"`
}

// FieldType is the kind of value a custom field holds.
type FieldType string

// Custom field types.
const (
	FieldText   FieldType = "text"
	FieldURL    FieldType = "url"
	FieldNumber FieldType = "number"
	FieldDate   FieldType = "date"
)

// FieldTypes is every custom field type.
var FieldTypes = []FieldType{FieldText, FieldURL, FieldNumber, FieldDate}

// OneOf lists the field types for the `enum` validation tag.
func (FieldType) OneOf() []string { return enum.Strings(FieldTypes) }

// ParseFieldType reads a custom field's `type`.
func ParseFieldType(s string) (FieldType, error) {
	return enum.Parse(FieldTypes, "`type`", s)
}

// Field is a custom field definition of a book.
type Field struct {
	ID        uuid.UUID `json:"id"`
	BookID    uuid.UUID `json:"book_id"`
	Key       string    `json:"key" validate:"required,fieldkey"`
	Name      string    `json:"name" validate:"required,max=200"`
	Type      FieldType `json:"type" validate:"required,enum"`
	CreatedAt time.Time `json:"created_at"`
}

// Slugify makes a URL-safe slug of a name: lower-case ASCII letters and
// digits joined by single dashes; accents are folded ("Café" -> "cafe").
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range norm.NFKD.String(name) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(unicode.ToLower(r))
		default:
			dash = true
		}
		if b.Len() >= 80 {
			break
		}
	}
	if b.Len() == 0 {
		return "book"
	}
	return b.String()
}
