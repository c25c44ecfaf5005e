package campaigns_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/mailer"
)

// insertOnly is the campaigns request service of another instance whose
// job queue client only enqueues (it works nothing).
func insertOnly(t *testing.T, env *apptest.Env) *campaigns.Service {
	t.Helper()
	client, err := river.NewClient(riverpgxv5.New(env.App.Pool), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	d := deps(env, env.App.DB, nil, campaigns.ProcessingOptions{})
	d.Queue = client
	return campaigns.NewService(d)
}

// A run asked for through the API is a campaign_run job for the campaign,
// worked to the end by the instance's queue.
func TestRunIsAJob(t *testing.T) {
	t.Parallel()
	setup := apptest.Setup(t, apptest.Options{OwnerOnly: true})
	env, mail := setup.Env, setup.Mail
	tm := newTeam(t, setup, "SG.runner")
	cid := tm.campaign(t, "c", 3)
	tm.O.Post("/api/campaigns/"+cid+"/run", nil).Expect(http.StatusOK)
	rivertest.RequireInserted(context.Background(), t, riverpgxv5.New(env.App.Pool),
		&campaigns.RunArgs{CampaignID: uuid.MustParse(cid)}, &rivertest.RequireInsertedOpts{MaxAttempts: 10})
	env.WaitJobs()
	if mail.RecipientCount() != 3 {
		t.Fatalf("the run sent %d emails, want 3", mail.RecipientCount())
	}
	if n := env.QueryInt(`SELECT count(*) FROM river_job WHERE kind = 'campaign_run' AND state = 'completed' AND args ->> 'campaign_id' = $1`, cid); n != 1 {
		t.Fatalf("%d completed run jobs on record", n)
	}
}

// Two instances asked at once for runs of one campaign queue one job:
// the other requests start nothing new.
func TestRunUniqueAcrossInstances(t *testing.T) {
	t.Parallel()
	// No worker: a run that started meanwhile would rightly get one queued
	// behind it (TestRunAskedForDuringAPassReadsTheChange), and this test
	// is about queued runs.
	setup := apptest.Setup(t, apptest.Options{OwnerOnly: true, WithoutJobs: true})
	env := setup.Env
	tm := newTeam(t, setup, "SG.unique")
	cid := uuid.MustParse(tm.campaign(t, "c", 1))
	actor := auth.UserActor(uuid.MustParse(tm.Owner.ID), env.App.Accounts)
	instances := []*campaigns.Service{insertOnly(t, env), insertOnly(t, env)}
	var mu sync.Mutex
	queued := 0
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			ok, err := instances[i%2].Run(context.Background(), access.Scope{Actor: actor}, cid)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				queued++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if queued != 1 {
		t.Fatalf("%d of 10 requests queued a run, want 1", queued)
	}
	if n := env.QueryInt(`SELECT count(*) FROM river_job WHERE kind = 'campaign_run'`); n != 1 {
		t.Fatalf("%d run jobs, want 1", n)
	}
}

// A run queued by an instance that stops before working it is worked by
// the next instance that starts on the database.
func TestRunSurvivesRestart(t *testing.T) {
	t.Parallel()
	setup := apptest.Setup(t, apptest.Options{OwnerOnly: true, WithoutJobs: true})
	stopped, mail := setup.Env, setup.Mail
	tm := newTeam(t, setup, "SG.restart")
	cid := tm.campaign(t, "c", 2)
	tm.O.Post("/api/campaigns/"+cid+"/run", nil).Expect(http.StatusOK)
	time.Sleep(300 * time.Millisecond)
	if n := stopped.QueryInt(`SELECT count(*) FROM river_job WHERE kind = 'campaign_run' AND state = 'available'`); n != 1 || mail.RecipientCount() != 0 {
		t.Fatalf("%d queued run jobs and %d emails before the restart, want 1 and 0", n, mail.RecipientCount())
	}
	restarted := apptest.Setup(t, apptest.Options{Bare: true, DatabaseURL: stopped.DBURL, Env: map[string]string{"MAILER_BASE_URL": mail.URL}}).Env
	restarted.WaitJobs()
	if mail.RecipientCount() != 2 {
		t.Fatalf("the restarted instance sent %d emails, want 2", mail.RecipientCount())
	}
	if n := restarted.QueryInt(`SELECT count(*) FROM river_job WHERE kind = 'campaign_run' AND state = 'completed' AND attempt = 1`); n != 1 {
		t.Fatalf("%d completed run jobs, want 1", n)
	}
}

// A run larger than a turn is worked in turns. Alone on the queue it goes
// straight from one turn to the next in one attempt, with no snooze (a
// snoozed job waits for the queue's next fetch, which idled the machine);
// with another run waiting for the only worker, each yields after its
// turn (a snooze: same job, no attempt spent), and each completes when
// its campaign has no due work left.
func TestRunWorksInTurns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		campaigns int
		yields    bool
	}{
		{"alone", 1, false},
		{"beside another run", 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			setup := apptest.Setup(t, apptest.Options{OwnerOnly: true, WithoutJobs: true})
			env, mail := setup.Env, setup.Mail
			tm := newTeam(t, setup, "SG.turns")
			for i := range c.campaigns {
				cid := tm.campaign(t, fmt.Sprintf("c%d", i), 7)
				tm.O.Post("/api/campaigns/"+cid+"/run", nil).Expect(http.StatusOK)
			}

			rn := runnerWith(env, mailer.NewSender(mail.URL, nil), campaigns.ProcessingOptions{ChunkSize: 1, Senders: 1, Claimers: 1, TurnParticipants: 2})
			q, err := jobs.New(env.App.Pool, jobs.Config{MaxWorkers: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Add(rn); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- q.Run(ctx) }()
			env.WaitJobs()
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if mail.RecipientCount() != 7*c.campaigns {
				t.Fatalf("the runs sent %d emails, want %d", mail.RecipientCount(), 7*c.campaigns)
			}
			rows, err := env.App.Pool.Query(context.Background(), `
				SELECT attempt, coalesce((metadata ->> 'snoozes')::int, 0) FROM river_job
				WHERE kind = 'campaign_run' AND state = 'completed'`)
			if err != nil {
				t.Fatal(err)
			}
			runs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]int, error) {
				var v [2]int
				return v, r.Scan(&v[0], &v[1])
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != c.campaigns {
				t.Fatalf("%d completed runs, want %d", len(runs), c.campaigns)
			}
			// The queue records a snoozed job as available a moment after
			// its worker returns, so the run that got the worker second may
			// find nobody waiting after its first turn: that at least one
			// run yielded is what shows the turns were shared.
			snoozed := 0
			for _, r := range runs {
				if attempt := r[0]; attempt != 1 {
					t.Fatalf("a run took attempt %d, want 1", attempt)
				}
				snoozed += r[1]
			}
			if (snoozed > 0) != c.yields {
				t.Fatalf("the runs were snoozed %d times; want snoozes only when another run waits (%v)", snoozed, c.yields)
			}
		})
	}
}
