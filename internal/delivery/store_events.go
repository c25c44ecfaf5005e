package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// eventOfKind is the webhook event type of each kind of applied event
// that webhooks hear of (processed, deferred and dropped only move the
// email's state). blocked is a soft bounce.
var eventOfKind = map[string]string{
	kindDelivered:    events.EmailDelivered,
	kindOpened:       events.EmailOpened,
	kindClicked:      events.EmailClicked,
	kindBounced:      events.EmailBounced,
	kindBlocked:      events.EmailBounced,
	kindComplained:   events.EmailComplained,
	kindUnsubscribed: events.ContactUnsubscribed,
}

// heardTypes are the webhook event types provider feedback may write.
var heardTypes = []string{events.EmailDelivered, events.EmailOpened, events.EmailClicked, events.EmailBounced,
	events.EmailComplained, events.ContactUnsubscribed}

// apply records a batch's events in tx, those of campaign emails
// (applyEvents) and of transactional ones (applyTransactional), and writes
// the webhook events of what it applied: every provider's feedback goes
// through here. The team's subscriptions are asked once for both. It
// returns the ids of the transactional events that named a message.
func (s *Service) apply(ctx context.Context, tx postgres.DB, bookID uuid.UUID, campaign, transactional []event, now time.Time) (applied, []string, error) {
	if len(campaign)+len(transactional) == 0 {
		return applied{}, nil, nil
	}
	team, wanted, err := s.wanted(ctx, tx, bookID)
	if err != nil {
		return applied{}, nil, err
	}
	var res applied
	if len(campaign) > 0 {
		if res, err = s.applyCampaign(ctx, tx, team, bookID, campaign, wanted, now); err != nil {
			return applied{}, nil, err
		}
	}
	named, err := s.applyTransactional(ctx, tx, team, bookID, transactional, wanted, &res, now)
	return res, named, err
}

// applyCampaign records the events of campaign emails (applyEvents) and
// writes the webhook events of what it applied that wanted names.
func (s *Service) applyCampaign(ctx context.Context, tx postgres.DB, team, bookID uuid.UUID, evs []event, wanted map[string]bool, now time.Time) (applied, error) {
	res, err := applyEvents(ctx, tx, bookID, evs, now, len(wanted) > 0)
	if err != nil {
		return applied{}, err
	}
	return res, s.emit(ctx, tx, team, bookID, evs, res.fresh, wanted, now)
}

// wanted returns the book's team and which of heardTypes an active
// webhook of it subscribes to: asked once per batch, in its transaction.
func (s *Service) wanted(ctx context.Context, db postgres.DB, bookID uuid.UUID) (uuid.UUID, map[string]bool, error) {
	if s.outbox == nil {
		return uuid.Nil, nil, nil
	}
	var team uuid.UUID
	err := db.QueryRow(ctx, `SELECT team_id FROM book_teams WHERE book_id = $1`, bookID).Scan(&team)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, nil, nil
	}
	if err != nil {
		return uuid.Nil, nil, err
	}
	wanted, err := s.outbox.WantedOf(ctx, db, team, heardTypes...)
	return team, wanted, err
}

// emit writes the webhook events of a batch's new events (fresh, by
// sg_event_id) that wanted names: each kind once per email, the first the
// service heard of (an open or click already heard of in an earlier batch
// is not sent again; several in one batch give the earliest). Machine
// opens never reach here (classify drops them).
func (s *Service) emit(ctx context.Context, db postgres.DB, teamID, bookID uuid.UUID, batch []event, fresh []string, wanted map[string]bool, now time.Time) error {
	if len(fresh) == 0 || len(wanted) == 0 {
		return nil
	}
	var kinds []string
	for k, typ := range eventOfKind {
		if wanted[typ] {
			kinds = append(kinds, k)
		}
	}
	rows, _ := db.Query(ctx, `
		SELECT DISTINCT ON (e.participant_id, e.step_id, e.kind)
		       e.sg_event_id, e.kind, e.detail, e.occurred_at, e.contact_id, e.campaign_id, e.step_id, e.participant_id,
		       r.email_id, r.variant_id, NULLIF(r.provider_message_id, '')
		FROM delivery_events e
		JOIN campaign_email_recipients r ON r.step_id = e.step_id AND r.participant_id = e.participant_id AND r.book_id = e.book_id
		WHERE e.book_id = $1 AND e.sg_event_id = ANY($2::text[]) AND e.kind = ANY($3::text[])
		  AND NOT EXISTS (
		      SELECT 1 FROM delivery_events o
		      WHERE o.contact_id = e.contact_id AND o.book_id = $1 AND o.participant_id = e.participant_id
		        AND o.step_id = e.step_id AND o.kind = e.kind AND o.sg_event_id <> ALL ($2::text[]))
		ORDER BY e.participant_id, e.step_id, e.kind, e.occurred_at`, bookID, fresh, kinds)
	address := make(map[string]string, len(batch))
	for _, e := range batch {
		address[e.id] = e.email
	}
	book := bookID
	var evs []events.Event
	var (
		id, kind, detail                string
		at                              time.Time
		contact, campaign, step, partic uuid.UUID
		emailID                         uuid.UUID
		variant                         *uuid.UUID
		messageID                       *string
	)
	_, err := pgx.ForEachRow(rows, []any{&id, &kind, &detail, &at, &contact, &campaign, &step, &partic, &emailID, &variant, &messageID}, func() error {
		typ := eventOfKind[kind]
		if typ == events.ContactUnsubscribed {
			cid := contact
			evs = append(evs, events.Event{Type: typ, TeamID: teamID, BookID: &book, Data: events.UnsubscribedData{
				ContactID: cid, Address: address[id], Scope: events.ScopeAll, Source: events.UnsubscribedProvider, OccurredAt: at.UTC(),
			}})
			return nil
		}
		d := events.EmailData{
			EmailID: emailID, ContactID: ptr(contact), Address: address[id], CampaignID: ptr(campaign), StepID: ptr(step),
			ParticipantID: ptr(partic), VariantID: variant, ProviderMessageID: messageID, OccurredAt: at.UTC(),
		}
		evs = append(evs, emailEvent(teamID, bookID, kind, detail, d))
		return nil
	})
	if err != nil {
		return err
	}
	return s.outbox.AppendIn(ctx, db, now, evs...)
}

