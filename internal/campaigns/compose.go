package campaigns

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/mailmerge"
)

// ComposeInput asks for one email of a template of the book outside any
// campaign (a transactional email): to the contact ContactID, or to the
// address Email (whose contact in the book, if any, lends its fields),
// with Data for {{data.*}} and, when set, Subject instead of the
// template's.
type ComposeInput struct {
	BookID     uuid.UUID
	TemplateID uuid.UUID
	ContactID  *uuid.UUID
	Email      string
	Data       []byte // a JSON object, or nil
	Subject    *string
}

// Composed is the email rendered for its recipient. ContactID is the
// contact it goes to (nil for an address no contact of the book has);
// Email and Name are the recipient's address and display name.
type Composed struct {
	ContactID     *uuid.UUID
	Email, Name   string
	Subject, HTML string
}

var errComposeTemplate = apperr.NotFoundf("`template_id` names no email template of this book.")

var errComposeContact = apperr.NotFoundf("`to.contact_id` names no contact of this book.")

// Compose renders the template for the recipient with the campaign
// emails' merge fields and {{data.*}}, without the marketing footer
// (mailmerge.RenderPlain). A template of another book is NOT_FOUND; a
// contact without an address, INVALID_INPUT.
func (s *Service) Compose(ctx context.Context, in ComposeInput) (Composed, error) {
	t, err := s.st.template(ctx, s.db, in.BookID, in.TemplateID)
	if apperr.Is(err, apperr.NotFound) {
		return Composed{}, errComposeTemplate
	}
	if err != nil {
		return Composed{}, err
	}
	book, err := s.st.mergeBook(ctx, s.db, in.BookID)
	if err != nil {
		return Composed{}, err
	}
	out := Composed{Email: strings.TrimSpace(in.Email)}
	contactID := in.ContactID
	if contactID == nil && out.Email != "" {
		id, found, err := contacts.ByAddress(ctx, s.db, in.BookID, out.Email)
		if err != nil {
			return Composed{}, err
		}
		if found {
			contactID = &id
		}
	}
	v := mailmerge.Values{Fields: map[string]string{"book_name": book.name}, Custom: map[string]string{}}
	if contactID != nil {
		var got uuid.UUID
		v, got, err = s.contactValues(ctx, in.BookID, contactID, book.name)
		if err != nil {
			return Composed{}, err
		}
		if got == uuid.Nil {
			return Composed{}, errComposeContact
		}
		out.ContactID = &got
		if out.Email == "" {
			out.Email = v.Fields["email"]
		}
		out.Name = v.Fields["full_name"]
	}
	if out.Email == "" {
		return Composed{}, apperr.Invalidf("`to.contact_id` names a contact without an email address.")
	}
	if out.ContactID != nil {
		// {{email}} is the address the email goes to.
		v.Fields["email"] = out.Email
	}
	v.Data = mailmerge.Flatten(in.Data)
	if in.Subject != nil {
		t.Subject = *in.Subject
	}
	out.Subject, out.HTML = mailmerge.Compile(t.Subject, t.BodyHTML, book.customKeys).RenderPlain(v)
	return out, nil
}

// SendingMissing names what the book's email settings lack for sending
// anything ("sender_email", "provider"); empty when it can send.
func (s *shared) SendingMissing(ctx context.Context, bookID uuid.UUID) ([]string, error) {
	st, found, err := s.loadSettings(ctx, s.db, bookID)
	if err != nil {
		return nil, err
	}
	var missing []string
	if !found || strings.TrimSpace(st.SenderEmail) == "" {
		missing = append(missing, "sender_email")
	}
	if !found || !st.canSend() {
		missing = append(missing, "provider")
	}
	return missing, nil
}
