package campaigns

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/robfig/cron/v3"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
)

// Run starts processing an active campaign in the background (member,
// paid add-on). The pass runs with the service's background context, not
// the request's, and Shutdown waits for it. A campaign already being
// processed by this process is not started twice.
func (s *Service) Run(ctx context.Context, actor *auth.Actor, campaignID uuid.UUID, bookHint *uuid.UUID) (started bool, err error) {
	sc, err := s.campaignFor(ctx, actor, campaignID, bookHint, auth.RoleMember)
	if err != nil {
		return false, err
	}
	addon, err := s.accounts.Addon(ctx, sc.teamID)
	if err != nil {
		return false, err
	}
	if !addon.Paid() {
		return false, errPaidRequired
	}
	if sc.campaign.Status != StatusActive {
		return false, apperr.New(apperr.InvalidStatus, "Only active campaigns can run; this one is %s. Set its status to active first.", sc.campaign.Status)
	}
	return s.startBackground(campaignID), nil
}

// startBackground processes the campaign in a goroutine unless this
// process is already processing it.
func (s *Service) startBackground(campaignID uuid.UUID) bool {
	s.mu.Lock()
	if s.running[campaignID] || s.bgCtx.Err() != nil {
		s.mu.Unlock()
		return false
	}
	s.running[campaignID] = true
	s.bgWG.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.bgWG.Done()
		defer func() {
			s.mu.Lock()
			delete(s.running, campaignID)
			s.mu.Unlock()
		}()
		s.processLogged(s.bgCtx, campaignID, "manual", nil)
	}()
	return true
}

func (s *Service) processLogged(ctx context.Context, campaignID uuid.UUID, trigger string, t *turn) (unfinished bool) {
	res, err := s.processCampaign(ctx, campaignID, t)
	s.observer.CampaignRun(trigger, err)
	for outcome, n := range map[string]int{"sent": res.Sent, "failed": res.Failed, "retry": res.Retrying, "triggered": res.Triggered} {
		if n > 0 {
			s.observer.CampaignEmails(outcome, n)
		}
	}
	switch {
	case apperr.Is(err, apperr.InvalidStatus) || apperr.Is(err, apperr.AddonRequired) || apperr.Is(err, apperr.NotFound):
		s.log.Info("campaign not processed", "campaign_id", campaignID, "reason", apperr.MessageOf(err))
	case err != nil:
		s.log.Error("campaign processing failed", "campaign_id", campaignID, "err", err)
	default:
		s.log.Info("campaign processed", "campaign_id", campaignID, "sent", res.Sent, "failed", res.Failed,
			"retrying", res.Retrying, "triggered", res.Triggered, "completed", res.Completed, "reaped", res.Reaped,
			"turn_over", t.unfinished())
	}
	return err == nil && t.unfinished()
}

// ProcessDue processes every active campaign of every team with the paid
// add-on until none has due work left (or ctx ends), in bounded turns
// that go round the teams. Each round gives every team one turn: the
// team's campaign served longest ago makes one pass that claims at most
// TurnParticipants participants and stops claiming after TurnTime; a
// campaign the turn cut short comes back in the next round, after every
// other team's turn. So a team's large or slow campaign delays another
// team's campaigns by one turn per round, not by its whole size, and a
// team with many campaigns gets no more turns than a team with one. Each
// round reads the list of campaigns again, so a campaign activated while
// another team's long one runs gets its turn in the next round.
// Campaigns this process is already running are skipped.
func (s *Service) ProcessDue(ctx context.Context) error {
	done := map[uuid.UUID]bool{} // finished in this call, or not to be retried in it
	for {
		all, err := s.st.runnableCampaigns(ctx, s.db)
		if err != nil {
			return err
		}
		round := s.round(all, done)
		if len(round) == 0 {
			return nil
		}
		for _, c := range round {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.mu.Lock()
			busy := s.running[c.id]
			if !busy {
				s.running[c.id] = true
			}
			s.mu.Unlock()
			if busy {
				done[c.id] = true // its own run takes it to the end
				continue
			}
			t := newTurn(s.opts.TurnParticipants, s.opts.TurnTime)
			if !s.processLogged(ctx, c.id, "schedule", t) {
				done[c.id] = true
			}
			s.mu.Lock()
			delete(s.running, c.id)
			s.served.seq++
			s.served.at[c.id], s.served.at[c.teamID] = s.served.seq, s.served.seq
			s.mu.Unlock()
		}
	}
}

// round picks one campaign per team among those not done: the team's
// campaign served longest ago (oldest first among the never served), the
// teams in the same order by when they were last served.
func (s *Service) round(all []runnable, done map[uuid.UUID]bool) []runnable {
	s.mu.Lock()
	defer s.mu.Unlock()
	pick := map[uuid.UUID]int{} // team -> index in round
	var round []runnable
	for _, c := range all { // oldest campaign first: stable among equals
		if done[c.id] {
			continue
		}
		i, ok := pick[c.teamID]
		switch {
		case !ok:
			pick[c.teamID] = len(round)
			round = append(round, c)
		case s.served.at[c.id] < s.served.at[round[i].id]:
			round[i] = c
		}
	}
	slices.SortStableFunc(round, func(a, b runnable) int {
		return cmp.Compare(s.served.at[a.teamID], s.served.at[b.teamID])
	})
	// Forget campaigns and teams that left the list.
	live := make(map[uuid.UUID]bool, 2*len(all))
	for _, c := range all {
		live[c.id], live[c.teamID] = true, true
	}
	for id := range s.served.at {
		if !live[id] {
			delete(s.served.at, id)
		}
	}
	return round
}

// Wait blocks until every background run started so far has finished.
func (s *Service) Wait() { s.bgWG.Wait() }

// Shutdown stops background runs (no new chunks are claimed; chunks in
// flight are sent and recorded) and waits for them until ctx ends.
func (s *Service) Shutdown(ctx context.Context) error {
	s.bgCancel()
	done := make(chan struct{})
	go func() { s.bgWG.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Scheduler is the background worker that processes every runnable
// campaign on a cron schedule (CAMPAIGN_SCHEDULE, UTC). A tick that is
// still running when the next one is due makes the next one skip; other
// instances of the binary are kept apart by the database claims.
type Scheduler struct {
	svc  *Service
	spec string
	log  *slog.Logger
}

// NewScheduler returns the worker for spec, a standard cron expression or
// a descriptor such as "@every 1m".
func NewScheduler(svc *Service, spec string, log *slog.Logger) *Scheduler {
	return &Scheduler{svc: svc, spec: spec, log: log}
}

// Run ticks until ctx ends, then lets the running tick and the background
// runs finish their chunks in flight.
func (sc *Scheduler) Run(ctx context.Context) error {
	c := cron.New(
		cron.WithParser(cron.NewParser(cron.Minute|cron.Hour|cron.Dom|cron.Month|cron.Dow|cron.Descriptor)),
		cron.WithChain(cron.SkipIfStillRunning(cron.DiscardLogger)),
		cron.WithLocation(time.UTC),
	)
	if _, err := c.AddFunc(sc.spec, func() {
		if err := sc.svc.ProcessDue(ctx); err != nil && ctx.Err() == nil {
			sc.log.Error("campaign scheduler tick failed", "err", err)
		}
	}); err != nil {
		return fmt.Errorf("campaign schedule %q: %w", sc.spec, err)
	}
	c.Start()
	sc.log.Info("campaign scheduler started", "schedule", sc.spec)
	<-ctx.Done()
	<-c.Stop().Done()
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	return sc.svc.Shutdown(stopCtx)
}
