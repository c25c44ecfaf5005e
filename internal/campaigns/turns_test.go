package campaigns_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
	"github.com/contactbook/contactbook/internal/postgres"
)

// team is an apptest team whose email settings use its own API key, so
// the provider's requests tell the teams apart, with a template to send.
type team struct {
	*apptest.Team
	tpl string
}

// newTeam gives tm email settings of its own API key and a template.
func newTeam(t *testing.T, tm *apptest.Team, apiKey string) team {
	t.Helper()
	sender := "news@" + strings.ToLower(strings.TrimPrefix(apiKey, "SG.")) + ".example"
	tm.O.Put("/api/campaign-settings", map[string]any{"sender_email": sender, "mailer_api_key": apiKey}).Expect(http.StatusOK)
	return team{Team: tm, tpl: tm.O.NewTemplate("T")}
}

// campaign adds an active one-step email campaign with n participants,
// new contacts named after the campaign.
func (tm team) campaign(t *testing.T, name string, n int) string {
	t.Helper()
	cid := tm.O.NewEmailCampaign(name, tm.tpl)
	tm.O.Enroll(cid, tm.O.NewContacts(name, n)...)
	return cid
}

// recipientsBefore is how many of the provider's recipients came before
// the first one whose API key is key; -1 when none has it.
func recipientsBefore(mail *mailertest.Server, key string) int {
	n := 0
	for _, r := range mail.Requests() {
		if r.APIKey == key {
			return n
		}
		n += len(r.Personalizations)
	}
	return -1
}

// runnerWith is a campaigns runner of env with its own sender and
// processing options.
func runnerWith(env *apptest.Env, sender mailer.Sender, o campaigns.ProcessingOptions) *campaigns.Runner {
	return campaigns.NewRunner(deps(env, env.App.DB, sender, o))
}

// runnerOn is runnerWith on its own database pool.
func runnerOn(env *apptest.Env, db postgres.Pool, sender mailer.Sender, o campaigns.ProcessingOptions) *campaigns.Runner {
	return campaigns.NewRunner(deps(env, db, sender, o))
}

// serviceOn is a campaigns request service of env on its own database
// pool, with its own sender.
func serviceOn(env *apptest.Env, db postgres.Pool, sender mailer.Sender) *campaigns.Service {
	return campaigns.NewService(deps(env, db, sender, campaigns.ProcessingOptions{}))
}

func deps(env *apptest.Env, db postgres.Pool, sender mailer.Sender, o campaigns.ProcessingOptions) campaigns.Deps {
	return campaigns.Deps{
		DB: db, Accounts: env.App.Accounts, Segments: env.App.Segments, Sender: sender, Now: env.Clock.Now,
		Log: slog.New(slog.DiscardHandler), SettingsKey: env.App.Config.SettingsKey, PublicBaseURL: env.App.Config.PublicBaseURL,
		Processing: o,
	}
}

