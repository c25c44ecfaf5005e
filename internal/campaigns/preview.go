package campaigns

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/mailmerge"
	"github.com/contactbook/contactbook/internal/validate"
)

// PreviewInput is a template being written (saved or not) and the contact
// whose data fill it; without contact_id the book's oldest contact.
type PreviewInput struct {
	Subject   string  `json:"subject" validate:"max=500,headertext"`
	BodyHTML  string  `json:"body_html" validate:"max=1000000"`
	ContactID *string `json:"contact_id"`
}

// Preview is a template rendered for one contact as a campaign email would
// be: the same merge and footer. Its unsubscribe link leads to the
// invalid-link page (no token is issued for a preview). ContactID is the
// contact whose data were used; nil when the book has none.
type Preview struct {
	Subject   string     `json:"subject"`
	HTML      string     `json:"html"`
	ContactID *uuid.UUID `json:"contact_id"`
}

// Preview renders in for a contact of the book (viewer).
func (s *Service) Preview(ctx context.Context, sc access.Scope, in PreviewInput) (Preview, error) {
	if err := s.bookFor(ctx, sc, auth.RoleViewer); err != nil {
		return Preview{}, err
	}
	if err := validate.Struct(in); err != nil {
		return Preview{}, err
	}
	var id *uuid.UUID
	if in.ContactID != nil && strings.TrimSpace(*in.ContactID) != "" {
		u, err := uuid.Parse(strings.TrimSpace(*in.ContactID))
		if err != nil {
			return Preview{}, apperr.Invalidf("`contact_id` must be the id (a UUID) of a contact of the book.")
		}
		id = &u
	}
	book, err := s.st.mergeBook(ctx, s.db, sc.Book.ID)
	if err != nil {
		return Preview{}, err
	}
	v, used, err := s.contactValues(ctx, sc.Book.ID, id, book.name)
	if err != nil {
		return Preview{}, err
	}
	if id != nil && used == uuid.Nil {
		return Preview{}, apperr.NotFoundf("No contact with this id in the book.")
	}
	settings, _, err := s.loadSettings(ctx, s.db, sc.Book.ID)
	if err != nil {
		return Preview{}, err
	}
	tpl := mailmerge.Compile(in.Subject, in.BodyHTML, book.customKeys)
	v.UnsubscribeURL = s.links.unsubscribePageURL("preview")
	out := Preview{}
	out.Subject, out.HTML = tpl.Render(v, footerOf(settings.Settings))
	if used != uuid.Nil {
		out.ContactID = &used
	}
	return out, nil
}

// MergeField is one field a template can use: {{<key>}}.
type MergeField = mailmerge.Field

// MergeFields lists what a template of the book can merge (viewer): the
// built-in fields, unsubscribe_url, and the book's custom fields as
// custom.<key>. A field may carry a fallback: {{first_name | default: "there"}}.
func (s *Service) MergeFields(ctx context.Context, sc access.Scope) ([]MergeField, error) {
	if err := s.bookFor(ctx, sc, auth.RoleViewer); err != nil {
		return nil, err
	}
	custom, err := s.st.customFields(ctx, s.db, sc.Book.ID)
	if err != nil {
		return nil, err
	}
	out := make([]MergeField, 0, len(mailmerge.BuiltIn)+1+len(custom))
	out = append(out, mailmerge.BuiltIn...)
	out = append(out, MergeField{Key: "unsubscribe_url", Name: "Unsubscribe link"})
	for _, f := range custom {
		out = append(out, MergeField{Key: "custom." + f.Key, Name: f.Name})
	}
	return out, nil
}
