package campaigns

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/enum"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
)

// UnsubscribeScope is what a recipient unsubscribes from.
type UnsubscribeScope string

// Unsubscribe scopes.
const (
	ScopeCampaign UnsubscribeScope = "campaign"
	ScopeAll      UnsubscribeScope = "all"
)

// UnsubscribeScopes is every unsubscribe scope.
var UnsubscribeScopes = []UnsubscribeScope{ScopeCampaign, ScopeAll}

// ParseUnsubscribeScope reads an unsubscribe's `scope` ("" is campaign).
func ParseUnsubscribeScope(s string) (UnsubscribeScope, error) {
	if s == "" {
		return ScopeCampaign, nil
	}
	return enum.Parse(UnsubscribeScopes, "`scope`", s)
}

// ErrUnknownToken answers an unsubscribe token that was never issued.
var ErrUnknownToken = apperr.NotFoundf("This unsubscribe link is not valid. Use the link from the most recent email.")

// CampaignRef names a campaign on the unsubscribe page.
type CampaignRef struct {
	ID   uuid.UUID
	Name string
}

// UnsubscribeInfo is what the unsubscribe page shows.
type UnsubscribeInfo struct {
	ContactName       string
	Email             string // masked
	Campaigns         []CampaignRef
	CurrentCampaignID uuid.UUID
	// ConfirmURL is the absolute URL the page's forms post to.
	ConfirmURL string
}

// UnsubscribeResult is what a confirmed unsubscribe did.
type UnsubscribeResult struct {
	Scope        UnsubscribeScope
	CampaignName string
	Message      string
}

// unsubToken is what a token stands for: the completion row of the email
// it was sent in, with that email's contact, book and campaign.
type unsubToken struct {
	ID          uuid.UUID // the completion row
	ContactID   uuid.UUID
	BookID      uuid.UUID
	CampaignID  uuid.UUID
	Email       string
	ContactName string
}

// UnsubscribeInfo looks a token up for the unsubscribe page. It changes
// nothing: mail scanners fetch links before people click them.
func (s *Service) UnsubscribeInfo(ctx context.Context, token string) (UnsubscribeInfo, error) {
	t, err := s.st.unsubToken(ctx, s.db, token)
	if err != nil {
		return UnsubscribeInfo{}, err
	}
	list, err := s.st.activeCampaignsOf(ctx, s.db, t.ContactID, t.BookID)
	if err != nil {
		return UnsubscribeInfo{}, err
	}
	return UnsubscribeInfo{
		ContactName: t.ContactName, Email: MaskEmail(t.Email), Campaigns: list,
		CurrentCampaignID: t.CampaignID, ConfirmURL: s.links.confirmURL(),
	}, nil
}

// UnsubscribeChannel is how an unsubscribe reached the service, as
// webhooks name it (contact.unsubscribed's source).
type UnsubscribeChannel string

const (
	FromPreferencePage UnsubscribeChannel = events.UnsubscribedPreferencePage
	FromOneClick       UnsubscribeChannel = events.UnsubscribedOneClick
)

// Unsubscribe carries out a confirmed unsubscribe. scope campaign removes
// the contact from that campaign of its book; scope all removes it from
// every campaign of the book and suppresses it, so later enrollments skip
// it and no campaign email reaches it again. Repeating it changes nothing
// and answers the same. in says whether it came from the page or as a mail
// client's one-click POST: webhooks hear which (source).
func (s *Service) Unsubscribe(ctx context.Context, token, asked string, campaignID *uuid.UUID, in UnsubscribeChannel) (UnsubscribeResult, error) {
	scope, err := ParseUnsubscribeScope(asked)
	if err != nil {
		return UnsubscribeResult{}, err
	}
	if strings.TrimSpace(token) == "" {
		return UnsubscribeResult{}, apperr.Invalidf("`token` is required: use the link from the email.")
	}
	if scope == ScopeCampaign && campaignID == nil {
		return UnsubscribeResult{}, apperr.Invalidf("`campaign_id` is required when `scope` is campaign.")
	}
	out := UnsubscribeResult{Scope: scope}
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		t, err := s.st.unsubToken(ctx, tx, token)
		if err != nil {
			return err
		}
		now := s.now()
		var changed int64
		if scope == ScopeCampaign {
			// A campaign that is gone (or of another book) holds no
			// participation of this contact: the wish is already true.
			if out.CampaignName, err = s.st.campaignNameInBook(ctx, tx, *campaignID, t.BookID); err != nil {
				return err
			}
			if changed, err = s.st.removeFromCampaigns(ctx, tx, t.ContactID, t.BookID, campaignID, now); err != nil {
				return err
			}
		} else {
			if changed, err = s.st.removeFromCampaigns(ctx, tx, t.ContactID, t.BookID, nil, now); err != nil {
				return err
			}
			addresses, err := s.st.contactAddresses(ctx, tx, t.ContactID)
			if err != nil {
				return err
			}
			res, err := s.suppressor.Suppress(ctx, tx, t.BookID, append(addresses, t.Email),
				suppression.ReasonUnsubscribe, suppression.SourceUnsubscribePage, nil)
			if err != nil {
				return err
			}
			changed += res.Recorded + res.Contacts
		}
		if changed == 0 {
			return nil
		}
		var cid *uuid.UUID
		if scope == ScopeCampaign {
			cid = campaignID
		}
		if err := s.st.recordUnsubscribe(ctx, tx, t, scope, cid, now); err != nil {
			return err
		}
		return s.st.emitUnsubscribed(ctx, tx, t, string(scope), cid, string(in), now)
	})
	if err != nil {
		return UnsubscribeResult{}, err
	}
	if scope == ScopeAll {
		out.Message = "You are unsubscribed from all campaign emails of this sender."
	} else if out.CampaignName != "" {
		out.Message = "You are unsubscribed from the campaign " + out.CampaignName + "."
	} else {
		out.Message = "You are unsubscribed from this campaign."
	}
	return out, nil
}

// MaskEmail hides most of an address's local part: "ann@example.com"
// becomes "a***@example.com". The page may be seen by whoever the email
// was forwarded to.
func MaskEmail(addr string) string {
	local, domain, ok := strings.Cut(addr, "@")
	if !ok || local == "" {
		return ""
	}
	r := []rune(local)
	return string(r[0]) + "***@" + domain
}