// A team's large campaign, created first, does not hold up another
// team's campaign: the scheduler's pass sends the other team's email
// after one turn of the large one (10 participants), not after all 60 of
// them, and still finishes both in the same call.
func TestScheduleLargeCampaignTakesTurns(t *testing.T) {
	t.Parallel()
	setup := apptest.Setup(t, apptest.Options{OwnerOnly: true})
	env, mail := setup.Env, setup.Mail
	large := newTeam(t, setup, "SG.large")
	large.campaign(t, "big", 60)
	large.campaign(t, "second", 1)
	newTeam(t, setup.AddTeam("small"), "SG.small").campaign(t, "small", 1)

	svc := runnerWith(env, mailer.NewSender(mail.URL, nil), campaigns.ProcessingOptions{ChunkSize: 5, TurnParticipants: 10})
	if err := svc.ProcessDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := mail.RecipientCount(); n != 62 {
		t.Fatalf("the pass sent %d emails, want all 62", n)
	}
	// Each round gives each team one turn: the large team's first turn
	// (the big campaign's 10 or the second's 1) comes before the small
	// team's at most, and its second campaign waits one round at most.
	if before := recipientsBefore(mail, "SG.small"); before < 0 || before > 10 {
		t.Errorf("%d emails of the large team went out before the small team's, want at most one turn (10)", before)
	}
	second := -1
	for i, r := range mail.Recipients() {
		if strings.HasPrefix(r.Email, "second") {
			second = i
		}
	}
	if second < 0 || second > 11 {
		t.Errorf("the large team's second campaign went out after %d emails, want at most one round (11)", second)
	}
	if n := env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE status <> 'completed'`); n != 0 {
		t.Fatalf("%d participants not completed", n)
	}
}

// slowSender makes one API key's sends slow.
type slowSender struct {
	mailer.Sender
	key   string
	delay time.Duration
}

func (s slowSender) Send(ctx context.Context, b mailer.Batch) (string, error) {
	if b.APIKey == s.key {
		time.Sleep(s.delay)
	}
	return s.Sender.Send(ctx, b)
}

// A team whose emails are slow to send gets a turn of bounded time: the
// other team's email goes out long before the slow campaign is done.
func TestScheduleSlowCampaignTakesTurns(t *testing.T) {
	t.Parallel()
	setup := apptest.Setup(t, apptest.Options{OwnerOnly: true})
	env, mail := setup.Env, setup.Mail
	newTeam(t, setup, "SG.slow").campaign(t, "slow", 30)
	newTeam(t, setup.AddTeam("quick"), "SG.quick").campaign(t, "quick", 1)

	sender := slowSender{Sender: mailer.NewSender(mail.URL, nil), key: "SG.slow", delay: 50 * time.Millisecond}
	svc := runnerWith(env, sender, campaigns.ProcessingOptions{ChunkSize: 1, Senders: 1, Claimers: 1, TurnTime: 100 * time.Millisecond})
	if err := svc.ProcessDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := mail.RecipientCount(); n != 31 {
		t.Fatalf("the pass sent %d emails, want all 31", n)
	}
	// One turn claims for 100 ms; what it claimed (a chunk per 50 ms send
	// plus the few waiting for the sender) still goes out.
	if before := recipientsBefore(mail, "SG.quick"); before < 0 || before > 10 {
		t.Errorf("%d emails of the slow campaign went out first, want one turn's worth", before)
	}
}

// A campaign activated while another team's long campaign is being
// processed gets its turn in the same call, in the next round.
func TestScheduleNewCampaignJoinsTheRounds(t *testing.T) {
	t.Parallel()
	setup := apptest.Setup(t, apptest.Options{OwnerOnly: true})
	env, mail := setup.Env, setup.Mail
	newTeam(t, setup, "SG.long").campaign(t, "long", 40)
	lateTeam := newTeam(t, setup.AddTeam("late"), "SG.late")
	sender := &hookSender{Sender: mailer.NewSender(mail.URL, nil)}
	sender.first = func() { lateTeam.campaign(t, "late", 1) }
	svc := runnerWith(env, sender, campaigns.ProcessingOptions{ChunkSize: 5, Senders: 1, TurnParticipants: 10})
	if err := svc.ProcessDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if before := recipientsBefore(mail, "SG.late"); before < 0 || before > 20 {
		t.Errorf("%d emails of the long campaign went out before the late one, want at most two turns (20)", before)
	}
	if n := mail.RecipientCount(); n != 41 {
		t.Fatalf("sent %d, want 41", n)
	}
}

// hookSender calls first once, before the first send.
type hookSender struct {
	mailer.Sender
	first func()
	done  bool
}

func (h *hookSender) Send(ctx context.Context, b mailer.Batch) (string, error) {
	if !h.done {
		h.done = true
		h.first()
	}
	return h.Sender.Send(ctx, b)
}
