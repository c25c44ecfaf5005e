package accountmail

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/contactbook/contactbook/internal/apptest/logbuf"
	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
	"github.com/contactbook/contactbook/migrations"
)

func TestBackoff(t *testing.T) {
	t.Parallel()
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 30 * time.Minute, 30 * time.Minute}
	for i, w := range want {
		if got := backoff(i + 1); got != w {
			t.Errorf("backoff(%d) = %s, want %s", i+1, got, w)
		}
	}
}

func TestComposerLinks(t *testing.T) {
	t.Parallel()
	c := NewComposer("https://cb.example.com/", nil)
	if got := c.link("/app/reset-password", "a+b/c"); got != "https://cb.example.com/app/reset-password?token=a%2Bb%2Fc" {
		t.Fatalf("link %q", got)
	}
}

// instance is one instance of the service as far as account emails go: a
// job queue with the account email worker. Without run it only enqueues.
type instance struct {
	queue *jobs.Queue
	comp  *Composer
}

func newInstance(t *testing.T, pool *pgxpool.Pool, mail *mailertest.Server, log *logbuf.Buffer, run bool) instance {
	t.Helper()
	q, err := jobs.New(pool, jobs.Config{PollInterval: 100 * time.Millisecond, WithoutPeriodic: true})
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorker(WorkerDeps{DB: postgres.Wrap(pool), Queue: q.Client(), Sender: Sender{Client: mailer.NewSender(mail.URL, nil), APIKey: "SG.k", FromEmail: "accounts@cb.example.com", FromName: "CB"},
		Log: slog.New(slog.NewTextHandler(log, nil))})
	if err := q.Add(w); err != nil {
		t.Fatal(err)
	}
	if run {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- q.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	return instance{queue: q, comp: NewComposer("https://cb.example.com", q.Client())}
}

func queueReset(t *testing.T, pool postgres.Pool, comp *Composer, to string) {
	t.Helper()
	now := time.Now()
	err := postgres.InTx(context.Background(), pool, func(tx *postgres.Tx) error {
		return comp.QueuePasswordReset(context.Background(), tx, now, PasswordReset{To: to, Name: "Ann", Token: "tok_" + to, ExpiresAt: now.Add(time.Hour)})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, pool postgres.Pool, sql string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitFor polls sql until it counts want rows.
func waitFor(t *testing.T, pool postgres.Pool, sql string, want int, log *logbuf.Buffer) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		n := count(t, pool, sql)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %d, want %d; log:\n%s", sql, n, want, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// duplicateSendArgs is SendArgs without its uniqueness.
type duplicateSendArgs struct {
	EmailID uuid.UUID `json:"email_id"`
}

func (duplicateSendArgs) Kind() string { return SendArgs{}.Kind() }

const unfinishedJobs = `SELECT count(*) FROM river_job WHERE kind = 'account_email' AND finalized_at IS NULL`

// Two instances work one queue: every email is sent once, even one that
// got two jobs (the stamp on its row, not the job, decides).
func TestTwoInstancesSendEachEmailOnce(t *testing.T) {
	t.Parallel()
	pool := pgtest.Setup(t).Pool
	mail := mailertest.NewServer(t)
	var log logbuf.Buffer
	// Queued while no instance works: both start on a full queue.
	producer := newInstance(t, pool, mail, &log, false)
	for i := range 30 {
		queueReset(t, pool, producer.comp, strings.Repeat("a", i+1)+"@example.com")
	}
	// A second job for one email, as if it had been queued twice: the two
	// may run at once on the two instances.
	var args duplicateSendArgs
	if err := pool.QueryRow(context.Background(), `SELECT id FROM account_emails ORDER BY created_at LIMIT 1`).Scan(&args.EmailID); err != nil {
		t.Fatal(err)
	}
	if _, err := producer.queue.Client().Insert(context.Background(), args, nil); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, unfinishedJobs); n != 31 {
		t.Fatalf("%d jobs queued, want 31", n)
	}
	newInstance(t, pool, mail, &log, true)
	newInstance(t, pool, mail, &log, true)
	waitFor(t, pool, unfinishedJobs, 0, &log)
	if n := mail.RecipientCount(); n != 30 {
		t.Fatalf("sent %d, want 30; log:\n%s", n, log.String())
	}
	seen := map[string]bool{}
	for _, r := range mail.Recipients() {
		if seen[r.Email] {
			t.Fatalf("%s got two emails", r.Email)
		}
		seen[r.Email] = true
		if r.Subject == "" || !strings.Contains(r.Text(), "https://cb.example.com/app/reset-password?token=tok_") ||
			!strings.Contains(r.HTML(), "https://cb.example.com/app/reset-password?token=tok_") {
			t.Fatalf("email: %+v", r)
		}
	}
	if n := count(t, pool, `SELECT count(*) FROM account_emails`); n != 0 {
		t.Fatalf("%d rows left", n)
	}
}

// A permanent provider error gives up at once: the job is cancelled and
// the row, which holds a live token, goes.
func TestPermanentFailure(t *testing.T) {
	t.Parallel()
	pool := pgtest.Setup(t).Pool
	mail := mailertest.NewServer(t)
	var log logbuf.Buffer
	mail.FailNext(http.StatusBadRequest, `{"errors":[{"message":"bad sender"}]}`, 1)
	inst := newInstance(t, pool, mail, &log, true)
	queueReset(t, pool, inst.comp, "ann@example.com")
	waitFor(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'account_email' AND state = 'cancelled' AND errors::text LIKE '%bad sender%'`, 1, &log)
	if n := count(t, pool, `SELECT count(*) FROM account_emails`); n != 0 {
		t.Fatalf("%d rows left", n)
	}
	if n := mail.RequestCount(); n != 1 {
		t.Fatalf("requests = %d: a permanent failure was retried", n)
	}
}

// A transient provider error leaves the email for a retry after the
// backoff; the retry sends it.
func TestTransientFailureRetried(t *testing.T) {
	t.Parallel()
	pool := pgtest.Setup(t).Pool
	mail := mailertest.NewServer(t)
	var log logbuf.Buffer
	mail.FailNext(http.StatusServiceUnavailable, `{"errors":[{"message":"try later"}]}`, 1)
	inst := newInstance(t, pool, mail, &log, true)
	queueReset(t, pool, inst.comp, "ann@example.com")
	waitFor(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'account_email' AND state = 'retryable' AND attempt = 1
		AND scheduled_at > now() + interval '20 seconds' AND scheduled_at < now() + interval '31 seconds'`, 1, &log)
	if n := count(t, pool, `SELECT count(*) FROM account_emails WHERE sending_at IS NULL`); n != 1 {
		t.Fatalf("%d rows ready for a retry, want 1", n)
	}
	var jobID int64
	if err := pool.QueryRow(context.Background(), `SELECT id FROM river_job WHERE kind = 'account_email'`).Scan(&jobID); err != nil {
		t.Fatal(err)
	}
	// The backoff has passed.
	if _, err := inst.queue.Client().JobRetry(context.Background(), jobID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'account_email' AND state = 'completed' AND attempt = 2`, 1, &log)
	if n := mail.RecipientCount(); n != 1 {
		t.Fatalf("sent %d, want 1", n)
	}
}

// An instance dies holding two account email jobs: it had handed the
// first email to the provider (stamped) and not reached the second. River
// rescues both jobs on a live instance once their rescue delay has
// passed; the first is not sent again, the second is sent.
func TestCrashMidSendIsNotSentAgain(t *testing.T) {
	t.Parallel()
	pool := pgtest.Setup(t).Pool
	mail := mailertest.NewServer(t)
	var log logbuf.Buffer
	producer := newInstance(t, pool, mail, &log, false)
	queueReset(t, pool, producer.comp, "sent@example.com")
	queueReset(t, pool, producer.comp, "unsent@example.com")
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `UPDATE account_emails SET sending_at = now() WHERE to_email = 'sent@example.com'`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() - interval '1 hour', attempted_by = '{dead_instance}'
		WHERE kind = 'account_email'`); err != nil {
		t.Fatal(err)
	}
	survivor := newInstance(t, pool, mail, &log, true)
	// The rescue makes them retryable after the first backoff; let that
	// pass.
	waitFor(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'account_email' AND state = 'retryable'`, 2, &log)
	rows, err := pool.Query(ctx, `SELECT id FROM river_job WHERE kind = 'account_email'`)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := survivor.queue.Client().JobRetry(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, pool, unfinishedJobs, 0, &log)
	if n := mail.RecipientCount(); n != 1 || mail.Recipients()[0].Email != "unsent@example.com" {
		t.Fatalf("sent %v, want only the unstamped email", mail.Recipients())
	}
	if n := count(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'account_email' AND state = 'cancelled' AND errors::text LIKE '%not sent again%'`); n != 1 {
		t.Fatalf("%d cancelled jobs, want 1; log:\n%s", n, log.String())
	}
	if n := count(t, pool, `SELECT count(*) FROM account_emails`); n != 0 {
		t.Fatalf("%d rows left", n)
	}
}

// Emails queued before account emails were jobs have a row and no job:
// the requeue gives each one job (one per email, however often it runs),
// and they are sent.
func TestRequeueSendsEmailsWithoutAJob(t *testing.T) {
	t.Parallel()
	pool := pgtest.Setup(t).Pool
	mail := mailertest.NewServer(t)
	var log logbuf.Buffer
	for _, to := range []string{"old1@example.com", "old2@example.com"} {
		if _, err := insert(context.Background(), pool, time.Now(), Message{Kind: KindPasswordReset, To: to, Subject: "Reset", HTML: "<p>x</p>", Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	producer := newInstance(t, pool, mail, &log, false)
	queueReset(t, pool, producer.comp, "new@example.com")
	w := NewWorker(WorkerDeps{DB: postgres.Wrap(pool), Queue: producer.queue.Client()})
	for range 2 {
		if err := w.requeue(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, pool, unfinishedJobs); n != 3 {
		t.Fatalf("%d jobs, want one per email (3)", n)
	}
	newInstance(t, pool, mail, &log, true)
	waitFor(t, pool, unfinishedJobs, 0, &log)
	if n := mail.RecipientCount(); n != 3 {
		t.Fatalf("sent %d, want 3", n)
	}
}

// An upgrade keeps the emails the earlier version had queued (rows of
// the old queue, without a job): migration 00030 keeps them, drops the
// ones that had given up, and the requeue, a periodic job that runs when
// the leader starts, sends them at once.
func TestUpgradeSendsEmailsQueuedBefore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	empty := pgtest.Setup(t, pgtest.Empty(), pgtest.MaxConns(4))
	url := empty.URL
	db := stdlib.OpenDBFromPool(empty.Pool)
	defer db.Close()
	before, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := before.UpTo(ctx, 29); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `
		INSERT INTO account_emails (kind, to_email, subject, html, text, link, created_at, next_attempt_at, attempts, last_error, failed_at)
		VALUES ('password_reset', 'queued@example.com', 'Reset', '<p>x</p>', 'x', 'https://cb.example.com/r', now(), now(), 1, 'try later', NULL),
		       ('password_reset', 'gaveup@example.com', 'Reset', '', '', '', now(), now(), 8, 'bad sender', now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Migrate(ctx, url); err != nil {
		t.Fatal(err)
	}
	pool := empty.Pool
	if n := count(t, pool, `SELECT count(*) FROM account_emails WHERE to_email = 'queued@example.com' AND sending_at IS NULL`); n != 1 {
		t.Fatalf("%d queued rows kept, want 1", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM account_emails`); n != 1 {
		t.Fatalf("%d rows after the upgrade, want 1 (the given-up one goes)", n)
	}
	mail := mailertest.NewServer(t)
	q, err := jobs.New(pool, jobs.Config{PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Add(NewWorker(WorkerDeps{DB: postgres.Wrap(pool), Queue: q.Client(), Sender: Sender{Client: mailer.NewSender(mail.URL, nil), APIKey: "SG.k", FromEmail: "a@cb.example.com"}})); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- q.Run(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	var log logbuf.Buffer
	waitFor(t, pool, `SELECT count(*) FROM account_emails`, 0, &log)
	if r := mail.Recipients(); len(r) != 1 || r[0].Email != "queued@example.com" {
		t.Fatalf("sent %v, want the queued email once", r)
	}
}
