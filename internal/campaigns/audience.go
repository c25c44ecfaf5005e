package campaigns

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/segments"
)

// A campaign's audience is a segment: every pass (scheduled or run)
// first enrolls the segment's members who were never participants, and,
// with ExitOnSegmentLeave, removes a participant who no longer matches
// when a step falls due. Enrollment is at most once per contact and
// campaign however many instances pass at once: the participants' unique
// key (campaign, contact) takes one row per contact, and a participant
// who completed or was removed keeps its row, so it is never enrolled
// again.

// Catalog answers the questions segments ask of the campaigns of a book;
// it needs nothing but the database it is given.
type Catalog struct{ st store }

// InBook returns which of ids are campaigns of the book.
func (c Catalog) InBook(ctx context.Context, db postgres.DB, bookID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	return c.st.campaignsInBook(ctx, db, bookID, ids)
}

// AudienceOf names a campaign whose audience is the segment ("" when
// none is).
func (c Catalog) AudienceOf(ctx context.Context, db postgres.DB, segmentID uuid.UUID) (string, error) {
	return c.st.audienceUser(ctx, db, segmentID)
}

// checkAudience checks that a campaign's audience is a segment of its
// book.
func (s *Service) checkAudience(ctx context.Context, c Campaign) error {
	if c.AudienceSegmentID == nil {
		return nil
	}
	ok, err := s.segments.InBook(ctx, s.db, c.BookID, *c.AudienceSegmentID)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.Invalidf("`audience_segment_id` must name a segment of the campaign's book.")
	}
	return nil
}

// enrollSegment enrolls the current members of a segment of the
// campaign's book, once (a one-off enrollment, not an audience).
func (s *Service) enrollSegment(ctx context.Context, sc scoped, segmentID uuid.UUID, by *uuid.UUID) (int64, error) {
	aud, err := s.segments.AudienceOf(ctx, s.db, sc.campaign.BookID, segmentID)
	if err != nil {
		return 0, err
	}
	var n int64
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.lockEnrollable(ctx, tx, sc.campaign.ID); err != nil {
			return err
		}
		n, err = enrollNewcomers(ctx, s.st, tx, sc.campaign, aud.Predicate, s.now(), by)
		return err
	})
	return n, err
}

// enrollNewcomers enrolls the members of the predicate who were never
// participants of the campaign (suppressed contacts are skipped as in
// every enrollment). The members are read under the bound of rule
// evaluation; the insert is the enrollment every other path uses.
func enrollNewcomers(ctx context.Context, st store, tx *postgres.Tx, c Campaign, p *segments.Predicate, now time.Time, by *uuid.UUID) (int64, error) {
	var ids []uuid.UUID
	err := p.Within(ctx, tx, func() (err error) {
		ids, err = st.newcomers(ctx, tx, c.ID, c.BookID, p)
		return err
	})
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	return st.enrollContacts(ctx, tx, c.ID, c.BookID, ids, now, by)
}

// audienceOf compiles a campaign's audience for a pass (nil when the
// campaign has none).
func (rn *Runner) audienceOf(ctx context.Context, c Campaign) (*segments.Audience, error) {
	if c.AudienceSegmentID == nil {
		return nil, nil
	}
	aud, err := rn.segments.AudienceOf(ctx, rn.db, c.BookID, *c.AudienceSegmentID)
	if err != nil {
		return nil, fmt.Errorf("campaign %s audience: %w", c.ID, err)
	}
	return &aud, nil
}

// enrollAudience is the start of a pass over a campaign with an
// audience: its newcomers are enrolled in one transaction. A failure is
// logged and the pass goes on: the participants already enrolled still
// get their steps, and the next pass enrolls the newcomers.
func (rn *Runner) enrollAudience(ctx context.Context, p *pass) {
	aud, err := rn.audienceOf(ctx, p.campaign)
	if err == nil && aud != nil {
		p.audience = aud
		var n int64
		err = postgres.InTx(ctx, rn.db, func(tx *postgres.Tx) error {
			n, err = enrollNewcomers(ctx, rn.st, tx, p.campaign, aud.Predicate, rn.now(), nil)
			return err
		})
		if err == nil && n > 0 {
			rn.log.Info("enrolled the audience's newcomers", "campaign_id", p.campaign.ID, "segment", aud.Name, "enrolled", n)
		}
	}
	if err != nil {
		rn.log.Warn("audience not enrolled", "campaign_id", p.campaign.ID, "err", err)
	}
}

// exitLeavers removes, before a due step is claimed, the participants it
// is due for who no longer match the audience (ExitOnSegmentLeave): each
// gets a failed completion of the step with the detail "left segment
// <name>" and status removed, so nothing more is sent to it. Participants
// another pass holds are skipped; that pass checks them itself. When the
// audience cannot be evaluated the step is not processed: nobody may get
// an email the rule would have stopped.
func (rn *Runner) exitLeavers(ctx context.Context, p *pass, st Step, base claimParams) error {
	if !p.campaign.ExitOnSegmentLeave || p.campaign.AudienceSegmentID == nil {
		return nil
	}
	if p.audience == nil {
		return fmt.Errorf("campaign %s: its audience could not be evaluated, so its participants' membership is unknown", p.campaign.ID)
	}
	aud := p.audience
	return postgres.InTx(ctx, rn.db, func(tx *postgres.Tx) error {
		return aud.Predicate.Within(ctx, tx, func() error {
			n, err := rn.st.removeLeavers(ctx, tx, base, rn.now(), "left segment "+aud.Name, aud.Predicate)
			if n > 0 {
				rn.log.Info("removed participants who left the audience", "campaign_id", p.campaign.ID, "step_id", st.ID, "removed", n)
			}
			return err
		})
	})
}
