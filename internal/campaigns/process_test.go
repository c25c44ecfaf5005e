package campaigns_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/mailer"
)

// gateSender holds the first send until released, so a test can stop a
// pass while chunks are claimed but not yet sent.
type gateSender struct {
	mailer.Sender
	started, release chan struct{}
	once             sync.Once
}

func (g *gateSender) Send(ctx context.Context, b mailer.Batch) (string, error) {
	g.once.Do(func() {
		close(g.started)
		<-g.release
	})
	return g.Sender.Send(ctx, b)
}

// TestCampaignStoppedPassReleasesClaims stops a pass (shutdown) while one
// chunk is at the provider and more are claimed: the chunk in flight is
// sent and recorded, the claimed-but-unsent ones are given back (not
// counted as tries, not reaped as unknown) and a later pass sends them.
func TestCampaignStoppedPassReleasesClaims(t *testing.T) {
	t.Parallel()
	tm := apptest.Setup(t)
	env, mail, ob := tm.Env, tm.Mail, tm.O
	ob.Put("/api/campaign-settings", map[string]any{"sender_email": "news@acme.example", "mailer_api_key": "SG.k"}).Expect(http.StatusOK)
	cid := ob.NewEmailCampaign("C", ob.NewTemplate("T"))
	ob.Enroll(cid, ob.NewContacts("c", 5)...)
	ctx := context.Background()

	gate := &gateSender{Sender: mailer.NewSender(mail.URL, nil), started: make(chan struct{}), release: make(chan struct{})}
	svc := runnerWith(env, gate, campaigns.ProcessingOptions{ChunkSize: 1, Senders: 1})
	passCtx, stop := context.WithCancel(ctx)
	done := make(chan campaigns.RunResult)
	go func() {
		res, _ := svc.ProcessCampaign(passCtx, uuid.MustParse(cid))
		done <- res
	}()
	<-gate.started
	stop()
	close(gate.release)
	res := <-done
	if res.Sent != 1 || mail.RecipientCount() != 1 {
		t.Fatalf("stopped pass: %+v, provider got %d", res, mail.RecipientCount())
	}
	if n := env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE result IS NOT NULL`); n != 1 {
		t.Fatalf("%d completion records, want the one sent", n)
	}
	if n := env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE result IS NULL AND (lease_until IS NOT NULL OR tries <> 0 OR token_hash IS NOT NULL)`); n != 0 {
		t.Fatalf("%d claims not given back", n)
	}
	if n := env.QueryInt(`SELECT count(*) FROM campaign_claims`); n != 0 {
		t.Fatalf("%d claims left", n)
	}
	res, err := env.App.CampaignRunner.ProcessCampaign(ctx, uuid.MustParse(cid))
	if err != nil || res.Sent != 4 || res.Reaped != 0 || mail.RecipientCount() != 5 {
		t.Fatalf("next pass: %+v %v, provider got %d", res, err, mail.RecipientCount())
	}
}
