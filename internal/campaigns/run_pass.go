package campaigns

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/segments"
)

// ProcessingOptions tune the processor; zero values take the defaults.
type ProcessingOptions struct {
	// ChunkSize is how many participants one claim takes and one provider
	// request carries (at most mailer.MaxBatch). Default mailer.MaxBatch.
	ChunkSize int
	// Senders is how many chunks are sent and recorded at once. Default 3.
	Senders int
	// Claimers is how many claim statements run at once, each over its own
	// range of contacts. Default 2.
	Claimers int
	// Lease is how long a claim may stay unanswered before the next pass
	// records it as "delivery outcome unknown". It must exceed SendTimeout
	// plus the time a claimed chunk waits for a sender. Default 10 minutes.
	Lease time.Duration
	// SendTimeout bounds one provider request. Default 60 seconds.
	SendTimeout time.Duration
	// MaxTries is how many provider attempts a transient error (5xx,
	// network) gets before it is recorded as failed. Default 3.
	MaxTries int
	// RetryAfter is the earliest a transient error is retried (on a later
	// pass). Default 1 minute.
	RetryAfter time.Duration
	// TurnParticipants is how many participants one campaign may claim in
	// one turn of the scheduler before the other campaigns get theirs.
	// Default 10,000.
	TurnParticipants int
	// TurnTime is how long one turn of the scheduler goes on claiming new
	// chunks of a campaign; chunks claimed by then are still sent. Default
	// 10 seconds.
	TurnTime time.Duration
}

func (o ProcessingOptions) withDefaults() ProcessingOptions {
	if o.ChunkSize <= 0 || o.ChunkSize > mailer.MaxBatch {
		o.ChunkSize = mailer.MaxBatch
	}
	if o.Senders <= 0 {
		o.Senders = 3
	}
	if o.Claimers <= 0 || o.Claimers > 16 {
		o.Claimers = 2
	}
	if o.Lease <= 0 {
		o.Lease = 10 * time.Minute
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = time.Minute
	}
	if o.MaxTries <= 0 {
		o.MaxTries = 3
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = time.Minute
	}
	if o.TurnParticipants <= 0 {
		o.TurnParticipants = 10_000
	}
	if o.TurnTime <= 0 {
		o.TurnTime = 10 * time.Second
	}
	return o
}

// RunResult counts what one pass over a campaign did.
type RunResult struct {
	Sent      int // emails the provider accepted
	Failed    int // completion records written as failed
	Retrying  int // transient provider errors left for a later pass
	Triggered int // trigger steps recorded as success
	Completed int // participants that became completed
	Reaped    int // interrupted claims recorded as "delivery outcome unknown"
	Skipped   int // steps whose condition did not hold
	Held      int // participants newly held by a send window or an A/B test
}

type counters struct {
	sent, failed, retrying, triggered, completed, reaped, skipped, held atomic.Int64
}

func (c *counters) result() RunResult {
	return RunResult{
		Sent: int(c.sent.Load()), Failed: int(c.failed.Load()), Retrying: int(c.retrying.Load()),
		Triggered: int(c.triggered.Load()), Completed: int(c.completed.Load()), Reaped: int(c.reaped.Load()),
		Skipped: int(c.skipped.Load()), Held: int(c.held.Load()),
	}
}

// pass is one pass over one campaign.
type pass struct {
	campaign    Campaign
	teamID      uuid.UUID // the campaign's team, whose webhooks hear of it
	book        mergeBook
	settings    storedSettings
	configured  bool
	activeSteps []uuid.UUID
	stepNames   map[uuid.UUID]string // every step, for the skipped detail
	turn        *turn                // nil: no bound
	started     time.Time            // when the pass began (the injected clock)
	n           counters
	audience    *segments.Audience // the campaign's audience, when it has one
}

// turn bounds what one pass may claim, so that the scheduler can give
// every campaign its turn: at most a number of participants, and no new
// claim once its time is up. It runs on the wall clock: it shares out
// the processor's time, it is no rule of the campaign. A nil *turn
// bounds nothing.
type turn struct {
	left  atomic.Int64
	until time.Time
	cut   atomic.Bool // it stopped a claim: work may be left
}

func newTurn(participants int, d time.Duration) *turn {
	// Wall time, not the injected clock: a turn bounds how long this
	// worker holds the job, which no rule of the campaign depends on.
	t := &turn{until: time.Now().Add(d)}
	t.left.Store(int64(participants))
	return t
}

// take reserves up to n participants for one claim; 0 when the turn is
// over.
func (t *turn) take(n int) int {
	if t == nil {
		return n
	}
	if time.Now().After(t.until) {
		t.cut.Store(true)
		return 0
	}
	for {
		left := t.left.Load()
		if left <= 0 {
			t.cut.Store(true)
			return 0
		}
		k := min(int64(n), left)
		if t.left.CompareAndSwap(left, left-k) {
			return int(k)
		}
	}
}

// giveBack returns the part of a reservation a claim did not use.
func (t *turn) giveBack(n int) {
	if t != nil && n > 0 {
		t.left.Add(int64(n))
	}
}

// unfinished reports whether the turn stopped a claim, so the campaign
// may have due participants left.
func (t *turn) unfinished() bool { return t != nil && t.cut.Load() }

