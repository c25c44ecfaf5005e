package jobs_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

type postArgs struct {
	Body []byte `json:"body"`
}

func (postArgs) Kind() string { return "bench_post" }

// BenchmarkJobThroughput measures jobs per second when each job is one
// small HTTP POST to a local receiver, the shape of a webhook delivery:
// b.N jobs are queued (InsertMany, 1,000 a call), then a River client
// works them; the clock runs from the client's start to the last arrival.
// "queue" is this package's queue with 16 workers (as WEBHOOK_WORKERS);
// "tuned" is a client with 100 workers and a 10 ms fetch cooldown (River
// fetches at most as many jobs as it has free workers, at most once per
// cooldown, 100 ms by default). Compare with BenchmarkWebhookDelivery in
// internal/webhooks, which does more per delivery (fan-out, signing, the
// delivery log) on its own claim table.
func BenchmarkJobThroughput(b *testing.B) {
	b.Run("queue", func(b *testing.B) {
		benchThroughput(b, func(pool *pgxpool.Pool, post river.Worker[postArgs]) (*river.Client[pgx.Tx], func(context.Context) error) {
			q, err := jobs.New(pool, jobs.Config{MaxWorkers: 16})
			if err != nil {
				b.Fatal(err)
			}
			if err := q.Add(sourceFunc(func(w *river.Workers) ([]*river.PeriodicJob, error) { return nil, river.AddWorkerSafely(w, post) })); err != nil {
				b.Fatal(err)
			}
			return q.Client(), q.Run
		})
	})
	b.Run("tuned", func(b *testing.B) {
		benchThroughput(b, func(pool *pgxpool.Pool, post river.Worker[postArgs]) (*river.Client[pgx.Tx], func(context.Context) error) {
			w := river.NewWorkers()
			river.AddWorker(w, post)
			client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
				Queues:        map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 100}},
				Workers:       w,
				FetchCooldown: 10 * time.Millisecond,
			})
			if err != nil {
				b.Fatal(err)
			}
			return client, func(ctx context.Context) error {
				if err := client.Start(ctx); err != nil {
					return err
				}
				<-ctx.Done()
				return client.Stop(context.WithoutCancel(ctx))
			}
		})
	})
}

func benchThroughput(b *testing.B, build func(*pgxpool.Pool, river.Worker[postArgs]) (*river.Client[pgx.Tx], func(context.Context) error)) {
	var got atomic.Int64
	all := make(chan struct{})
	target := int64(b.N)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if got.Add(1) == target {
			close(all)
		}
	}))
	b.Cleanup(rc.Close)
	pool := pgtest.Setup(b).Pool
	client := &http.Client{Timeout: 10 * time.Second}
	post := river.WorkFunc(func(ctx context.Context, job *river.Job[postArgs]) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, rc.URL, bytes.NewReader(job.Args.Body))
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	})
	queue, run := build(pool, post)
	body := []byte(`{"type":"contact.created","data":{"id":"0190c5f4-7d6a-7a8e-9c1b-2f3e4d5c6b7a","first_name":"Ada"}}`)
	for off := 0; off < b.N; off += 1000 {
		params := make([]river.InsertManyParams, min(1000, b.N-off))
		for i := range params {
			params[i] = river.InsertManyParams{Args: postArgs{Body: body}}
		}
		if _, err := queue.InsertMany(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	b.ResetTimer()
	began := time.Now()
	go func() { done <- run(ctx) }()
	select {
	case <-all:
	case <-time.After(10*time.Second + time.Duration(b.N)*20*time.Millisecond):
		b.Fatalf("worked %d of %d", got.Load(), b.N)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "jobs/s")
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// sourceFunc is a jobs.Source made of a function.
type sourceFunc func(w *river.Workers) ([]*river.PeriodicJob, error)

func (s sourceFunc) Jobs(w *river.Workers) ([]*river.PeriodicJob, error) { return s(w) }
