package webhooks

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// completeLoop records outcomes in batches: whatever has arrived is
// written in one statement.
func (e *Engine) completeLoop(results <-chan outcome) {
	batch := make([]outcome, 0, 256)
	for o := range results {
		batch = append(batch[:0], o)
	drain:
		for len(batch) < cap(batch) {
			select {
			case o, ok := <-results:
				if !ok {
					break drain
				}
				batch = append(batch, o)
			default:
				break drain
			}
		}
		e.record(batch)
	}
}

// record writes a batch of outcomes, retrying a few times: if it never
// gets through, the leases run out and the deliveries are made again
// (at least once).
func (e *Engine) record(batch []outcome) {
	e.observe(batch)
	var err error
	for try := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = e.st.complete(ctx, e.db, e.owner, batch)
		cancel()
		if err == nil {
			break
		}
		time.Sleep(time.Duration(try+1) * 200 * time.Millisecond)
	}
	if err != nil {
		e.cfg.Log.Error("webhooks: recording delivery results failed; the deliveries will be retried", "err", err, "deliveries", len(batch))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.disableFailing(ctx, batch); err != nil {
		// The next failed attempt checks again.
		e.cfg.Log.Error("webhooks: switching off failing webhooks failed", "err", err)
	}
}

// observe logs each attempt of batch with its ids and tells the observer
// how it ended.
func (e *Engine) observe(batch []outcome) {
	for _, o := range batch {
		if !o.attempted {
			continue
		}
		outcome := map[string]string{statusSucceeded: "success", statusFailed: "failed", statusPending: "retry"}[o.status]
		level := slog.LevelDebug
		if o.status != statusSucceeded {
			level = slog.LevelInfo
		}
		attrs := []any{"delivery_id", o.job.DeliveryID, "event_id", o.job.EventID, "webhook_id", o.job.WebhookID,
			"event", o.job.EventType, "attempt", o.job.Attempt, "outcome", outcome, "duration_ms", o.duration.Milliseconds()}
		if o.responseStatus != nil {
			attrs = append(attrs, "response_status", *o.responseStatus)
		}
		if o.errText != nil {
			attrs = append(attrs, "error", *o.errText)
		}
		if o.status == statusPending {
			attrs = append(attrs, "next_attempt_at", o.next)
		}
		e.cfg.Log.Log(context.Background(), level, "webhook attempt", attrs...)
		if e.cfg.Observer != nil && outcome != "" {
			e.cfg.Observer.WebhookAttempt(outcome)
		}
	}
}

// DeliverDue makes every due attempt once (up to Workers at a time),
// records the results, and returns how many attempts it made.
func (e *Engine) DeliverDue(ctx context.Context) (int, error) {
	total := 0
	for {
		jobs, err := e.claim(ctx, e.cfg.Workers)
		if err != nil || len(jobs) == 0 {
			return total, err
		}
		outs := make([]outcome, len(jobs))
		var wg sync.WaitGroup
		for i, j := range jobs {
			wg.Go(func() { outs[i] = e.run(ctx, j) })
		}
		wg.Wait()
		e.observe(outs)
		if err := e.st.complete(ctx, e.db, e.owner, outs); err != nil {
			return total, err
		}
		if err := e.disableFailing(ctx, outs); err != nil {
			return total, err
		}
		for _, o := range outs {
			if o.attempted {
				total++
			}
		}
		if len(jobs) < e.cfg.Workers {
			return total, nil
		}
	}
}

// outcome is what became of a claimed delivery.
type outcome struct {
	job       job
	attempted bool      // an HTTP attempt was made (and is logged)
	lostSlot  bool      // not attempted: its rate-limited send time passed
	status    string    // the delivery's new status
	next      time.Time // when pending: the next attempt's time

	at             time.Time // attempt start, per the engine clock
	duration       time.Duration
	responseStatus *int32
	responseBody   string
	errText        *string
	finalErr       bool // errText is a reason retrying cannot fix
	success        bool
}

// run makes one attempt of a claimed delivery and decides what follows.
// ctx is the engine's: once it has ended, unstarted work is handed back.
// The attempt itself runs on its own bounded context so a shutdown lets it
// finish.
func (e *Engine) run(ctx context.Context, j job) outcome {
	switch {
	case !j.Active && !j.Manual:
		// Switched off since the claim. An admin's own send (a test, a
		// retry) goes out whatever the switch: it is how a receiver is
		// checked before the webhook is switched on again.
		return outcome{job: j, status: statusCanceled}
	case ctx.Err() != nil, e.cfg.Now().Add(e.cfg.Timeout).After(j.LeaseUntil):
		// Shutting down, or the job waited so long that its lease could
		// run out mid-attempt: hand it back unattempted.
		return outcome{job: j, status: statusPending}
	}
	if j.SendBy != nil && e.cfg.Now().After(*j.SendBy) {
		// Too late for its send time under the rate limit: sending now
		// could bunch up with the next ones. It takes a new time.
		return outcome{job: j, status: statusPending, lostSlot: true}
	}
	o := e.attempt(context.WithoutCancel(ctx), j)
	o.attempted = true
	switch {
	case o.success:
		o.status = statusSucceeded
	case o.retryable() && !j.Manual && j.Attempt <= len(e.cfg.Retries):
		o.status = statusPending
		o.next = e.cfg.Now().Add(e.cfg.Retries[j.Attempt-1])
	default:
		o.status = statusFailed
	}
	return o
}
