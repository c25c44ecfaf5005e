// Package contacts owns the contacts of a book: their representation and
// validation, create/read/update/delete, search and listing, labels on
// contacts, bulk operations over up to 10,000 contacts, duplicate-email
// checks and enforcement, and the contact.* events written to the outbox in
// the same transaction as each change.
package contacts

import (
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/enum"
	"github.com/contactbook/contactbook/internal/optional"
	"github.com/contactbook/contactbook/internal/validate"
)

// Contact is a person or company in a book, exactly as the API returns it
// and as contact.created / contact.updated events carry it.
type Contact struct {
	ID           uuid.UUID         `json:"id"`
	BookID       uuid.UUID         `json:"book_id"`
	FirstName    string            `json:"first_name" validate:"max=200"`
	LastName     string            `json:"last_name" validate:"max=200"`
	Company      string            `json:"company" validate:"max=200"`
	JobTitle     string            `json:"job_title" validate:"max=200"`
	Emails       []Email           `json:"emails" validate:"max=20,dive"`
	Phones       []Phone           `json:"phones" validate:"max=20,dive"`
	CustomFields map[string]string `json:"custom_fields"`
	Notes        string            `json:"notes" validate:"max=20000"`
	PhotoURL     *string           `json:"photo_url"`
	Starred      bool              `json:"starred"`
	Birthday     *string           `json:"birthday" validate:"omitempty,date"`
	Website      string            `json:"website" validate:"omitempty,max=2048,http_url"`
	// TimeZone is an IANA name; nil: the book's default (campaign send
	// windows are read in it).
	TimeZone      *string        `json:"time_zone" validate:"omitempty,timezone"`
	Addresses     []Address      `json:"addresses" validate:"max=10,dive"`
	Dates         []Date         `json:"dates" validate:"max=20,dive"`
	Socials       []Social       `json:"socials" validate:"max=20,dive"`
	Relationships []Relationship `json:"relationships" validate:"max=50,dive"`
	Labels        []LabelRef     `json:"labels"`
	CreatedBy     *uuid.UUID     `json:"created_by"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at"`
}

// EmailLabel says what an email address is for.
type EmailLabel string

// PhoneLabel says what a phone number is for.
type PhoneLabel string

// AddressLabel says what a postal address is for.
type AddressLabel string

// SocialLabel names the network of a social profile.
type SocialLabel string

// The labels each kind of entry may carry; an entry sent without one is
// "other", which every set holds.
var (
	EmailLabels   = []EmailLabel{"work", "personal", "other"}
	PhoneLabels   = []PhoneLabel{"mobile", "work", "other"}
	AddressLabels = []AddressLabel{"home", "work", "other"}
	SocialLabels  = []SocialLabel{"linkedin", "x", "instagram", "facebook", "github", "youtube", "other"}
)

// OneOf lists the email labels for the `enum` validation tag.
func (EmailLabel) OneOf() []string { return enum.Strings(EmailLabels) }

// OneOf lists the phone labels for the `enum` validation tag.
func (PhoneLabel) OneOf() []string { return enum.Strings(PhoneLabels) }

// OneOf lists the address labels for the `enum` validation tag.
func (AddressLabel) OneOf() []string { return enum.Strings(AddressLabels) }

// OneOf lists the social networks for the `enum` validation tag.
func (SocialLabel) OneOf() []string { return enum.Strings(SocialLabels) }

// ParseEmailLabel reads an email's `label`.
func ParseEmailLabel(s string) (EmailLabel, error) { return enum.Parse(EmailLabels, "`label`", s) }

// ParsePhoneLabel reads a phone's `label`.
func ParsePhoneLabel(s string) (PhoneLabel, error) { return enum.Parse(PhoneLabels, "`label`", s) }

// ParseAddressLabel reads an address's `label`.
func ParseAddressLabel(s string) (AddressLabel, error) {
	return enum.Parse(AddressLabels, "`label`", s)
}

// ParseSocialLabel reads a social profile's `label`.
func ParseSocialLabel(s string) (SocialLabel, error) { return enum.Parse(SocialLabels, "`label`", s) }

// Email is one address of a contact.
type Email struct {
	Address string     `json:"address" validate:"required,max=254,email"`
	Label   EmailLabel `json:"label" validate:"enum"`
	Primary bool       `json:"primary"`
}

