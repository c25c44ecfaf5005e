package jobs_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

type tickArgs struct{}

func (tickArgs) Kind() string { return "test_tick" }

type pingArgs struct{}

func (pingArgs) Kind() string { return "test_ping" }

// source is a package's work as the queue sees it: a ping worker and a
// tick every 100 ms.
type source struct {
	pings, ticks atomic.Int32
}

func (s *source) Jobs(w *river.Workers) ([]*river.PeriodicJob, error) {
	if err := river.AddWorkerSafely(w, river.WorkFunc(func(context.Context, *river.Job[pingArgs]) error {
		s.pings.Add(1)
		return nil
	})); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(w, river.WorkFunc(func(context.Context, *river.Job[tickArgs]) error {
		s.ticks.Add(1)
		return nil
	})); err != nil {
		return nil, err
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(100*time.Millisecond),
		func() (river.JobArgs, *river.InsertOpts) { return tickArgs{}, nil }, &river.PeriodicJobOpts{ID: "test_tick", RunOnStart: true})}, nil
}

func run(t *testing.T, q *jobs.Queue) {
	t.Helper()
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

// Workers added after the client was built (and after the services took
// it) work what is queued; the periodic jobs run unless left out.
func TestAddAfterNew(t *testing.T) {
	t.Parallel()
	for _, without := range []bool{false, true} {
		pool := pgtest.Setup(t).Pool
		q, err := jobs.New(pool, jobs.Config{WithoutPeriodic: without})
		if err != nil {
			t.Fatal(err)
		}
		client := q.Client() // what a service is built with
		var s source
		if err := q.Add(&s); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Insert(context.Background(), pingArgs{}, nil); err != nil {
			t.Fatal(err)
		}
		run(t, q)
		deadline := time.Now().Add(15 * time.Second)
		for s.pings.Load() < 1 || (!without && s.ticks.Load() < 1) {
			if time.Now().After(deadline) {
				t.Fatalf("without periodic %v: %d pings, %d ticks", without, s.pings.Load(), s.ticks.Load())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if without {
			time.Sleep(300 * time.Millisecond)
			if n := s.ticks.Load(); n != 0 {
				t.Fatalf("%d ticks with the periodic jobs left out", n)
			}
		}
	}
}

type failing struct{}

func (failing) Jobs(*river.Workers) ([]*river.PeriodicJob, error) {
	return nil, errors.New("bad schedule")
}

// A source that cannot register fails Add, naming it.
func TestAddFails(t *testing.T) {
	t.Parallel()
	q, err := jobs.New(pgtest.Setup(t).Pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Add(failing{}); err == nil || !strings.Contains(err.Error(), "failing") || !strings.Contains(err.Error(), "bad schedule") {
		t.Fatalf("Add: %v", err)
	}
}
