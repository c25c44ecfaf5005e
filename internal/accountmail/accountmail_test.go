package accountmail

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
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

// clock is a settable time; the tests move it only between drains.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newWorker(pool postgres.Pool, mail *mailertest.Server, key string, c *clock, log *bytes.Buffer) *Worker {
	return NewWorker(pool, WorkerConfig{
		Sender: Sender{Client: mailer.NewSender(mail.URL, nil), APIKey: key, FromEmail: "accounts@cb.example.com", FromName: "CB"},
		Now:    c.Now,
		Log:    slog.New(slog.NewTextHandler(log, nil)),
	})
}

func queueReset(t *testing.T, pool postgres.Pool, comp *Composer, now time.Time, to string) {
	t.Helper()
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

// Two workers (two instances) drain one queue: every email is sent once.
func TestWorkersShareTheQueue(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	mail := mailertest.NewServer(t)
	c := &clock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	var log1, log2 bytes.Buffer
	w1, w2 := newWorker(pool, mail, "SG.k", c, &log1), newWorker(pool, mail, "SG.k", c, &log2)
	comp := NewComposer("https://cb.example.com", nil)
	for i := 0; i < 30; i++ {
		queueReset(t, pool, comp, c.Now(), strings.Repeat("a", i+1)+"@example.com")
	}
	var wg sync.WaitGroup
	for _, w := range []*Worker{w1, w2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.drain(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := mail.RecipientCount(); n != 30 {
		t.Fatalf("sent %d, want 30", n)
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

// A permanent provider error gives up at once and blanks the token.
func TestPermanentFailure(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	mail := mailertest.NewServer(t)
	c := &clock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	var log bytes.Buffer
	w := newWorker(pool, mail, "SG.k", c, &log)
	queueReset(t, pool, NewComposer("https://cb.example.com", nil), c.Now(), "ann@example.com")
	mail.FailNext(http.StatusBadRequest, `{"errors":[{"message":"bad sender"}]}`, 1)
	if err := w.drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `SELECT count(*) FROM account_emails WHERE failed_at IS NOT NULL AND html = '' AND text = '' AND link = '' AND last_error LIKE '%bad sender%'`); n != 1 {
		t.Fatalf("failed rows = %d; log: %s", n, log.String())
	}
	c.now = c.now.Add(time.Hour)
	if err := w.drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := mail.RequestCount(); n != 1 {
		t.Fatalf("requests = %d: a permanent failure was retried", n)
	}
}

// A crash between claim and send leaves the email to the next worker once
// the lease has run out.
func TestLeaseRunsOut(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	mail := mailertest.NewServer(t)
	c := &clock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	var log bytes.Buffer
	queueReset(t, pool, NewComposer("https://cb.example.com", nil), c.Now(), "ann@example.com")
	if got, err := claim(context.Background(), pool, c.Now(), 10, claimLease); err != nil || len(got) != 1 {
		t.Fatalf("claim: %v %v", got, err)
	}
	// The claiming worker died. Another one does not touch the email while
	// the lease lasts, and sends it after.
	w := newWorker(pool, mail, "SG.k", c, &log)
	if err := w.drain(context.Background()); err != nil || mail.RequestCount() != 0 {
		t.Fatalf("sent during the lease: %v, %d", err, mail.RequestCount())
	}
	c.now = c.now.Add(claimLease)
	if err := w.drain(context.Background()); err != nil || mail.RecipientCount() != 1 {
		t.Fatalf("not sent after the lease: %v, %d", err, mail.RecipientCount())
	}
}
