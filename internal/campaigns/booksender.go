package campaigns

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/delivery"
	"github.com/contactbook/contactbook/internal/mailer"
)

// BookSender is what an email sent on a book's behalf outside a campaign
// (a sign-up confirmation) takes from the book's email settings: the
// provider key, the sender, and the company name and postal address that
// every email of the book carries.
type BookSender struct {
	APIKey, FromEmail, FromName, ReplyTo string
	// Account is the book's provider; a batch that carries it goes out
	// through it (mailer.Dispatcher).
	Account     *mailer.Account
	CompanyName string
	// PostalAddress is the address on one line, its parts joined by commas.
	PostalAddress string
	// TrackOpens and TrackClicks are the book's tracking choices.
	TrackOpens, TrackClicks bool
}

// BookSender returns the book's sending settings; ok is false when the
// book cannot send (no settings, no provider key or no sender address).
func (s *shared) BookSender(ctx context.Context, bookID uuid.UUID) (BookSender, bool, error) {
	st, found, err := s.loadSettings(ctx, s.db, bookID)
	if err != nil || !found || !st.canSend() || st.SenderEmail == "" {
		return BookSender{}, false, err
	}
	var parts []string
	for _, p := range []string{st.AddressLine1, st.AddressLine2, st.City, st.State, st.PostalCode, st.Country} {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	return BookSender{
		APIKey: st.apiKey, Account: st.account(bookID), FromEmail: st.SenderEmail, FromName: st.SenderName, ReplyTo: st.ReplyToEmail,
		CompanyName: st.CompanyName, PostalAddress: strings.Join(parts, ", "),
		TrackOpens: st.TrackOpens, TrackClicks: st.TrackClicks,
	}, true, nil
}

// TokenContact returns the contact and book an unsubscribe token stands
// for (the preference page's authority). Unknown token: NOT_FOUND.
func (s *Service) TokenContact(ctx context.Context, token string) (contactID, bookID uuid.UUID, err error) {
	t, err := s.st.unsubToken(ctx, s.db, token)
	if err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	return t.ContactID, t.BookID, nil
}

// CampaignsOfContact lists every campaign the contact is or was enrolled
// in, whatever the state of the team's add-on: a person's data export
// (whose caller checked the actor) lists what is held, even when the team
// no longer pays for campaigns.
func (s *Service) CampaignsOfContact(ctx context.Context, contactID uuid.UUID) ([]ContactCampaign, error) {
	return s.st.contactCampaigns(ctx, s.db, contactID)
}

// BounceMailboxes lists the bounce mailboxes of the books that send
// through SMTP, passwords decrypted, for the bounce reader.
func (s *shared) BounceMailboxes(ctx context.Context) ([]delivery.Mailbox, error) {
	ids, err := s.st.bounceMailboxBooks(ctx, s.db)
	if err != nil {
		return nil, err
	}
	out := make([]delivery.Mailbox, 0, len(ids))
	for _, id := range ids {
		st, ok, err := s.loadSettings(ctx, s.db, id)
		if err != nil {
			return nil, err
		}
		bm := st.prov.BounceMailbox
		if !ok || st.prov.Provider != ProviderSMTP || bm == nil || st.prov.imapPassword == "" {
			continue
		}
		out = append(out, delivery.Mailbox{BookID: id, Host: bm.IMAPHost, Port: bm.IMAPPort,
			Username: bm.IMAPUsername, Password: st.prov.imapPassword, Folder: bm.IMAPFolder})
	}
	return out, nil
}
