package campaigns_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

// BenchmarkCampaignSendEvents measures what webhook events cost a
// campaign run, side by side in one run over the same contacts: the rate
// of a campaign with no webhook subscribed to email.sent, then of one with
// a subscriber, whose every event must reach its receiver (the time until
// the last one arrived is reported too), then the subscribed run again
// with the webhook engine paused while it sends (pct-written-only: the
// cost of writing the events alone). With no subscriber the run asks
// once per claimed chunk and writes nothing.
//
//	go test -run '^$' -bench BenchmarkCampaignSendEvents -benchtime 1x ./internal/campaigns/
//
// BENCH_CAMPAIGN_CONTACTS sets the size (default 100,000), as for
// BenchmarkCampaignSend.
func BenchmarkCampaignSendEvents(b *testing.B) {
	n := benchParticipants(b)
	mail := mailertest.NewServer(b)
	env := apptest.Setup(b, apptest.Options{Bare: true, Env: map[string]string{
		"MAILER_BASE_URL": mail.URL, "DB_MAX_CONNS": "16", "LOG_LEVEL": "info",
	}}).Env
	owner := env.Signup("bench")
	owner.SetAddon("active")
	book := owner.CreateBook("Bench")
	ob := owner.InBook(book)
	ob.Put("/api/campaign-settings", map[string]any{
		"sender_name": "Acme", "sender_email": "news@acme.example", "company_name": "Acme Inc.",
		"address_line1": "1 Main St", "city": "Springfield", "postal_code": "62701", "country": "USA",
		"mailer_api_key": "SG.bench",
	}).Expect(http.StatusOK)
	tpl := ob.Post("/api/campaign-templates", map[string]any{
		"name": "News", "subject": "News for {{first_name}}",
		"body_html": "<p>Dear {{full_name}}, here is this month's news.</p><p><a href=\"{{unsubscribe_url}}\">Unsubscribe</a></p>",
	}).Expect(http.StatusOK).String("data.id")
	ctx := context.Background()
	pool := env.App.Pool
	if _, err := pool.Exec(ctx, `
		INSERT INTO contacts (book_id, first_name, last_name, company, emails)
		SELECT $1, 'c' || g, 'Bench', 'Acme', jsonb_build_array(jsonb_build_object('address', 'c' || g || '@example.com', 'label', 'work', 'primary', true))
		FROM generate_series(1, $2) g`, book, n); err != nil {
		b.Fatal(err)
	}
	var received atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { received.Add(1) }))
	b.Cleanup(receiver.Close)
	var stop context.CancelFunc
	var engineDone chan struct{}
	startEngine := func() {
		var engineCtx context.Context
		engineCtx, stop = context.WithCancel(ctx)
		engineDone = make(chan struct{})
		go func() { defer close(engineDone); _ = env.App.WebhookEngine.Run(engineCtx) }()
	}
	stopEngine := func() { stop(); <-engineDone }
	startEngine()
	b.Cleanup(func() { stopEngine() })

	run := func() (emailsPerSecond float64) {
		b.Helper()
		cid := ob.Post("/api/campaigns", map[string]any{"name": "Bench"}).Expect(http.StatusOK).String("data.id")
		ob.Post("/api/campaigns/"+cid+"/steps", map[string]any{
			"step_type": "email", "name": "News", "schedule_type": "immediate", "email_template_id": tpl,
		}).Expect(http.StatusOK)
		ob.Patch("/api/campaigns/"+cid, map[string]any{"status": "active"}).Expect(http.StatusOK)
		if _, err := pool.Exec(ctx, `
			INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at)
			SELECT $1, id, $2 FROM contacts WHERE book_id = $3`, cid, env.Clock.Now(), book); err != nil {
			b.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
			b.Fatal(err)
		}
		mail.Reset()
		start := time.Now()
		res, err := env.App.CampaignRunner.ProcessCampaign(ctx, uuid.MustParse(cid))
		elapsed := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if res.Sent != n || mail.RecipientCount() != n {
			b.Fatalf("sent %d, provider received %d, want %d (%+v)", res.Sent, mail.RecipientCount(), n, res)
		}
		return float64(n) / elapsed.Seconds()
	}

	b.ResetTimer()
	for range b.N {
		none := run()
		if got := received.Load(); got != 0 {
			b.Fatalf("%d events delivered with no webhook subscribed", got)
		}
		hook := owner.Post("/api/teams/"+owner.TeamID+"/webhooks", map[string]any{"url": receiver.URL, "events": []string{"email.sent"}}).
			Expect(http.StatusCreated).String("data.webhook.id")
		start := time.Now()
		subscribed := run()
		for received.Load() < int64(n) {
			if time.Since(start) > 10*time.Minute {
				b.Fatalf("%d of %d email.sent events delivered", received.Load(), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
		delivered := time.Since(start)
		// The same with the webhook engine paused during the run: what
		// writing the events costs, apart from delivering them on the
		// same cores meanwhile (here the receiver too runs in-process).
		received.Store(0)
		stopEngine()
		written := run()
		startEngine()
		for received.Load() < int64(n) {
			if time.Since(start) > 10*time.Minute {
				b.Fatalf("%d of %d email.sent events delivered after the paused run", received.Load(), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.ReportMetric(none, "emails/s-no-subscriber")
		b.ReportMetric(subscribed, "emails/s-subscriber")
		b.ReportMetric(100*subscribed/none, "pct-of-no-subscriber")
		b.ReportMetric(delivered.Seconds(), "s-all-events-delivered")
		b.ReportMetric(100*written/none, "pct-written-only")
		owner.Delete("/api/teams/" + owner.TeamID + "/webhooks/" + hook).Expect(http.StatusNoContent)
		received.Store(0)
	}
}