// emailEvent is the email.* event of an applied event of kind: d with
// what the kind adds (the link clicked, the bounce's type and reason).
func emailEvent(teamID, bookID uuid.UUID, kind, detail string, d events.EmailData) events.Event {
	switch kind {
	case kindClicked:
		d.URL = ptr(detail)
	case kindBounced:
		d.BounceType, d.Reason = ptr(events.BounceHard), ptr(detail)
	case kindBlocked:
		d.BounceType, d.Reason = ptr(events.BounceSoft), ptr(detail)
	case kindComplained:
		if detail == "" {
			detail = "spamreport" // the provider gives no reason but the report
		}
		d.Reason = ptr(detail)
	}
	return events.EmailEvents(teamID, bookID, []events.Email{{Type: eventOfKind[kind], Data: d}})[0]
}

// applyTransactional applies the events of transactional emails (package
// transactional owns the messages) and adds to res the suppressions and
// campaign removals they ask for; it writes the webhook events of each
// message's first event of a kind that an active webhook wants, in tx.
// It returns the ids of the events that named a message.
func (s *Service) applyTransactional(ctx context.Context, tx postgres.DB, team, bookID uuid.UUID, evs []event, wanted map[string]bool, res *applied, now time.Time) ([]string, error) {
	if len(evs) == 0 || s.transactional == nil {
		return nil, nil
	}
	var kinds []string
	for k, typ := range eventOfKind {
		if wanted[typ] {
			kinds = append(kinds, k)
		}
	}
	in := make([]TransactionalEvent, len(evs))
	byID := make(map[string]*event, len(evs))
	for i := range evs {
		e := &evs[i]
		byID[e.id] = e
		in[i] = TransactionalEvent{ID: e.id, Kind: e.kind, MessageID: e.transactionalID, ProviderMessageID: e.messageID, Detail: e.detail, At: e.at}
	}
	ta, err := s.transactional.ApplyFeedback(ctx, tx, bookID, in, kinds, now)
	if err != nil {
		return nil, err
	}
	res.matched += len(ta.Named)
	res.applied += len(ta.New)
	seen := map[uuid.UUID]bool{}
	for _, c := range res.contactIDs {
		seen[c] = true
	}
	for i, id := range ta.New {
		e := byID[id]
		if e == nil || e.suppress == "" {
			continue
		}
		res.suppress = append(res.suppress, suppressWish{email: e.email, reason: string(e.suppress)})
		if c := ta.Contacts[i]; c != uuid.Nil && !seen[c] {
			seen[c] = true
			res.contactIDs = append(res.contactIDs, c)
		}
	}
	var out []events.Event
	for _, f := range ta.Firsts {
		if eventOfKind[f.Kind] == events.ContactUnsubscribed {
			if f.ContactID != nil {
				book := bookID
				out = append(out, events.Event{Type: events.ContactUnsubscribed, TeamID: team, BookID: &book, Data: events.UnsubscribedData{
					ContactID: *f.ContactID, Address: f.Address, Scope: events.ScopeAll, Source: events.UnsubscribedProvider, OccurredAt: f.At.UTC(),
				}})
			}
			continue
		}
		msg := f.MessageID
		out = append(out, emailEvent(team, bookID, f.Kind, f.Detail, events.EmailData{
			EmailID: f.MessageID, ContactID: f.ContactID, Address: f.Address, TransactionalID: &msg,
			ProviderMessageID: f.ProviderMessageID, OccurredAt: f.At.UTC(),
		}))
	}
	return ta.Named, s.outbox.AppendIn(ctx, tx, now, out...)
}

func ptr[T any](v T) *T { return &v }
