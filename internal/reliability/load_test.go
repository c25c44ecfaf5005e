//go:build reliability

package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// TestLoadMixed runs 50 concurrent clients for RELIABILITY_LOAD_SECONDS
// (default 20) mixing reads and writes on one book of 5,000 contacts: no
// answer may be a 5xx (or a transport error); throughput and latency
// percentiles are reported.
func TestLoadMixed(t *testing.T) {
	const clients, seed = 50, 5000
	seconds := 20
	if v := os.Getenv("RELIABILITY_LOAD_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("RELIABILITY_LOAD_SECONDS=%q is not a positive number of seconds", v)
		}
		seconds = n
	}
	ctx := context.Background()
	dbURL := pgtest.Setup(t).URL
	pool := dbPool(t, dbURL)
	in := start(t, "load", dbURL, "http://127.0.0.1:9")
	tm := signup(t, in.base, "Load")
	label := tm.owner.must(t, http.StatusCreated, "POST", "/api/books/"+tm.book+"/labels", map[string]any{"name": "Hot"}).str("data.id")
	// The seed is one statement: the load under test is what follows.
	if _, err := pool.Exec(ctx, `
		INSERT INTO contacts (book_id, first_name, last_name, company, emails)
		SELECT $1, 'seed' || g, 'Load', 'Acme', jsonb_build_array(jsonb_build_object('address', 'seed' || g || '@example.com', 'label', 'work', 'primary', true))
		FROM generate_series(1, $2) AS g`, tm.book, seed); err != nil {
		t.Fatal(err)
	}
	rows, _ := pool.Query(ctx, `SELECT id::text FROM contacts WHERE book_id = $1`, tm.book)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}

	type op struct {
		name string
		run  func(r *rand.Rand) (*response, error)
	}
	key := tm.key
	ops := []op{
		{"get", func(r *rand.Rand) (*response, error) {
			return key.do("GET", "/api/v1/contacts/"+ids[r.IntN(len(ids))], nil)
		}},
		{"list", func(r *rand.Rand) (*response, error) {
			return key.do("GET", fmt.Sprintf("/api/v1/contacts?limit=50&page=%d&sort=name", 1+r.IntN(20)), nil)
		}},
		{"search", func(r *rand.Rand) (*response, error) {
			return key.do("GET", fmt.Sprintf("/api/v1/contacts?q=seed%d", r.IntN(seed)), nil)
		}},
		{"create", func(r *rand.Rand) (*response, error) {
			return key.do("POST", "/api/v1/contacts", map[string]any{"first_name": "New", "last_name": strconv.Itoa(r.IntN(1e6)), "company": "Load Co"})
		}},
		{"patch", func(r *rand.Rand) (*response, error) {
			return key.do("PATCH", "/api/v1/contacts/"+ids[r.IntN(len(ids))], map[string]any{"job_title": "Title " + strconv.Itoa(r.IntN(1000))})
		}},
		{"bulk-add-label", func(r *rand.Rand) (*response, error) {
			s := r.IntN(len(ids) - 100)
			return key.do("POST", "/api/v1/contacts/bulk-add-label", map[string]any{"contact_ids": ids[s : s+100], "label_id": label})
		}},
	}
	// Weights: reads dominate, as in real use.
	weights := []int{35, 20, 10, 15, 15, 5}
	pick := func(r *rand.Rand) int {
		n := r.IntN(100)
		for i, w := range weights {
			if n < w {
				return i
			}
			n -= w
		}
		return 0
	}

	type sample struct {
		op     int
		status int
		d      time.Duration
		err    error
	}
	var (
		mu      sync.Mutex
		samples []sample
	)
	stop := time.Now().Add(time.Duration(seconds) * time.Second)
	began := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 42))
			var local []sample
			for time.Now().Before(stop) {
				i := pick(r)
				t0 := time.Now()
				res, err := ops[i].run(r)
				s := sample{op: i, d: time.Since(t0), err: err}
				if res != nil {
					s.status = res.status
				}
				local = append(local, s)
			}
			mu.Lock()
			samples = append(samples, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)

	var fivexx, transport, other int
	all := make([]time.Duration, 0, len(samples))
	perOp := make([][]time.Duration, len(ops))
	for _, s := range samples {
		all = append(all, s.d)
		perOp[s.op] = append(perOp[s.op], s.d)
		switch {
		case s.err != nil:
			transport++
			if transport <= 3 {
				t.Errorf("%s: %v", ops[s.op].name, s.err)
			}
		case s.status >= 500:
			fivexx++
		case s.status >= 300:
			other++
		}
	}
	pct := func(d []time.Duration, p float64) time.Duration {
		if len(d) == 0 {
			return 0
		}
		slices.Sort(d)
		return d[int(float64(len(d)-1)*p)]
	}
	if fivexx != 0 || transport != 0 {
		t.Errorf("%d answers were 5xx and %d requests failed in transport, want 0", fivexx, transport)
	}
	if other != 0 {
		t.Errorf("%d answers were neither 2xx nor 5xx; every operation here is valid", other)
	}
	report(t, "load: %d clients for %s: %d requests, %.0f req/s, p50 %s, p99 %s, %d 5xx, %d transport errors",
		clients, elapsed.Round(time.Second), len(samples), float64(len(samples))/elapsed.Seconds(),
		pct(all, 0.5).Round(100*time.Microsecond), pct(all, 0.99).Round(100*time.Microsecond), fivexx, transport)
	for i, o := range ops {
		report(t, "load: %-15s %6d requests, p50 %s, p99 %s", o.name, len(perOp[i]),
			pct(perOp[i], 0.5).Round(100*time.Microsecond), pct(perOp[i], 0.99).Round(100*time.Microsecond))
	}
}
