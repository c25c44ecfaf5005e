package forms

import (
	"context"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/delivery"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
)

// CampaignSource is what the person's rights need of the campaigns: the
// contact's campaigns for an export, and the contact of an unsubscribe
// token for the preference page (campaigns.Service).
type CampaignSource interface {
	CampaignsOfContact(ctx context.Context, contactID uuid.UUID) ([]campaigns.ContactCampaign, error)
	TokenContact(ctx context.Context, token string) (contactID, bookID uuid.UUID, err error)
}

// ActivitySource pages a contact's delivery timeline (delivery.Service).
type ActivitySource interface {
	Activity(ctx context.Context, actor *auth.Actor, contactID uuid.UUID, limit, offset int) ([]delivery.Activity, int64, error)
}

// Rights serves a person's rights over their data: the preference page
// (the topics they hear about), the export of everything held about them,
// and erasure.
type Rights struct {
	forms     *Service
	campaigns CampaignSource
	activity  ActivitySource
}

// NewRights wires the rights on the forms service (its store and
// dependencies) and the campaign and delivery readers.
func NewRights(forms *Service, c CampaignSource, a ActivitySource) *Rights {
	return &Rights{forms: forms, campaigns: c, activity: a}
}

// requireAdmin lets a team admin (or owner) act, or an API key of the team
// (on the public API a key acts for its team in these operations).
func requireAdmin(ctx context.Context, actor *auth.Actor, teamID uuid.UUID) error {
	return actor.RequireAdminOrKey(ctx, teamID, contactNotFound)
}

var contactNotFound = apperr.NotFoundf("No contact with this id.")

// Export is everything the service holds about a person.
type Export struct {
	Contact      contacts.Contact            `json:"contact"`
	Consents     []Consent                   `json:"consents"`
	Activity     []delivery.Activity         `json:"activity"`
	Campaigns    []campaigns.ContactCampaign `json:"campaigns"`
	Suppressions []suppression.Suppression   `json:"suppressions"`
}

// exportPage is how many activity items one read of an export takes.
const exportPage = 100

// DataExport gathers everything held about the contact (admin) and
// records contact.data_exported in the audit log.
func (r *Rights) DataExport(ctx context.Context, actor *auth.Actor, contactID uuid.UUID) (Export, error) {
	c, b, err := r.adminContact(ctx, actor, contactID)
	if err != nil {
		return Export{}, err
	}
	out := Export{Contact: c}
	if out.Consents, err = r.forms.st.consents(ctx, r.forms.d.DB, contactID); err != nil {
		return Export{}, err
	}
	out.Activity = []delivery.Activity{}
	for offset := 0; ; offset += exportPage {
		items, total, err := r.activity.Activity(ctx, actor, contactID, exportPage, offset)
		if err != nil {
			return Export{}, err
		}
		out.Activity = append(out.Activity, items...)
		if len(items) < exportPage || int64(offset+len(items)) >= total {
			break
		}
	}
	if out.Campaigns, err = r.campaigns.CampaignsOfContact(ctx, contactID); err != nil {
		return Export{}, err
	}
	addrs, err := r.forms.d.Contacts.Addresses(ctx, r.forms.d.DB, contactID)
	if err != nil {
		return Export{}, err
	}
	if out.Suppressions, err = suppression.OfAddresses(ctx, r.forms.d.DB, b.ID, addrs); err != nil {
		return Export{}, err
	}
	if out.Consents == nil {
		out.Consents = []Consent{}
	}
	if out.Campaigns == nil {
		out.Campaigns = []campaigns.ContactCampaign{}
	}
	if out.Suppressions == nil {
		out.Suppressions = []suppression.Suppression{}
	}
	// Recorded once everything was gathered, just before it leaves: the
	// entry names the contact by id, as for an erasure.
	err = audit.Record(ctx, r.forms.d.DB, audit.Entry{
		TeamID: b.TeamID, Actor: audit.From(actor), Action: "contact.data_exported",
		TargetType: "contact", TargetID: contactID.String(),
		Details: map[string]any{"book_id": b.ID},
	})
	return out, err
}

