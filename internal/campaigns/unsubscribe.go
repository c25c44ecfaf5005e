package campaigns

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Unsubscribe scopes.
const (
	ScopeCampaign = "campaign"
	ScopeAll      = "all"
)

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
	Scope        string
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

func (s *Service) token(ctx context.Context, db postgres.DB, token string) (unsubToken, error) {
	stepID, participantID, secretHash, ok := parseToken(token)
	if !ok {
		return unsubToken{}, ErrUnknownToken
	}
	var t unsubToken
	err := db.QueryRow(ctx, `
		SELECT c.id, p.contact_id, cp.book_id, p.campaign_id, `+contactEmailSQL+`, `+contactNameSQL+`
		FROM campaign_step_completions c
		JOIN campaign_participants p ON p.id = c.participant_id
		JOIN campaigns cp ON cp.id = p.campaign_id
		JOIN contacts ct ON ct.id = p.contact_id
		WHERE c.step_id = $1 AND c.participant_id = $2 AND c.token_hash = $3`, stepID, participantID, secretHash).
		Scan(&t.ID, &t.ContactID, &t.BookID, &t.CampaignID, &t.Email, &t.ContactName)
	if errors.Is(err, pgx.ErrNoRows) {
		return unsubToken{}, ErrUnknownToken
	}
	return t, postgres.Translate(err)
}

// UnsubscribeInfo looks a token up for the unsubscribe page. It changes
// nothing: mail scanners fetch links before people click them.
func (s *Service) UnsubscribeInfo(ctx context.Context, token string) (UnsubscribeInfo, error) {
	t, err := s.token(ctx, s.db, token)
	if err != nil {
		return UnsubscribeInfo{}, err
	}
	rows, err := s.db.Query(ctx, `
		SELECT c.id, c.name FROM campaign_participants p JOIN campaigns c ON c.id = p.campaign_id
		WHERE p.contact_id = $1 AND p.status = 'active' AND c.book_id = $2
		ORDER BY lower(c.name), c.id`, t.ContactID, t.BookID)
	list, err := collect(rows, err, func(r pgx.Row) (CampaignRef, error) {
		var c CampaignRef
		return c, r.Scan(&c.ID, &c.Name)
	})
	if err != nil {
		return UnsubscribeInfo{}, err
	}
	return UnsubscribeInfo{
		ContactName: t.ContactName, Email: MaskEmail(t.Email), Campaigns: list,
		CurrentCampaignID: t.CampaignID, ConfirmURL: s.baseURL + "/api/unsubscribe/confirm",
	}, nil
}

// Unsubscribe carries out a confirmed unsubscribe. scope campaign removes
// the contact from that campaign of its book; scope all removes it from
// every campaign of the book and suppresses it, so later enrollments skip
// it and no campaign email reaches it again. Repeating it changes nothing
// and answers the same.
func (s *Service) Unsubscribe(ctx context.Context, token, scope string, campaignID *uuid.UUID) (UnsubscribeResult, error) {
	switch scope {
	case "":
		scope = ScopeCampaign
	case ScopeCampaign, ScopeAll:
	default:
		return UnsubscribeResult{}, apperr.Invalidf("`scope` must be campaign or all.")
	}
	if strings.TrimSpace(token) == "" {
		return UnsubscribeResult{}, apperr.Invalidf("`token` is required: use the link from the email.")
	}
	if scope == ScopeCampaign && campaignID == nil {
		return UnsubscribeResult{}, apperr.Invalidf("`campaign_id` is required when `scope` is campaign.")
	}
	out := UnsubscribeResult{Scope: scope}
	err := postgres.InTx(ctx, s.db, func(tx pgx.Tx) error {
		t, err := s.token(ctx, tx, token)
		if err != nil {
			return err
		}
		now := s.now()
		var changed int64
		if scope == ScopeCampaign {
			err := tx.QueryRow(ctx, `SELECT name FROM campaigns WHERE id = $1 AND book_id = $2`, *campaignID, t.BookID).Scan(&out.CampaignName)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return postgres.Translate(err)
			}
			// A campaign that is gone (or of another book) holds no
			// participation of this contact: the wish is already true.
			tag, err := tx.Exec(ctx, `
				UPDATE campaign_participants p SET status = 'removed', removed_at = $3
				FROM campaigns c
				WHERE c.id = p.campaign_id AND c.book_id = $4
				  AND p.campaign_id = $1 AND p.contact_id = $2 AND p.status = 'active'`,
				*campaignID, t.ContactID, now, t.BookID)
			if err != nil {
				return postgres.Translate(err)
			}
			changed = tag.RowsAffected()
		} else {
			tag, err := tx.Exec(ctx, `
				UPDATE campaign_participants p SET status = 'removed', removed_at = $2
				FROM campaigns c
				WHERE c.id = p.campaign_id AND c.book_id = $3 AND p.contact_id = $1 AND p.status = 'active'`,
				t.ContactID, now, t.BookID)
			if err != nil {
				return postgres.Translate(err)
			}
			changed = tag.RowsAffected()
			tag, err = tx.Exec(ctx, `UPDATE contacts SET suppressed_at = $2 WHERE id = $1 AND suppressed_at IS NULL`, t.ContactID, now)
			if err != nil {
				return postgres.Translate(err)
			}
			changed += tag.RowsAffected()
		}
		if changed == 0 {
			return nil
		}
		var cid *uuid.UUID
		if scope == ScopeCampaign {
			cid = campaignID
		}
		_, err = tx.Exec(ctx, `
			INSERT INTO interactions (contact_id, kind, detail, occurred_at)
			SELECT id, 'campaign_unsubscribe', jsonb_build_object('scope', $2::text, 'campaign_id', $3::uuid, 'completion_id', $4::uuid), $5
			FROM contacts WHERE id = $1 FOR KEY SHARE`,
			t.ContactID, scope, cid, t.ID, now)
		return postgres.Translate(err)
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
