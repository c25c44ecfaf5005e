package campaigns_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/apptest/logbuf"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

// abCampaign is an active campaign of one A/B step (two subjects, 20 %
// tested, decided right after the test) with n participants, its test
// emails (20 % of n rounded up, at least two) sent by a first pass.
func abCampaign(t *testing.T, env *apptest.Env, tm team, n int) uuid.UUID {
	t.Helper()
	cid := tm.O.NewCampaign("AB")
	tm.O.Post("/api/campaigns/"+cid+"/steps", map[string]any{
		"step_type": "email", "name": "Launch", "schedule_type": "immediate", "email_template_id": tm.tpl,
		"variants": []map[string]any{{"subject": "Subject A"}, {"subject": "Subject B"}},
		"ab_test":  map[string]any{"decide_after_minutes": 0},
	}).Expect(http.StatusOK)
	tm.O.Patch("/api/campaigns/"+cid, map[string]any{"status": "active"}).Expect(http.StatusOK)
	tm.O.Enroll(cid, tm.O.NewContacts("ab", n)...)
	id := uuid.MustParse(cid)
	if r, err := env.App.CampaignRunner.ProcessCampaign(context.Background(), id); err != nil || r.Sent != max(2, (n+4)/5) {
		t.Fatalf("test pass: %+v %v", r, err)
	}
	env.Clock.Advance(time.Minute)
	return id
}

// everyoneOnce fails unless each of n participants got exactly one email.
func everyoneOnce(t *testing.T, mail *mailertest.Server, n int) {
	t.Helper()
	seen := map[string]int{}
	for _, r := range mail.Recipients() {
		seen[r.Email]++
	}
	if len(seen) != n {
		t.Fatalf("%d addresses got email, want %d", len(seen), n)
	}
	for addr, k := range seen {
		if k != 1 {
			t.Fatalf("%s got %d emails", addr, k)
		}
	}
}

// An instance that dies between the decision and the sends leaves the
// decision recorded and nothing sent; another instance sends the winner
// to everyone else, once, when their hold ends.
func TestABDecisionThenCrash(t *testing.T) {
	t.Parallel()
	setup := apptest.Setup(t, apptest.Options{OwnerOnly: true})
	env, mail := setup.Env, setup.Mail
	tm := newTeam(t, setup, "SG.acme")
	cid := abCampaign(t, env, tm, 10)

	passCtx, die := context.WithCancel(context.Background())
	defer die()
	db := &cancelAfter{Pool: env.App.DB, match: "SET winner_variant_id", cancel: die}
	sender := &countingSender{Sender: mailer.NewSender(mail.URL, nil)}
	dead := runnerOn(env, db, sender, campaigns.ProcessingOptions{})
	if _, err := dead.ProcessCampaign(passCtx, cid); err == nil || !db.fired.Load() {
		t.Fatalf("the dying pass: err %v, decision seen %v", err, db.fired.Load())
	}
	if sender.batches.Load() != 0 {
		t.Fatal("the dying instance sent")
	}
	if env.QueryInt(`SELECT count(*) FROM campaign_steps WHERE winner_variant_id IS NOT NULL AND decided_at IS NOT NULL`) != 1 {
		t.Fatal("the decision was not recorded")
	}
	// The others wait out their hold (at least five minutes), then get
	// the winner from whichever instance passes.
	env.Clock.Advance(6 * time.Minute)
	r, err := env.App.CampaignRunner.ProcessCampaign(context.Background(), cid)
	if err != nil || r.Sent != 8 {
		t.Fatalf("the other instance: %+v %v", r, err)
	}
	everyoneOnce(t, mail, 10)
	if r, _ := env.App.CampaignRunner.ProcessCampaign(context.Background(), cid); r.Sent != 0 {
		t.Fatalf("a later pass sent %d", r.Sent)
	}
}

// Two instances passing at once decide the test once and send each
// participant one email.
func TestABDecidedOnceAcrossInstances(t *testing.T) {
	t.Parallel()
	setup := apptest.Setup(t, apptest.Options{OwnerOnly: true})
	env, mail := setup.Env, setup.Mail
	tm := newTeam(t, setup, "SG.acme")
	cid := abCampaign(t, env, tm, 40)

	logs := &logbuf.Buffer{}
	var wg sync.WaitGroup
	for range 2 {
		d := deps(env, env.App.DB, mailer.NewSender(mail.URL, nil), campaigns.ProcessingOptions{ChunkSize: 3})
		d.Log = slog.New(slog.NewTextHandler(logs, nil))
		rn := campaigns.NewRunner(d)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := rn.ProcessCampaign(context.Background(), cid); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(logs.String(), "a/b test decided"); n != 1 {
		t.Fatalf("decided %d times:\n%s", n, logs.String())
	}
	everyoneOnce(t, mail, 40)
}