// Erase deletes the contact with its participations, activity, consents
// and the book's submissions of its addresses, and emits contact.deleted
// (admin). Its suppressions keep only the hash of each address, so the
// addresses stay blocked for sending, enrollment, forms and imports.
func (r *Rights) Erase(ctx context.Context, actor *auth.Actor, contactID uuid.UUID) error {
	_, b, err := r.adminContact(ctx, actor, contactID)
	if err != nil {
		return err
	}
	return postgres.InTx(ctx, r.forms.d.DB, func(tx *postgres.Tx) error {
		addrs, err := r.forms.d.Contacts.Erase(ctx, tx, b.TeamID, b.ID, contactID)
		if err != nil {
			return err
		}
		if err := r.forms.st.forgetAddresses(ctx, tx, b.ID, addrs); err != nil {
			return err
		}
		if _, err = suppression.Forget(ctx, tx, b.ID, addrs); err != nil {
			return err
		}
		// The entry names the contact by id only: what was erased must not
		// live on in the audit log.
		return audit.Record(ctx, tx, audit.Entry{
			TeamID: b.TeamID, Actor: audit.From(actor), Action: "contact.erased",
			TargetType: "contact", TargetID: contactID.String(),
			Details: map[string]any{"book_id": b.ID, "addresses": len(addrs)},
		})
	})
}

// adminContact loads a contact the actor may export or erase.
func (r *Rights) adminContact(ctx context.Context, actor *auth.Actor, contactID uuid.UUID) (contacts.Contact, books.Book, error) {
	c, err := r.forms.d.Contacts.Get(ctx, actor, contactID)
	if err != nil {
		return contacts.Contact{}, books.Book{}, err
	}
	b, err := r.forms.d.Books.Book(ctx, c.BookID)
	if err != nil {
		return contacts.Contact{}, books.Book{}, err
	}
	return c, b, requireAdmin(ctx, actor, b.TeamID)
}

// Topic is a public label as the preference page shows it.
type Topic struct {
	Label   books.Label
	Checked bool // the contact carries it
}

// Topics lists the book's public labels for the contact of an unsubscribe
// token, checked where the contact has them. Unknown token: NOT_FOUND.
func (r *Rights) Topics(ctx context.Context, token string) ([]Topic, error) {
	contactID, bookID, err := r.campaigns.TokenContact(ctx, token)
	if err != nil {
		return nil, err
	}
	public, err := r.forms.d.Books.PublicLabels(ctx, bookID)
	if err != nil || len(public) == 0 {
		return nil, err
	}
	has, err := r.forms.d.Contacts.LabelIDsOf(ctx, contactID)
	if err != nil {
		return nil, err
	}
	out := make([]Topic, len(public))
	for i, l := range public {
		out[i] = Topic{Label: l, Checked: containsID(has, l.ID)}
	}
	return out, nil
}

// SetTopics gives the contact of an unsubscribe token exactly the public
// labels among labelIDs (the full set wanted): public labels are added
// and removed, other labels and ids are left alone. It emits
// contact.updated when something changed. Unknown token: NOT_FOUND.
func (r *Rights) SetTopics(ctx context.Context, token string, labelIDs []string) error {
	contactID, bookID, err := r.campaigns.TokenContact(ctx, token)
	if err != nil {
		return err
	}
	b, err := r.forms.d.Books.Book(ctx, bookID)
	if err != nil {
		return err
	}
	public, err := r.forms.d.Books.PublicLabels(ctx, bookID)
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, len(public))
	for i, l := range public {
		ids[i] = l.ID
	}
	var wanted []uuid.UUID
	for _, raw := range labelIDs {
		if id, err := uuid.Parse(raw); err == nil {
			wanted = append(wanted, id)
		}
	}
	return r.forms.d.Contacts.SetTopics(ctx, b.TeamID, bookID, contactID, ids, wanted)
}