// Phone is one phone number of a contact.
type Phone struct {
	Number  string     `json:"number" validate:"required,max=50"`
	Label   PhoneLabel `json:"label" validate:"enum"`
	Primary bool       `json:"primary"`
}

// Address is one postal address of a contact.
type Address struct {
	Label   AddressLabel `json:"label" validate:"enum"`
	Street  string       `json:"street" validate:"max=500"`
	City    string       `json:"city" validate:"max=200"`
	State   string       `json:"state" validate:"max=200"`
	Zip     string       `json:"zip" validate:"max=32"`
	Country string       `json:"country" validate:"max=100"`
}

// Date is a labelled calendar date ("anniversary": 2010-06-12).
type Date struct {
	Label string `json:"label" validate:"required,max=100"`
	Value string `json:"value" validate:"required,date"`
}

// Social is a profile on a social network.
type Social struct {
	Label SocialLabel `json:"label" validate:"enum"`
	Value string      `json:"value" validate:"required,max=500"`
}

// Relationship names a related person, optionally a contact of the same book.
type Relationship struct {
	Label     string     `json:"label" validate:"required,max=100"`
	Name      string     `json:"name" validate:"required,max=200"`
	ContactID *RelatedID `json:"contact_id,omitempty"`
}

// RelatedID is the contact a relationship points to: a UUID in JSON that,
// when malformed, says which field it is.
type RelatedID uuid.UUID

// MarshalText writes the UUID.
func (r RelatedID) MarshalText() ([]byte, error) { return uuid.UUID(r).MarshalText() }

// UnmarshalText reads the UUID.
func (r *RelatedID) UnmarshalText(b []byte) error {
	id, err := uuid.ParseBytes(b)
	if err != nil {
		return errors.New("`relationships[].contact_id` must be a contact id (UUID)")
	}
	*r = RelatedID(id)
	return nil
}

// LabelRef is a label as a contact carries it.
type LabelRef struct {
	ID    uuid.UUID `json:"id"`
	Name  string    `json:"name"`
	Color string    `json:"color"`
}

// DisplayName is how the contact is named in lists and messages: the full
// name, else the company.
func (c Contact) DisplayName() string {
	if n := strings.TrimSpace(c.FirstName + " " + c.LastName); n != "" {
		return n
	}
	return c.Company
}

// CreateInput is the body of a contact create. custom_fields, labels and
// photo_url are not accepted there; they are caught as raw JSON so the
// answer can name them.
type CreateInput struct {
	FirstName     string         `json:"first_name"`
	LastName      string         `json:"last_name"`
	Company       string         `json:"company"`
	JobTitle      string         `json:"job_title"`
	Notes         string         `json:"notes"`
	Website       string         `json:"website"`
	TimeZone      *string        `json:"time_zone"`
	Birthday      *string        `json:"birthday"`
	Starred       bool           `json:"starred"`
	Emails        []Email        `json:"emails"`
	Phones        []Phone        `json:"phones"`
	Addresses     []Address      `json:"addresses"`
	Dates         []Date         `json:"dates"`
	Socials       []Social       `json:"socials"`
	Relationships []Relationship `json:"relationships"`

	CustomFields json.RawMessage `json:"custom_fields"`
	Labels       json.RawMessage `json:"labels"`
	PhotoURL     json.RawMessage `json:"photo_url"`
}

// Patch changes a contact: omitted fields stay, arrays replace the whole
// array, null clears (birthday to null, strings to "", arrays to []).
type Patch struct {
	FirstName     optional.Value[string]         `json:"first_name"`
	LastName      optional.Value[string]         `json:"last_name"`
	Company       optional.Value[string]         `json:"company"`
	JobTitle      optional.Value[string]         `json:"job_title"`
	Notes         optional.Value[string]         `json:"notes"`
	Website       optional.Value[string]         `json:"website"`
	TimeZone      optional.Value[string]         `json:"time_zone"`
	Birthday      optional.Value[string]         `json:"birthday"`
	Starred       optional.Value[bool]           `json:"starred"`
	Emails        optional.Value[[]Email]        `json:"emails"`
	Phones        optional.Value[[]Phone]        `json:"phones"`
	Addresses     optional.Value[[]Address]      `json:"addresses"`
	Dates         optional.Value[[]Date]         `json:"dates"`
	Socials       optional.Value[[]Social]       `json:"socials"`
	Relationships optional.Value[[]Relationship] `json:"relationships"`

	PhotoURL json.RawMessage `json:"photo_url"`
}

