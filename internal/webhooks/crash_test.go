package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apptest/logbuf"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// TestWebhookCrashRecovery runs the real binary, kills it with SIGKILL in
// the middle of delivering 1,000 events to a slow receiver, starts it
// again, and checks that every event reached the receiver at least once
// and that the delivery log shows it.
func TestWebhookCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	t.Parallel()
	const total = 1000
	dbURL := pgtest.Setup(t).URL

	// Slow: the burst is still going when the kill comes.
	rc := newDeliveryCounter(t, 25*time.Millisecond)
	distinct := func() int { d, _ := rc.counts(); return d }
	svc := newBinaryService(t, dbURL)
	start := svc.start
	first, base := start()
	defer func() { _ = first.Process.Kill() }()
	_, teamID, _ := signupWithWebhook(t, base, rc.URL+"/hook")

	// Queue the burst through the outbox, in ten transactions.
	pool := pgtest.Setup(t, pgtest.On(dbURL), pgtest.MaxConns(2)).Pool
	team := uuid.MustParse(teamID)
	for range 10 {
		evs := make([]events.Event, total/10)
		for i := range evs {
			book := uuid.New()
			evs[i] = events.Event{Type: events.ContactCreated, TeamID: team, BookID: &book, Data: map[string]string{"id": uuid.NewString()}}
		}
		if err := postgres.InTx(context.Background(), pool, func(tx *postgres.Tx) error {
			_, err := events.Append(context.Background(), tx, time.Now(), evs...)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		// A writer outside the service wakes the dispatchers itself.
		if _, err := pool.Exec(context.Background(), `SELECT pg_notify($1, '')`, webhooks.NotifyChannel); err != nil {
			t.Fatal(err)
		}
	}

	// Kill -9 mid-burst.
	for deadline := time.Now().Add(20 * time.Second); distinct() < 150; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d deliveries before the kill deadline", distinct())
		}
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	killedAt := distinct()
	if killedAt >= total {
		t.Fatalf("the burst was over (%d delivered) before the kill", killedAt)
	}

	second, _ := start()
	defer func() { _ = second.Process.Kill() }()
	for deadline := time.Now().Add(40 * time.Second); distinct() < total; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after the restart %d of %d events were delivered", distinct(), total)
		}
	}

	// Every event's delivery reached the receiver ...
	rows, err := pool.Query(context.Background(), `
		SELECT d.id::text FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.type = $1`, events.ContactCreated)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if rc.times(id) == 0 {
			t.Errorf("delivery %s never reached the receiver", id)
		}
	}
	d, all := rc.counts()
	dupes := all - d
	if len(ids) != total {
		t.Fatalf("%d deliveries of the outbox's events, want %d", len(ids), total)
	}
	// ... and the log shows a successful attempt for each.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var logged, done int
		if err := pool.QueryRow(context.Background(), `
			SELECT (SELECT count(DISTINCT event_id) FROM webhook_attempts WHERE success),
			       (SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded')`).Scan(&logged, &done); err != nil {
			t.Fatal(err)
		}
		if logged == total && done == total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log shows %d events delivered, %d deliveries succeeded; want %d", logged, done, total)
		}
	}
	t.Logf("killed after %d of %d events; %d duplicate deliveries after the restart (at least once)", killedAt, total, dupes)

	// SIGTERM: a clean exit.
	if err := second.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- second.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after SIGTERM: %v, want exit status 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Error("the service did not exit after SIGTERM")
	}
}

// deliveryCounter is a webhook receiver that counts the requests of each
// delivery (X-Service-Delivery), answering 200 after pause.
type deliveryCounter struct {
	*httptest.Server
	mu       sync.Mutex
	received map[string]int
	requests int
}

func newDeliveryCounter(t *testing.T, pause time.Duration) *deliveryCounter {
	c := &deliveryCounter{received: map[string]int{}}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.received[r.Header.Get("X-Service-Delivery")]++
		c.requests++
		c.mu.Unlock()
		time.Sleep(pause)
	}))
	t.Cleanup(c.Close)
	return c
}

// counts is how many deliveries arrived, and how many requests in all.
func (c *deliveryCounter) counts() (distinct, all int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.received), c.requests
}

// times is how many requests delivery made.
func (c *deliveryCounter) times(delivery string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.received[delivery]
}

// signupWithWebhook signs up on the service at base and subscribes url to
// contact.created.
func signupWithWebhook(t *testing.T, base, url string) (token, teamID, webhookID string) {
	t.Helper()
	var signup struct {
		Data struct {
			Token string `json:"token"`
			Team  struct {
				ID string `json:"id"`
			} `json:"team"`
		} `json:"data"`
	}
	postJSON(t, base+"/api/auth/signup", "", map[string]string{
		"email": "crash@example.com", "password": "correct horse battery", "name": "Crash", "team_name": "Crash team",
	}, &signup)
	var hook struct {
		Data struct {
			Webhook struct {
				ID string `json:"id"`
			} `json:"webhook"`
		} `json:"data"`
	}
	postJSON(t, fmt.Sprintf("%s/api/teams/%s/webhooks", base, signup.Data.Team.ID), signup.Data.Token,
		map[string]any{"url": url, "events": []string{events.ContactCreated}}, &hook)
	return signup.Data.Token, signup.Data.Team.ID, hook.Data.Webhook.ID
}

// binaryService runs the built binary on one database, as often as a test
// starts it, and prints its logs when the test fails.
type binaryService struct {
	t     *testing.T
	bin   string
	dbURL string
	env   []string
	logs  logbuf.Buffer
}

func newBinaryService(t *testing.T, dbURL string, env ...string) *binaryService {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "contactbook")
	build := exec.Command("go", "build", "-o", bin, "github.com/contactbook/contactbook/cmd/contactbook")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	s := &binaryService{t: t, bin: bin, dbURL: dbURL, env: env}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("service logs:\n%s", s.logs.String())
		}
	})
	return s
}

// start runs an instance and waits until it answers; it returns the
// process and its base URL.
func (s *binaryService) start() (*exec.Cmd, string) {
	t := s.t
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(s.bin, "serve")
	cmd.Env = append(os.Environ(),
		"DATABASE_URL="+s.dbURL, "HTTP_ADDR="+addr, "JWT_SECRET=crash-test-secret-0123456789",
		"WEBHOOK_ALLOW_INSECURE=true", "AUTO_MIGRATE=false", "LOG_LEVEL=info", "LOG_FORMAT=text",
		"IMAGES_DIR="+t.TempDir(), "DB_MAX_CONNS=8")
	cmd.Env = append(cmd.Env, s.env...)
	cmd.Stdout, cmd.Stderr = &s.logs, &s.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	base := "http://" + addr
	for deadline := time.Now().Add(15 * time.Second); ; {
		if res, err := http.Get(base + "/healthz"); err == nil {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatal("the service did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cmd, base
}

func postJSON(t *testing.T, url, token string, body, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(res.Body)
		t.Fatalf("POST %s: %d %s", url, res.StatusCode, buf.String())
	}
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
}
