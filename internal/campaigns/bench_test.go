package campaigns_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

// benchParticipants is the size of the campaigns whose sending rates
// docs/benchmarks.md reports; BENCH_CAMPAIGN_CONTACTS sets another (a
// quick check of the benchmark itself).
func benchParticipants(b *testing.B) int {
	if v := os.Getenv("BENCH_CAMPAIGN_CONTACTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("BENCH_CAMPAIGN_CONTACTS=%q: want a positive number", v)
		}
		return n
	}
	return 100_000
}

// BenchmarkCampaignSend processes one email step for 100,000 participants
// against the fake provider (mailertest), twice to the same contacts,
// and reports both rates in emails per second and the second's share of
// the first's:
//
//   - first: the book's first campaign, statistics taken once its
//     participants were enrolled;
//
//   - second: a second campaign, enrolled after ANALYZE saw every
//     participant of the first completed and none active, as
//     autovacuum leaves a production database after a campaign. The
//     planner then believes no participant is active and the new step
//     has no completions, the case every statement of the send path
//     must survive (docs/send-path-plans.md); the goal is at least 90 %
//     of the first's rate.
//
// Each iteration is a fresh pair of campaigns over the same contacts; the
// setup (contacts, participants, ANALYZE) is not timed.
//
// CAMPAIGN_BENCH_SMTP sends through SMTP instead of SendGrid: "local" to
// the test SMTP server in this process (STARTTLS and AUTH, as a relay),
// or host:port to an SMTP sink outside (plain, without AUTH, the sink of
// a side-by-side run).
//
//	go test -run '^$' -bench BenchmarkCampaignSend -benchtime 1x ./internal/campaigns/
func BenchmarkCampaignSend(b *testing.B) {
	participants := benchParticipants(b)
	mail := mailertest.NewServer(b)
	vars := map[string]string{"MAILER_BASE_URL": mail.URL, "DB_MAX_CONNS": "16", "LOG_LEVEL": "info"}
	settings := map[string]any{
		"sender_name": "Acme", "sender_email": "news@acme.example", "company_name": "Acme Inc.",
		"address_line1": "1 Main St", "city": "Springfield", "postal_code": "62701", "country": "USA",
		"mailer_api_key": "SG.bench",
	}
	// received counts what the provider got since reset.
	received := mail.RecipientCount
	reset := mail.Reset
	switch target := os.Getenv("CAMPAIGN_BENCH_SMTP"); target {
	case "":
	case "local":
		relay := mailertest.NewSMTPServer(b, mailertest.SMTPOptions{Username: "bench", Password: "bench-secret"})
		ca := b.TempDir() + "/ca.pem"
		if err := os.WriteFile(ca, relay.Cert.CAPEM, 0o600); err != nil {
			b.Fatal(err)
		}
		vars["MAIL_CA_FILE"] = ca
		delete(settings, "mailer_api_key")
		settings["provider"], settings["smtp_host"], settings["smtp_port"] = "smtp", relay.Host, relay.Port
		settings["smtp_username"], settings["smtp_password"], settings["smtp_max_connections"] = "bench", "bench-secret", 20
		base := 0
		received = func() int { return relay.MessageCount() - base }
		reset = func() { base = relay.MessageCount() }
	default:
		host, port, ok := strings.Cut(target, ":")
		portNum, err := strconv.Atoi(port)
		if !ok || err != nil {
			b.Fatalf("CAMPAIGN_BENCH_SMTP=%q: want local or host:port", target)
		}
		vars["MAIL_ALLOW_INSECURE"] = "true"
		delete(settings, "mailer_api_key")
		settings["provider"], settings["smtp_host"], settings["smtp_port"] = "smtp", host, portNum
		settings["smtp_security"], settings["smtp_max_connections"] = "none", 20
		received = nil // the sink counts for itself
	}
	env := apptest.Setup(b, apptest.Options{Bare: true, Env: vars}).Env
	owner := env.Signup("bench")
	owner.SetAddon("active")
	book := owner.CreateBook("Bench")
	ob := owner.InBook(book)
	ob.Put("/api/campaign-settings", settings).Expect(http.StatusOK)
	tpl := ob.Post("/api/campaign-templates", map[string]any{
		"name": "News", "subject": "News for {{first_name | default: \"you\"}}",
		"body_html": "<h1>Hello {{first_name}}</h1><p>Dear {{full_name}} of {{company}}, here is this month's news.</p>" +
			"<p><a href=\"{{unsubscribe_url}}\">Unsubscribe</a></p>",
	}).Expect(http.StatusOK).String("data.id")

	ctx := context.Background()
	pool := env.App.Pool
	// Raw SQL on purpose: the benchmark measures the send, and seeding its
	// participants through the API would take longer than the run itself.
	if _, err := pool.Exec(ctx, `
		INSERT INTO contacts (book_id, first_name, last_name, company, emails)
		SELECT $1, 'c' || g, 'Bench', 'Acme', jsonb_build_array(jsonb_build_object('address', 'c' || g || '@example.com', 'label', 'work', 'primary', true))
		FROM generate_series(1, $2) g`, book, participants); err != nil {
		b.Fatal(err)
	}

	newCampaign := func() string {
		cid := ob.Post("/api/campaigns", map[string]any{"name": "Bench"}).Expect(http.StatusOK).String("data.id")
		ob.Post("/api/campaigns/"+cid+"/steps", map[string]any{
			"step_type": "email", "name": "News", "schedule_type": "immediate", "email_template_id": tpl,
		}).Expect(http.StatusOK)
		ob.Patch("/api/campaigns/"+cid, map[string]any{"status": "active"}).Expect(http.StatusOK)
		// One statement for every participant, as with the contacts above.
		if _, err := pool.Exec(ctx, `
			INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at)
			SELECT $1, id, $2 FROM contacts WHERE book_id = $3`, cid, env.Clock.Now(), book); err != nil {
			b.Fatal(err)
		}
		return cid
	}
	analyze := func() {
		if _, err := pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
			b.Fatal(err)
		}
	}
	// send processes the campaign and reports its figures under name.
	send := func(name, cid string) float64 {
		reset()
		b.StartTimer()
		dbBefore := backendCPU(b, env)
		goBefore := processCPU()
		start := time.Now()
		res, err := env.App.CampaignRunner.ProcessCampaign(ctx, uuid.MustParse(cid))
		elapsed := time.Since(start)
		goCPU := processCPU() - goBefore
		dbCPU := backendCPU(b, env) - dbBefore
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		got := res.Sent
		if received != nil {
			got = received()
		}
		if res.Sent != participants || got != participants {
			b.Fatalf("%s: sent %d, provider received %d, want %d (%+v)", name, res.Sent, got, participants, res)
		}
		rate := float64(res.Sent) / elapsed.Seconds()
		b.ReportMetric(rate, name+"-emails/s")
		b.ReportMetric(elapsed.Seconds(), name+"-s")
		// CPU spent, independent of what else the machine runs: the Go
		// process (service and fake provider) and the database backends
		// serving it (autovacuum of the new rows comes on top).
		b.ReportMetric(goCPU.Seconds(), name+"-go-cpu-s")
		b.ReportMetric(dbCPU.Seconds(), name+"-db-cpu-s")
		return rate
	}

	b.ResetTimer()
	b.StopTimer()
	for range b.N {
		cid := newCampaign()
		analyze()
		first := send("first", cid)
		// Statistics count the first campaign's participants, every one
		// completed, and none of the second's: analysed before they exist.
		analyze()
		second := send("second", newCampaign())
		b.ReportMetric(100*second/first, "second/first-%")
	}
}

// processCPU is the CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendCPU is the CPU time the client backends of the test database have
// used (Linux /proc; 0 where that cannot be read).
func backendCPU(b *testing.B, env *apptest.Env) time.Duration {
	rows, err := env.App.Pool.Query(context.Background(), `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`)
	if err != nil {
		b.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		b.Fatal(err)
	}
	var ticks int64
	for _, pid := range pids {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command name (which may hold spaces): utime and
		// stime are the 12th and 13th.
		f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			ticks += u + s
		}
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}
