package campaigns_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/mailer"
)

// raceCampaign is the shape of the race: a campaign whose audience is a
// label's segment, without exit, with a welcome email and a newsletter on
// a date still to come, and one contact in the audience.
type raceCampaign struct {
	id, news, contact, label string
}

func newRaceCampaign(t *testing.T, tm team, name string) raceCampaign {
	t.Helper()
	o := tm.O
	label := o.Post("/api/books/"+tm.Book+"/labels", map[string]any{"name": name}).Expect(http.StatusCreated).String("data.id")
	seg := o.Post("/api/segments", map[string]any{"name": name,
		"rule": map[string]any{"field": "labels", "op": "has_any", "value": []string{label}}}).Expect(http.StatusCreated).String("data.id")
	cid := o.Post("/api/campaigns", map[string]any{"name": name, "audience_segment_id": seg, "exit_on_segment_leave": false}).
		Expect(http.StatusOK).String("data.id")
	o.NewEmailStep(cid, tm.tpl, map[string]any{"name": "Welcome"})
	news := o.NewEmailStep(cid, tm.tpl, map[string]any{"name": "News", "schedule_type": "fixed_date", "fixed_date": "2099-01-01"})
	o.Patch("/api/campaigns/"+cid, map[string]any{"status": "active"}).Expect(http.StatusOK)
	contact := o.NewContact(name, name+"@example.com")
	o.Post("/api/contacts/"+contact+"/labels", map[string]any{"label_id": label}).Expect(http.StatusOK)
	return raceCampaign{id: cid, news: news, contact: contact, label: label}
}

// leaveAndFallDue is what the user does while a pass may be running: the
// contact leaves the segment, the newsletter's date moves into the past,
// and a run is asked for.
func (rc raceCampaign) leaveAndFallDue(tm team) {
	tm.O.Delete("/api/contacts/" + rc.contact + "/labels/" + rc.label).Expect(http.StatusNoContent)
	tm.O.Patch("/api/campaigns/"+rc.id+"/steps/"+rc.news, map[string]any{"fixed_date": "2026-01-01"}).Expect(http.StatusOK)
	tm.O.Post("/api/campaigns/"+rc.id+"/run", nil).Expect(http.StatusOK)
}

// check: without exit, leaving the segment changes nothing; the run asked
// for after the step fell due sent it.
func (rc raceCampaign) check(t *testing.T, env *apptest.Env, round string) {
	t.Helper()
	if n := env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result = 'success'`, rc.news); n != 1 {
		status := ""
		_ = env.App.Pool.QueryRow(context.Background(), `SELECT status FROM campaign_participants WHERE campaign_id = $1`, rc.id).Scan(&status)
		t.Fatalf("%s: the newsletter was sent %d times after the run asked for once it fell due (participant %s); want 1", round, n, status)
	}
	if n := env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1 AND status = 'completed'`, rc.id); n != 1 {
		t.Fatalf("%s: participant not completed", round)
	}
}

// A run asked for while a pass over the campaign is under way reads what
// was changed before it was asked for: the step that fell due is sent to
// the participant who left the segment (no exit) by that run, not left
// to the next scheduler tick. The pass under way is a run (the queue
// counts a running job as the unique one) or a scheduler's turn in the
// same process; each is held at its first email, after it read the
// steps, while the user acts. Then the race is run again and again with
// nothing held, the user acting at once after the first run was asked
// for.
func TestRunAskedForDuringAPassReadsTheChange(t *testing.T) {
	t.Parallel()
	setup := apptest.Setup(t, apptest.Options{OwnerOnly: true, WithoutJobs: true})
	env, mail := setup.Env, setup.Mail
	tm := newTeam(t, setup, "SG.race")
	setup.Env.Clock.Set(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))

	gates := &gates{Sender: mailer.NewSender(mail.URL, nil)}
	gate := gates.arm()
	rn := runnerWith(env, gates, campaigns.ProcessingOptions{})
	q, err := jobs.New(env.App.Pool, jobs.Config{MaxWorkers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Add(rn); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	// A run is under way, held at its first email.
	rc := newRaceCampaign(t, tm, "held-run")
	tm.O.Post("/api/campaigns/"+rc.id+"/run", nil).Expect(http.StatusOK)
	select {
	case <-gate.started:
	case <-time.After(20 * time.Second):
		var st string
		_ = env.App.Pool.QueryRow(context.Background(), `SELECT coalesce(string_agg(p.status || ' ' || coalesce(c.result, '-') || ' ' || coalesce(c.result_detail, ''), '; '), 'none') FROM campaign_participants p LEFT JOIN campaign_step_completions c ON c.participant_id = p.id WHERE p.campaign_id = $1`, rc.id).Scan(&st)
		var jobsState string
		_ = env.App.Pool.QueryRow(context.Background(), `SELECT coalesce(string_agg(state::text || ' ' || errors::text, '; '), 'none') FROM river_job`).Scan(&jobsState)
		t.Fatalf("the first run sent nothing: participants %s; jobs %s", st, jobsState)
	}
	rc.leaveAndFallDue(tm)
	close(gate.release)
	env.WaitJobs()
	rc.check(t, env, "during a run")

	// A scheduler's turn is under way in the same process, held the same way.
	gate2 := gates.arm()
	rc = newRaceCampaign(t, tm, "held-tick")
	tick := make(chan error, 1)
	go func() { tick <- rn.ProcessDue(ctx) }()
	<-gate2.started
	rc.leaveAndFallDue(tm)
	// The run waits for the turn to end rather than finishing at once.
	time.Sleep(300 * time.Millisecond)
	close(gate2.release)
	if err := <-tick; err != nil {
		t.Fatal(err)
	}
	env.WaitJobs()
	rc.check(t, env, "during a scheduler turn")

	// Nothing held: the user acts as soon as the first run has enrolled
	// the contact, while that run sends the welcome, records it, or has
	// just ended: the race as it comes.
	for i := range 10 {
		rc := newRaceCampaign(t, tm, fmt.Sprintf("free%d", i))
		tm.O.Post("/api/campaigns/"+rc.id+"/run", nil).Expect(http.StatusOK)
		for deadline := time.Now().Add(20 * time.Second); env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1`, rc.id) == 0; {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the first run enrolled nobody", i)
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(i%5) * 5 * time.Millisecond)
		rc.leaveAndFallDue(tm)
		env.WaitJobs()
		rc.check(t, env, fmt.Sprintf("round %d", i))
	}
	if n := env.QueryInt(`SELECT count(*) FROM river_job WHERE kind = 'campaign_run' AND state NOT IN ('completed')`); n != 0 {
		t.Fatalf("%d run jobs not completed", n)
	}
}

// gates holds the first send after each arm until that gate is released;
// the sends in between go through.
type gates struct {
	mailer.Sender
	mu   sync.Mutex
	next *gateSender
}

func (g *gates) arm() *gateSender {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.next = &gateSender{Sender: g.Sender, started: make(chan struct{}), release: make(chan struct{})}
	return g.next
}

func (g *gates) Send(ctx context.Context, b mailer.Batch) (string, error) {
	g.mu.Lock()
	gate := g.next
	g.next = nil
	g.mu.Unlock()
	if gate != nil {
		return gate.Send(ctx, b)
	}
	return g.Sender.Send(ctx, b)
}
