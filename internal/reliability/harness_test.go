//go:build reliability

package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/apptest/logbuf"
	"github.com/contactbook/contactbook/internal/postgres"
)

// binary is the contactbook executable built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "contactbook-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "contactbook")
	build := exec.Command("go", "build", "-o", binary, "github.com/contactbook/contactbook/cmd/contactbook")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const jwtSecret = "reliability-secret-0123456789abcdef"

// report logs a figure and appends it to the RELIABILITY_REPORT file.
func report(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	path := os.Getenv("RELIABILITY_REPORT")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("report: %v", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s: %s\n", time.Now().UTC().Format(time.RFC3339), t.Name(), line)
}

// instance is one running `contactbook serve`.
type instance struct {
	name string
	cmd  *exec.Cmd
	base string
	// metrics is the base URL of the instance's metrics listener.
	metrics string
	logs    *logbuf.Buffer
	done    chan struct{}
}

// start runs the binary on dbURL with the suite's settings plus extra
// (KEY=VALUE), waits for /readyz and kills it when the test ends.
func start(t *testing.T, name, dbURL, mailerURL string, extra ...string) *instance {
	t.Helper()
	return startAt(t, name, apptest.FreeAddr(t), dbURL, mailerURL, extra...)
}

// startAt is start on a given address (an instance restarted behind a
// load balancer comes back where it was).
func startAt(t *testing.T, name, addr, dbURL, mailerURL string, extra ...string) *instance {
	t.Helper()
	metricsAddr := apptest.FreeAddr(t)
	cmd := exec.Command(binary, "serve")
	cmd.Env = append(os.Environ(),
		"DATABASE_URL="+dbURL, "HTTP_ADDR="+addr, "JWT_SECRET="+jwtSecret,
		"WEBHOOK_ALLOW_INSECURE=true", "MAILER_BASE_URL="+mailerURL, "PASSWORD_HASH_COST=4",
		"LOG_LEVEL=warn", "LOG_FORMAT=text", "CAMPAIGN_SCHEDULE=0 0 1 1 *", "AUTO_MIGRATE=false",
		"IMAGES_DIR="+t.TempDir(), "PUBLIC_BASE_URL=http://"+addr, "METRICS_ADDR="+metricsAddr,
		// The scenarios drive one key far past a client's per-minute limit
		// on purpose (load, restarts); the limit has tests of its own.
		"API_KEY_RATE_LIMIT=0")
	cmd.Env = append(cmd.Env, extra...)
	in := &instance{name: name, cmd: cmd, base: "http://" + addr, metrics: "http://" + metricsAddr, logs: &logbuf.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = in.logs, in.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(in.done) }()
	t.Cleanup(func() {
		in.kill()
		if t.Failed() {
			t.Logf("logs of %s:\n%s", in.name, in.logs.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(in.base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return in
			}
		}
		select {
		case <-in.done:
			t.Fatalf("%s exited during start:\n%s", name, in.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after 20 s:\n%s", name, in.logs.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (in *instance) kill() {
	_ = in.cmd.Process.Signal(syscall.SIGKILL)
	<-in.done
}

// alive reports whether the process is still running.
func (in *instance) alive() bool {
	select {
	case <-in.done:
		return false
	default:
		return true
	}
}

// httpClient is shared by every scenario; generous connection reuse for load.
var httpClient = &http.Client{
	Timeout: 30 * time.Second,
	Transport: &http.Transport{
		MaxIdleConns: 200, MaxIdleConnsPerHost: 200, IdleConnTimeout: 30 * time.Second,
	},
}

// caller is a credential (JWT or API key) against one instance, optionally in a book.
type caller struct {
	base  string
	token string
	book  string
}

func (c caller) inBook(book string) caller { c.book = book; return c }

// response is one answer: status, raw body and its JSON (nil if not JSON).
type response struct {
	status int
	body   []byte
	json   map[string]any
	ctype  string
}

// rawBody is a request body sent as is, with its content type.
type rawBody struct {
	contentType string
	data        []byte
}

// raw is an apptest body (a multipart form) as a rawBody.
func raw(r apptest.Raw) rawBody { return rawBody{contentType: r.ContentType, data: r.Body} }

// do sends one request; body nil sends none, a rawBody goes as is,
// anything else as JSON.
func (c caller) do(method, path string, body any) (*response, error) {
	var rd io.Reader
	contentType := ""
	switch b := body.(type) {
	case nil:
	case rawBody:
		rd, contentType = bytes.NewReader(b.data), b.contentType
	default:
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd, contentType = bytes.NewReader(data), "application/json"
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.book != "" {
		req.Header.Set("X-Book-ID", c.book)
	}
	res, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	r := &response{status: res.StatusCode, body: b, ctype: res.Header.Get("Content-Type")}
	if strings.HasPrefix(r.ctype, "application/json") {
		var m map[string]any
		if json.Unmarshal(b, &m) == nil {
			r.json = m
		}
	}
	return r, nil
}

// must sends a request and fails the test unless the status is want.
func (c caller) must(t *testing.T, want int, method, path string, body any) *response {
	t.Helper()
	r, err := c.do(method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if r.status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, r.status, r.body, want)
	}
	return r
}

// str reads a dotted path ("data.id") of the JSON answer as a string.
func (r *response) str(path string) string {
	v := r.get(path)
	s, _ := v.(string)
	return s
}

func (r *response) num(path string) int {
	f, _ := r.get(path).(float64)
	return int(f)
}

func (r *response) get(path string) any {
	var cur any = r.json
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// team is a signed-up owner with a team, a book and an API key.
type team struct {
	owner  caller // owner's JWT, /api
	key    caller // API key, /api/v1
	teamID string
	userID string
	email  string
	book   string
}

var uniq struct {
	sync.Mutex
	n int
}

func unique(prefix string) string {
	uniq.Lock()
	defer uniq.Unlock()
	uniq.n++
	return fmt.Sprintf("%s%d-%d", prefix, time.Now().UnixNano()%1e9, uniq.n)
}

// signup creates an owner, their team, a book and an API key.
func signup(t *testing.T, base, name string) *team {
	t.Helper()
	email := unique(strings.ToLower(name)) + "@example.com"
	anon := caller{base: base}
	r := anon.must(t, http.StatusCreated, "POST", "/api/auth/signup", map[string]string{
		"email": email, "password": "correct horse battery", "name": name, "team_name": name + " team",
	})
	tm := &team{owner: caller{base: base, token: r.str("data.token")}, teamID: r.str("data.team.id"), userID: r.str("data.user.id"), email: email}
	tm.book = tm.owner.must(t, http.StatusCreated, "POST", "/api/books", map[string]any{"team_id": tm.teamID, "name": name + " book"}).str("data.id")
	key := tm.owner.must(t, http.StatusCreated, "POST", "/api/teams/"+tm.teamID+"/api-keys", map[string]string{"name": "reliability"}).str("data.key")
	tm.key = caller{base: base, token: key, book: tm.book}
	tm.owner = tm.owner.inBook(tm.book)
	return tm
}

// dbPool opens a small pool on the test database for assertions.
func dbPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	return pgtest.Setup(t, pgtest.On(url), pgtest.MaxConns(4)).Pool
}

func queryInt(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// waitFor polls cond every 50 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