func (p Patch) empty() bool {
	return !p.FirstName.Set && !p.LastName.Set && !p.Company.Set && !p.JobTitle.Set && !p.Notes.Set &&
		!p.Website.Set && !p.TimeZone.Set && !p.Birthday.Set && !p.Starred.Set && !p.Emails.Set && !p.Phones.Set &&
		!p.Addresses.Set && !p.Dates.Set && !p.Socials.Set && !p.Relationships.Set
}

// refused answers a create body that tries to set what only other
// endpoints set.
func (in CreateInput) refused() error {
	switch {
	case in.CustomFields != nil:
		return apperr.Invalidf("`custom_fields` cannot be set when creating a contact; set values with POST /contacts/bulk-update-field.")
	case in.Labels != nil:
		return apperr.Invalidf("`labels` cannot be set when creating a contact; add labels with POST /contacts/{id}/labels.")
	case in.PhotoURL != nil:
		return apperr.Invalidf("`photo_url` cannot be set through the API; remove it from the body.")
	}
	return nil
}

// contact is the new contact the input describes, normalised and
// validated.
func (in CreateInput) contact(bookID uuid.UUID, createdBy *uuid.UUID) (Contact, error) {
	if err := in.refused(); err != nil {
		return Contact{}, err
	}
	c := in.newContact(bookID, createdBy)
	c.normalize()
	return c, c.validate()
}

// newContact builds the contact a create body describes (not yet valid).
func (in CreateInput) newContact(bookID uuid.UUID, createdBy *uuid.UUID) Contact {
	return Contact{
		BookID: bookID, FirstName: in.FirstName, LastName: in.LastName, Company: in.Company,
		JobTitle: in.JobTitle, Notes: in.Notes, Website: in.Website, TimeZone: in.TimeZone, Birthday: in.Birthday, Starred: in.Starred,
		Emails: in.Emails, Phones: in.Phones, Addresses: in.Addresses, Dates: in.Dates, Socials: in.Socials,
		Relationships: in.Relationships, CreatedBy: createdBy,
	}
}

// apply copies the patch's fields into c.
func (p Patch) apply(c *Contact) {
	p.FirstName.ApplyTo(&c.FirstName)
	p.LastName.ApplyTo(&c.LastName)
	p.Company.ApplyTo(&c.Company)
	p.JobTitle.ApplyTo(&c.JobTitle)
	p.Notes.ApplyTo(&c.Notes)
	p.Website.ApplyTo(&c.Website)
	p.TimeZone.ApplyToPtr(&c.TimeZone)
	p.Birthday.ApplyToPtr(&c.Birthday)
	p.Starred.ApplyTo(&c.Starred)
	p.Emails.ApplyTo(&c.Emails)
	p.Phones.ApplyTo(&c.Phones)
	p.Addresses.ApplyTo(&c.Addresses)
	p.Dates.ApplyTo(&c.Dates)
	p.Socials.ApplyTo(&c.Socials)
	p.Relationships.ApplyTo(&c.Relationships)
}

