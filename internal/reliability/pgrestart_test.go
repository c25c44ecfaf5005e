//go:build reliability

package reliability

import (
	"bufio"
	"bytes"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// goroutines reads go_goroutines from the instance's /metrics.
func goroutines(t *testing.T, in *instance) int {
	t.Helper()
	res, err := httpClient.Get(in.metrics + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	t.Fatal("no go_goroutines in /metrics")
	return 0
}

// steadyGoroutines waits until the instance's goroutine count has held for
// two seconds (at most 20 s) and returns it. An instance just started is
// still growing: the job queue's elected leader starts its maintenance
// services (cleaner, rescuer, scheduler, periodic enqueuer, reindexer)
// staggered over its first seconds, a fixed set that is no leak.
func steadyGoroutines(t *testing.T, in *instance) int {
	t.Helper()
	n, since := goroutines(t, in), time.Now()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		if m := goroutines(t, in); m != n {
			n, since = m, time.Now()
		} else if time.Since(since) >= 2*time.Second {
			break
		}
	}
	return n
}

// pgCluster returns the version of the one system cluster serving
// 127.0.0.1:5432, or skips the test when the suite's server is another one.
func pgCluster(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(pgtest.ServerURL())
	if err != nil || u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" || (u.Port() != "" && u.Port() != "5432") {
		t.Skipf("DATABASE_URL does not point at the system PostgreSQL on 127.0.0.1:5432 (%s); not restarting someone else's server", u.Host)
	}
	entries, err := os.ReadDir("/etc/postgresql")
	if err != nil || len(entries) != 1 {
		t.Skipf("cannot tell the system cluster's version from /etc/postgresql (%v, %d entries)", err, len(entries))
	}
	if _, err := exec.LookPath("pg_ctlcluster"); err != nil {
		t.Skip("pg_ctlcluster not installed")
	}
	return entries[0].Name()
}

func pgctl(t *testing.T, version, action string) {
	t.Helper()
	out, err := exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", version, "main", action).CombinedOutput()
	if err != nil {
		t.Fatalf("pg_ctlcluster %s %s: %v\n%s", version, action, err, out)
	}
}

// TestPostgresRestart stops and starts PostgreSQL while 10 clients send
// requests: every answer during the outage must be a JSON error envelope
// with status 500 or 503, the process must stay up and recover on its
// own, and goroutines must not pile up.
func TestPostgresRestart(t *testing.T) {
	version := pgCluster(t)
	dbURL := pgtest.Setup(t).URL
	in := start(t, "pg", dbURL, "http://127.0.0.1:9")
	pid := in.cmd.Process.Pid
	tm := signup(t, in.base, "Restart")
	contact := tm.key.must(t, http.StatusCreated, "POST", "/api/v1/contacts", map[string]any{"first_name": "Stay"}).str("data.id")
	for range 50 { // warm the pool and the HTTP server
		tm.key.must(t, http.StatusOK, "GET", "/api/v1/contacts/"+contact, nil)
	}
	before := steadyGoroutines(t, in)

	var (
		ok, errs5xx  atomic.Int64
		mu           sync.Mutex
		bad          []string
		lastFail     atomic.Int64 // unix nanos of the last non-2xx answer
		stopping     atomic.Bool
		wg           sync.WaitGroup
		statusesSeen sync.Map
	)
	fail := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if len(bad) < 20 {
			bad = append(bad, s)
		}
	}
	for c := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stopping.Load() {
				var r *response
				var err error
				if c%2 == 0 {
					r, err = tm.key.do("GET", "/api/v1/contacts/"+contact, nil)
				} else {
					r, err = tm.key.do("POST", "/api/v1/contacts", map[string]any{"first_name": "During"})
				}
				switch {
				case err != nil:
					fail("transport error: " + err.Error())
				case r.json == nil:
					fail("status " + strconv.Itoa(r.status) + " with a non-JSON body: " + string(r.body))
				case r.status == http.StatusOK || r.status == http.StatusCreated:
					if r.str("data.id") == "" {
						fail("2xx without data.id: " + string(r.body))
					}
					ok.Add(1)
				case r.status == http.StatusInternalServerError || r.status == http.StatusServiceUnavailable:
					if r.str("error.code") == "" || r.str("error.message") == "" {
						fail("error answer without the envelope: " + string(r.body))
					}
					statusesSeen.Store(r.status, true)
					errs5xx.Add(1)
					lastFail.Store(time.Now().UnixNano())
				default:
					fail("unexpected status " + strconv.Itoa(r.status) + ": " + string(r.body))
					lastFail.Store(time.Now().UnixNano())
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	time.Sleep(2 * time.Second)
	down := time.Now()
	pgctl(t, version, "stop")
	time.Sleep(3 * time.Second) // a real outage, not just a blip
	pgctl(t, version, "start")
	up := time.Now()
	var readyAgain time.Duration
	for {
		res, err := httpClient.Get(in.base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				readyAgain = time.Since(up)
				break
			}
		}
		if time.Since(up) > 15*time.Second {
			t.Fatal("/readyz not 200 within 15 s after PostgreSQL came back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(5 * time.Second) // requests keep flowing after the recovery
	stopping.Store(true)
	wg.Wait()

	if !in.alive() || in.cmd.Process.Pid != pid {
		t.Fatal("the process died during the outage")
	}
	var recovered time.Duration
	if lf := lastFail.Load(); lf != 0 {
		recovered = max(time.Unix(0, lf).Sub(up), 0)
		if recovered > 15*time.Second {
			t.Errorf("requests still failed %s after PostgreSQL was back", recovered)
		}
	}
	// Requests succeed again.
	tm.key.must(t, http.StatusOK, "GET", "/api/v1/contacts/"+contact, nil)
	tm.key.must(t, http.StatusCreated, "POST", "/api/v1/contacts", map[string]any{"first_name": "After"})
	mu.Lock()
	for _, b := range bad {
		t.Error(b)
	}
	mu.Unlock()
	if errs5xx.Load() == 0 {
		t.Error("no request failed during the outage; the restart did not happen as planned")
	}
	// Goroutines settle back (idle HTTP connections closed first).
	httpClient.CloseIdleConnections()
	var after int
	deadline := time.Now().Add(15 * time.Second)
	for {
		after = goroutines(t, in)
		if after <= before+10 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if after > before+10 {
		t.Errorf("goroutines: %d before, %d after the outage", before, after)
	}
	var seen bytes.Buffer
	statusesSeen.Range(func(k, _ any) bool { seen.WriteString(strconv.Itoa(k.(int)) + " "); return true })
	mu.Lock()
	badAnswers := len(bad)
	mu.Unlock()
	report(t, "postgres restart (stop, 3 s, start): %d requests ok, %d clean 5xx envelopes (statuses %s), %d bad answers; "+
		"/readyz 200 %s after PostgreSQL was back; last failed request %s after it (0 = none failed once it was back); outage %s; "+
		"same PID; goroutines %d before, %d after",
		ok.Load(), errs5xx.Load(), strings.TrimSpace(seen.String()), badAnswers,
		readyAgain.Round(10*time.Millisecond), recovered.Round(10*time.Millisecond), up.Sub(down).Round(100*time.Millisecond), before, after)
}