// ProcessCampaign makes one pass over an active campaign of a team with
// the paid add-on: interrupted claims are settled, then each active step
// in order sends to (or triggers for) every participant it is due for,
// then participants whose active steps are all done become completed.
// Safe to run concurrently with itself, in this process or another.
func (rn *Runner) ProcessCampaign(ctx context.Context, campaignID uuid.UUID) (RunResult, error) {
	return rn.processCampaign(ctx, campaignID, nil)
}

// processCampaign is ProcessCampaign bounded by t (nil: no bound). A pass
// cut short by its turn leaves the final completion sweep to the pass that
// finishes; the participants it sent to are completed as they are
// recorded.
func (rn *Runner) processCampaign(ctx context.Context, campaignID uuid.UUID, t *turn) (RunResult, error) {
	c, teamID, err := rn.st.campaignRef(ctx, rn.db, campaignID)
	if err != nil {
		return RunResult{}, err
	}
	if c.Status != StatusActive {
		return RunResult{}, apperr.New(apperr.InvalidStatus, "Only active campaigns run; this one is %s.", c.Status)
	}
	addon, err := rn.accounts.Addon(ctx, teamID)
	if err != nil {
		return RunResult{}, err
	}
	if !addon.Paid() {
		return RunResult{}, errPaidRequired
	}
	steps, err := rn.st.steps(ctx, rn.db, campaignID)
	if err != nil {
		return RunResult{}, err
	}
	p := &pass{campaign: c, teamID: teamID, turn: t, started: rn.now()}
	rn.enrollAudience(ctx, p)
	if p.book, err = rn.st.mergeBook(ctx, rn.db, c.BookID); err != nil {
		return RunResult{}, err
	}
	if p.settings, p.configured, err = rn.loadSettings(ctx, rn.db, c.BookID); err != nil {
		return RunResult{}, err
	}
	reaped, released, err := rn.st.reapExpired(ctx, rn.db, campaignID, rn.now())
	if err != nil {
		return RunResult{}, err
	}
	if reaped+released > 0 {
		rn.log.Warn("settled the claims of an interrupted pass", "campaign_id", campaignID,
			"outcome_unknown", reaped, "given_back", released)
	}
	p.n.reaped.Add(reaped)
	p.n.failed.Add(reaped)
	if err := rn.st.wakeHeld(ctx, rn.db, campaignID, rn.now()); err != nil {
		return RunResult{}, err
	}
	p.stepNames = make(map[uuid.UUID]string, len(steps))
	for _, st := range steps {
		p.stepNames[st.ID] = st.Name
		if st.Active {
			p.activeSteps = append(p.activeSteps, st.ID)
		}
	}
	var earlier []uuid.UUID
	for _, st := range steps {
		if !st.Active {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		if err := rn.processStep(ctx, p, st, earlier); err != nil {
			return p.n.result(), fmt.Errorf("campaign %s step %s: %w", c.ID, st.ID, err)
		}
		earlier = append(earlier, st.ID)
	}
	if t.unfinished() {
		return p.n.result(), nil
	}
	done, err := rn.st.completeParticipants(ctx, rn.db, campaignID, p.activeSteps, rn.now())
	if err != nil {
		return p.n.result(), err
	}
	p.n.completed.Add(done)
	return p.n.result(), nil
}

// cutoff is the latest enrollment time for which st is due now; due is
// false when the step is not due for anyone yet (a future fixed date).
func (rn *Runner) cutoff(st Step) (cut *time.Time, due bool) {
	now := rn.now()
	switch st.ScheduleType {
	case ScheduleDelay:
		t := now.AddDate(0, 0, -st.DelayDays).Add(-time.Duration(st.DelayHours) * time.Hour)
		return &t, true
	case ScheduleFixedDate:
		if st.FixedDate == nil {
			return nil, false
		}
		start, ok := fixedDateStart(*st.FixedDate)
		return nil, ok && !now.Before(start)
	}
	return nil, true
}

func (rn *Runner) processStep(ctx context.Context, p *pass, st Step, earlier []uuid.UUID) error {
	cut, due := rn.cutoff(st)
	if !due {
		return nil
	}
	base := claimParams{
		CampaignID: p.campaign.ID, StepID: st.ID, Cutoff: cut,
		Earlier: earlier, Limit: rn.opts.ChunkSize, MaxTries: rn.opts.MaxTries,
		Condition: st.Condition, Window: p.window(st),
	}
	if err := rn.exitLeavers(ctx, p, st, base); err != nil {
		return err
	}
	if st.StepType == StepTrigger {
		return rn.processTrigger(ctx, p, st, base)
	}
	plan, err := rn.planEmail(ctx, p, st)
	if err != nil {
		return err
	}
	base.CustomKeys = plan.customKeys
	if plan.claimSize > 0 {
		base.Limit = plan.claimSize
	}
	if len(st.Variants) == 0 {
		return rn.processEmail(ctx, p, st, plan, base)
	}
	base.Now = rn.now()
	test, ok, err := rn.prepareTest(ctx, p, st, base)
	if err != nil || !ok {
		return err
	}
	base.Test = test
	if err := rn.processEmail(ctx, p, st, plan, base); err != nil {
		return err
	}
	if test.winner == nil && !p.turn.unfinished() && ctx.Err() == nil {
		return rn.st.closeTestSlice(ctx, rn.db, st.ID)
	}
	return nil
}
