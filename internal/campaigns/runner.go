package campaigns

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
)

// Runner owns background processing: the runs that requests ask for and
// the scheduler's passes over every runnable campaign, both worked as
// jobs (run_jobs.go). It keeps no context of its own: a pass lives as
// long as the ctx it is given.
type Runner struct {
	shared
	opts     ProcessingOptions
	observer Observer
	schedule string // cron spec of the scheduler's ticks

	mu sync.Mutex
	// running holds the campaigns this runner is processing; each channel
	// is closed when that pass ends.
	running map[uuid.UUID]chan struct{}
	// served orders the scheduler's turns: at[id] is the sequence number
	// of the last turn a campaign or a team got (0: none yet).
	served struct {
		seq uint64
		at  map[uuid.UUID]uint64
	}
}

// Observer hears about processing: each pass by trigger ("schedule" or
// "manual") and its result, and step executions by outcome.
type Observer interface {
	CampaignRun(trigger string, err error)
	CampaignEmails(outcome string, n int)
}

// noObserver is the Observer of a runner built without one.
type noObserver struct{}

func (noObserver) CampaignRun(string, error)  {}
func (noObserver) CampaignEmails(string, int) {}

// NewRunner wires the runner.
func NewRunner(d Deps) *Runner {
	if d.Observer == nil {
		d.Observer = noObserver{}
	}
	rn := &Runner{shared: newShared(d), opts: d.Processing.withDefaults(), observer: d.Observer, schedule: d.Schedule, running: map[uuid.UUID]chan struct{}{}}
	rn.served.at = map[uuid.UUID]uint64{}
	return rn
}

// runTurn makes one turn of a run that a request asked for: a pass over
// the campaign bounded like a scheduler's turn. unfinished is true when
// the turn cut the pass short. When this runner is processing the
// campaign already (a scheduler's turn, another run), the turn waits for
// that pass to end and then makes its own: the pass in progress may have
// read the campaign before the change that asked for this run, so
// leaving the work to it would miss that change until the next tick.
func (rn *Runner) runTurn(ctx context.Context, campaignID uuid.UUID) (unfinished bool, err error) {
	if err := rn.claimCampaign(ctx, campaignID); err != nil {
		return false, err
	}
	defer rn.releaseCampaign(campaignID)
	return rn.processLogged(ctx, campaignID, "manual", newTurn(rn.opts.TurnParticipants, rn.opts.TurnTime))
}

// claimCampaign waits until this runner processes no pass of the
// campaign, then marks it as processing one (releaseCampaign ends it).
func (rn *Runner) claimCampaign(ctx context.Context, campaignID uuid.UUID) error {
	for {
		rn.mu.Lock()
		busy, ok := rn.running[campaignID]
		if !ok {
			rn.running[campaignID] = make(chan struct{})
		}
		rn.mu.Unlock()
		if !ok {
			return nil
		}
		select {
		case <-busy:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// releaseCampaign ends the pass claimCampaign (or ProcessDue) marked.
func (rn *Runner) releaseCampaign(campaignID uuid.UUID) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if ch, ok := rn.running[campaignID]; ok {
		close(ch)
		delete(rn.running, campaignID)
	}
}

// processLogged makes one pass, reports it to the observer and the log,
// and tells whether a turn cut it short.
func (rn *Runner) processLogged(ctx context.Context, campaignID uuid.UUID, trigger string, t *turn) (unfinished bool, err error) {
	res, err := rn.processCampaign(ctx, campaignID, t)
	rn.observer.CampaignRun(trigger, err)
	for outcome, n := range map[string]int{"sent": res.Sent, "failed": res.Failed, "retry": res.Retrying, "triggered": res.Triggered} {
		if n > 0 {
			rn.observer.CampaignEmails(outcome, n)
		}
	}
	switch {
	case apperr.Is(err, apperr.InvalidStatus) || apperr.Is(err, apperr.AddonRequired) || apperr.Is(err, apperr.NotFound):
		rn.log.Info("campaign not processed", "campaign_id", campaignID, "reason", apperr.MessageOf(err))
	case err != nil:
		rn.log.Error("campaign processing failed", "campaign_id", campaignID, "err", err)
	default:
		rn.log.Info("campaign processed", "campaign_id", campaignID, "sent", res.Sent, "failed", res.Failed,
			"retrying", res.Retrying, "triggered", res.Triggered, "completed", res.Completed, "reaped", res.Reaped,
			"turn_over", t.unfinished())
	}
	return err == nil && t.unfinished(), err
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
// Campaigns this runner is already running are skipped.
func (rn *Runner) ProcessDue(ctx context.Context) error {
	done := map[uuid.UUID]bool{} // finished in this call, or not to be retried in it
	for {
		all, err := rn.st.runnableCampaigns(ctx, rn.db)
		if err != nil {
			return err
		}
		round := rn.round(all, done)
		if len(round) == 0 {
			return nil
		}
		for _, c := range round {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rn.mu.Lock()
			_, busy := rn.running[c.id]
			if !busy {
				rn.running[c.id] = make(chan struct{})
			}
			rn.mu.Unlock()
			if busy {
				done[c.id] = true // its own run takes it to the end
				continue
			}
			t := newTurn(rn.opts.TurnParticipants, rn.opts.TurnTime)
			if unfinished, _ := rn.processLogged(ctx, c.id, "schedule", t); !unfinished {
				done[c.id] = true
			}
			rn.releaseCampaign(c.id)
			rn.mu.Lock()
			rn.served.seq++
			rn.served.at[c.id], rn.served.at[c.teamID] = rn.served.seq, rn.served.seq
			rn.mu.Unlock()
		}
	}
}

// round picks one campaign per team among those not done: the team's
// campaign served longest ago (oldest first among the never served), the
// teams in the same order by when they were last served.
func (rn *Runner) round(all []runnable, done map[uuid.UUID]bool) []runnable {
	rn.mu.Lock()
	defer rn.mu.Unlock()
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
		case rn.served.at[c.id] < rn.served.at[round[i].id]:
			round[i] = c
		}
	}
	slices.SortStableFunc(round, func(a, b runnable) int {
		return cmp.Compare(rn.served.at[a.teamID], rn.served.at[b.teamID])
	})
	// Forget campaigns and teams that left the list.
	live := make(map[uuid.UUID]bool, 2*len(all))
	for _, c := range all {
		live[c.id], live[c.teamID] = true, true
	}
	for id := range rn.served.at {
		if !live[id] {
			delete(rn.served.at, id)
		}
	}
	return round
}