// normalize trims what users pad by accident, fills default labels and
// turns absent arrays into empty ones, so the stored form is canonical.
func (c *Contact) normalize() {
	c.FirstName = strings.TrimSpace(c.FirstName)
	c.LastName = strings.TrimSpace(c.LastName)
	c.Company = strings.TrimSpace(c.Company)
	c.JobTitle = strings.TrimSpace(c.JobTitle)
	c.Website = strings.TrimSpace(c.Website)
	if c.TimeZone != nil && strings.TrimSpace(*c.TimeZone) == "" {
		c.TimeZone = nil
	}
	if c.Birthday != nil && strings.TrimSpace(*c.Birthday) == "" {
		c.Birthday = nil
	}
	c.Emails = nonNil(c.Emails)
	for i := range c.Emails {
		c.Emails[i].Address = strings.TrimSpace(c.Emails[i].Address)
		c.Emails[i].Label = defaultLabel(c.Emails[i].Label)
	}
	c.Phones = nonNil(c.Phones)
	for i := range c.Phones {
		c.Phones[i].Number = strings.TrimSpace(c.Phones[i].Number)
		c.Phones[i].Label = defaultLabel(c.Phones[i].Label)
	}
	c.Addresses = nonNil(c.Addresses)
	for i := range c.Addresses {
		a := &c.Addresses[i]
		a.Label = defaultLabel(a.Label)
		a.Street, a.City, a.State = strings.TrimSpace(a.Street), strings.TrimSpace(a.City), strings.TrimSpace(a.State)
		a.Zip, a.Country = strings.TrimSpace(a.Zip), strings.TrimSpace(a.Country)
	}
	c.Dates = nonNil(c.Dates)
	for i := range c.Dates {
		c.Dates[i].Label = strings.TrimSpace(c.Dates[i].Label)
		c.Dates[i].Value = strings.TrimSpace(c.Dates[i].Value)
	}
	c.Socials = nonNil(c.Socials)
	for i := range c.Socials {
		c.Socials[i].Label = defaultLabel(c.Socials[i].Label)
		c.Socials[i].Value = strings.TrimSpace(c.Socials[i].Value)
	}
	c.Relationships = nonNil(c.Relationships)
	for i := range c.Relationships {
		c.Relationships[i].Label = strings.TrimSpace(c.Relationships[i].Label)
		c.Relationships[i].Name = strings.TrimSpace(c.Relationships[i].Name)
	}
	c.Labels = nonNil(c.Labels)
	if c.CustomFields == nil {
		c.CustomFields = map[string]string{}
	}
}

// defaultLabel is the label of an entry sent without one.
func defaultLabel[L ~string](l L) L {
	if l = L(strings.TrimSpace(string(l))); l == "" {
		return "other"
	}
	return l
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// errNoName is the API's one VALIDATION_ERROR (every other bad input is
// INVALID_INPUT).
var errNoName = apperr.New(apperr.Validation, "A contact needs at least one of first_name, last_name or company.")

// phonePattern accepts what people write as phone numbers: digits with
// spaces, dots, dashes, slashes and brackets, an optional leading +, and an
// optional extension ("x12", "ext. 12", "#12").
var phonePattern = regexp.MustCompile(`^\+?[0-9 ().\-/]*[0-9][0-9 ().\-/]*(?:\s*(?:x|ext\.?|#)\s*[0-9]{1,10})?$`)

// validate checks a normalized contact: the name rule
// (VALIDATION_ERROR), then every field and element (INVALID_INPUT naming
// the field). It never consults the database; rules that need it
// (relationship contact ids, unique emails) live in the service and store.
func (c *Contact) validate() error {
	if c.FirstName == "" && c.LastName == "" && c.Company == "" {
		return errNoName
	}
	if !c.passesTags() {
		if err := validate.Struct(c); err != nil {
			return err
		}
	}
	if c.Website != "" {
		if u, err := url.Parse(c.Website); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return apperr.Invalidf("`website` must be a valid http(s) URL.")
		}
	}
	seen := make(map[string]int, len(c.Emails))
	primaries := 0
	for i, e := range c.Emails {
		key := strings.ToLower(e.Address)
		if j, dup := seen[key]; dup {
			return apperr.Invalidf("`emails[%d].address` repeats `emails[%d].address`; list each address once.", i, j)
		}
		seen[key] = i
		if e.Primary {
			if primaries++; primaries > 1 {
				return apperr.Invalidf("`emails[%d].primary`: at most one email may be primary.", i)
			}
		}
	}
	primaries = 0
	for i, p := range c.Phones {
		if !phonePattern.MatchString(p.Number) {
			return apperr.Invalidf("`phones[%d].number` must be a phone number: digits, spaces and + ( ) . - /, optionally an extension like \"x12\".", i)
		}
		if p.Primary {
			if primaries++; primaries > 1 {
				return apperr.Invalidf("`phones[%d].primary`: at most one phone may be primary.", i)
			}
		}
	}
	for i, a := range c.Addresses {
		if a.Street == "" && a.City == "" && a.State == "" && a.Zip == "" && a.Country == "" {
			return apperr.Invalidf("`addresses[%d]` is empty; give at least one of street, city, state, zip, country.", i)
		}
	}
	return nil
}
