package idempotency_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/idempotency"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestKeyLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.Setup(t).DB
	clk := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	s := idempotency.New(db, clk.now)
	req := idempotency.Request{APIKeyID: uuid.New(), Key: "order-42", Path: "POST /api/v1/contacts", Hash: "h1"}

	first, err := s.Begin(ctx, req)
	if err != nil || first.State != idempotency.Run {
		t.Fatalf("first Begin = %v, %v; want Run", first.State, err)
	}
	// A second instance with the same request while the first runs.
	if c, err := idempotency.New(db, clk.now).Begin(ctx, req); err != nil || c.State != idempotency.Running {
		t.Fatalf("Begin while running = %v, %v; want Running", c.State, err)
	}
	other := req
	other.Hash = "h2"
	if c, _ := s.Begin(ctx, other); c.State != idempotency.Mismatch {
		t.Fatalf("another body while running = %v; want Mismatch", c.State)
	}
	if err := s.Finish(ctx, req, first, idempotency.Answer{Status: 201, ContentType: "application/json", Body: []byte(`{"data":1}`)}); err != nil {
		t.Fatal(err)
	}
	c, err := s.Begin(ctx, req)
	if err != nil || c.State != idempotency.Replay || c.Answer.Status != 201 || string(c.Answer.Body) != `{"data":1}` ||
		c.Answer.ContentType != "application/json" {
		t.Fatalf("Begin after Finish = %+v, %v; want the stored answer", c, err)
	}
	otherPath := req
	otherPath.Path = "POST /api/v1/segments"
	if c, _ := s.Begin(ctx, otherPath); c.State != idempotency.Mismatch {
		t.Fatalf("another path = %v; want Mismatch", c.State)
	}
	// The same key of another API key is another key.
	mine := req
	mine.APIKeyID = uuid.New()
	if c, _ := s.Begin(ctx, mine); c.State != idempotency.Run {
		t.Fatalf("another API key = %v; want Run", c.State)
	}
	// After 24 hours the key is new again.
	clk.add(idempotency.Kept + time.Second)
	if c, _ := s.Begin(ctx, other); c.State != idempotency.Run {
		t.Fatalf("expired key = %v; want Run", c.State)
	}
}

func TestAbandonFreesTheKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.Setup(t).DB
	clk := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	s := idempotency.New(db, clk.now)
	req := idempotency.Request{APIKeyID: uuid.New(), Key: "k", Path: "POST /api/v1/events", Hash: "h"}
	c, _ := s.Begin(ctx, req)
	if err := s.Abandon(ctx, req, c); err != nil {
		t.Fatal(err)
	}
	again, _ := s.Begin(ctx, req)
	if again.State != idempotency.Run {
		t.Fatalf("after Abandon = %v; want Run", again.State)
	}
	// A holder that died: after Abandoned its key is taken over, and
	// the late answer of the dead holder is not stored over the new one.
	clk.add(idempotency.Abandoned + time.Second)
	taken, _ := s.Begin(ctx, req)
	if taken.State != idempotency.Run {
		t.Fatalf("abandoned key = %v; want Run", taken.State)
	}
	if err := s.Finish(ctx, req, again, idempotency.Answer{Status: 200, Body: []byte("stale")}); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Begin(ctx, req); c.State != idempotency.Running {
		t.Fatalf("after the dead holder's Finish = %v; want Running (the new holder's)", c.State)
	}
}

func TestOnlyOneOfManyRacersRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.Setup(t).DB
	req := idempotency.Request{APIKeyID: uuid.New(), Key: "race", Path: "POST /api/v1/transactional", Hash: "h"}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		runs int
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := idempotency.New(db, nil).Begin(ctx, req)
			if err != nil {
				t.Error(err)
				return
			}
			if c.State == idempotency.Run {
				mu.Lock()
				runs++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if runs != 1 {
		t.Fatalf("%d racers ran the request; want 1", runs)
	}
}

func TestCheckKey(t *testing.T) {
	t.Parallel()
	long := make([]byte, 256)
	for i := range long {
		long[i] = 'a'
	}
	for _, k := range []string{"", "tab\there", "é", string(long)} {
		if idempotency.CheckKey(k) == nil {
			t.Errorf("CheckKey(%q) accepted", k)
		}
	}
	for _, k := range []string{"a", "order 42 ~!", string(long[:255])} {
		if err := idempotency.CheckKey(k); err != nil {
			t.Errorf("CheckKey(%q) = %v", k, err)
		}
	}
}

func TestPruneDeletesExpiredKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.Setup(t).DB
	clk := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	s := idempotency.New(db, clk.now)
	api := uuid.New()
	old := idempotency.Request{APIKeyID: api, Key: "old", Path: "p", Hash: "h"}
	if _, err := s.Begin(ctx, old); err != nil {
		t.Fatal(err)
	}
	clk.add(idempotency.Kept)
	fresh := idempotency.Request{APIKeyID: api, Key: "fresh", Path: "p", Hash: "h"}
	if _, err := s.Begin(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Minute)
	n, err := idempotency.NewRetention(s, nil).Prune(ctx)
	if err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
	var left []string
	rows, _ := db.Query(ctx, `SELECT key FROM idempotency_keys`)
	for rows.Next() {
		var k string
		_ = rows.Scan(&k)
		left = append(left, k)
	}
	if len(left) != 1 || left[0] != "fresh" {
		t.Fatalf("left %v; want [fresh]", left)
	}
}
