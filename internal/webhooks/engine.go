package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Limits of one delivery attempt and of what its log entry keeps.
const (
	// DefaultTimeout bounds one attempt; past it the attempt counts as a
	// network error.
	DefaultTimeout = 10 * time.Second
	// MaxLoggedBody is how much of a response body the log keeps.
	MaxLoggedBody = 4096
	// UserAgent identifies deliveries.
	UserAgent = "contactbook-Webhooks/1.0"
	// NotifyChannel wakes every engine of the database: nothing in the
	// service notifies it (its commit-time lock serialised the writers of
	// events, see events.Outbox), but an operator or tool that writes
	// events directly can, instead of waiting for the poll.
	NotifyChannel = "contactbook_events"
)

// DefaultRetries are the delays before attempts 2, 3 and 4 (4 in all).
var DefaultRetries = []time.Duration{10 * time.Second, 60 * time.Second, 5 * time.Minute}

// Delivery states.
const (
	statusPending   = "pending"
	statusSucceeded = "succeeded"
	statusFailed    = "failed"
	statusCanceled  = "canceled"
)

// fanoutBatch is how many events one fan-out statement takes.
const fanoutBatch = 500

// claimAhead is how many deliveries per worker an engine holds claimed.
const claimAhead = 4

// EngineConfig tunes the delivery engine; zero values take the defaults.
type EngineConfig struct {
	// Workers is how many attempts run at once (WEBHOOK_WORKERS).
	Workers int
	// AllowInsecure turns the SSRF guard off (WEBHOOK_ALLOW_INSECURE):
	// development and tests only.
	AllowInsecure bool
	// Timeout bounds one attempt (default 10 s).
	Timeout time.Duration
	// Lease is how long a claimed delivery stays reserved for this
	// instance (default claimAhead x Timeout + 20 s, i.e. 1 minute: work
	// claimed ahead may wait for a worker before its attempt). It is the
	// fallback for an instance that hangs: one that dies is noticed at
	// once, when its database connection goes away.
	Lease time.Duration
	// Poll is the fallback interval for finding work when no notification
	// arrives, and the precision of retry times (default 1 s).
	Poll time.Duration
	// Retries are the delays before each retry (default 10 s, 60 s, 5 min).
	Retries []time.Duration
	// Now is the clock of retry schedules, leases and the log.
	Now func() time.Time
	Log *slog.Logger
	// Observer hears the outcome of every attempt (metrics); optional.
	Observer AttemptObserver
	// Listen is the configuration of the engine's own connection, which
	// LISTENs and shows other instances that this one is alive; it must
	// reach PostgreSQL directly, as a session (default: the pool's).
	Listen *pgx.ConnConfig
}

// AttemptObserver hears the outcome of each delivery attempt: "success",
// "failed" (final) or "retry".
type AttemptObserver interface {
	WebhookAttempt(outcome string)
}

// Engine delivers webhooks. It is an app.Worker: Run until ctx ends.
// DispatchOnce and DeliverDue do one round of each half synchronously, for
// tests and tools.
type Engine struct {
	pool   *pgxpool.Pool
	cfg    EngineConfig
	owner  string
	client *http.Client
	st     store

	fanoutWake chan struct{}
	claimWake  chan struct{}
}

// NewEngine wires an engine on the pool.
func NewEngine(pool *pgxpool.Pool, cfg EngineConfig) *Engine {
	if cfg.Workers < 1 {
		cfg.Workers = 16
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Lease <= 0 {
		cfg.Lease = claimAhead*cfg.Timeout + 20*time.Second
	}
	// A lease shorter than an attempt would hand work to another instance
	// while it is still being delivered here.
	cfg.Lease = max(cfg.Lease, cfg.Timeout+time.Second)
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Retries == nil {
		cfg.Retries = DefaultRetries
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	owner := make([]byte, 16)
	_, _ = rand.Read(owner)
	transport := &http.Transport{
		// Never through a proxy: it would connect on our behalf, past the
		// dial guard.
		Proxy:               nil,
		DialContext:         newDialer(cfg.AllowInsecure),
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        4 * cfg.Workers,
		MaxIdleConnsPerHost: cfg.Workers,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: cfg.Timeout,
	}
	return &Engine{
		pool:  pool,
		cfg:   cfg,
		owner: hex.EncodeToString(owner),
		client: &http.Client{
			Transport: transport,
			// Redirects are not followed: a 3xx is the answer (see retryable).
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		fanoutWake: make(chan struct{}, 1),
		claimWake:  make(chan struct{}, 1),
	}
}

// Wake has the engine fan out new events now; it never blocks. The
// outbox calls it after each commit that wrote events.
func (e *Engine) Wake() { signal(e.fanoutWake) }

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends. Shutdown: stop claiming, let the attempts
// in flight finish (each is bounded by Timeout), record them, and give
// back the leases of claimed work that had not started, so the next
// instance takes it over at once.
func (e *Engine) Run(ctx context.Context) error {
	listener, err := e.connectListener(ctx)
	if err != nil {
		return err
	}
	results := make(chan outcome, 4*e.cfg.Workers)
	completed := make(chan struct{})
	go func() {
		defer close(completed)
		e.completeLoop(results)
	}()

	var bg sync.WaitGroup
	bg.Go(func() { e.listenLoop(ctx, listener) })
	bg.Go(func() { e.fanoutLoop(ctx) })

	// Claimed deliveries wait in jobs for one of Workers goroutines. Up to
	// claimAhead per worker are claimed at once, so that under load one
	// claim statement serves dozens of deliveries.
	capacity := claimAhead * e.cfg.Workers
	jobs := make(chan job, capacity)
	slots := make(chan struct{}, capacity)
	var workers sync.WaitGroup
	for range e.cfg.Workers {
		workers.Go(func() {
			for j := range jobs {
				results <- e.run(ctx, j)
				<-slots
			}
		})
	}
	// Deliveries left by a previous run (or a crashed instance) are due now.
	e.reap(ctx)
	signal(e.claimWake)
	e.claimLoop(ctx, jobs, slots)

	close(jobs)
	bg.Wait()
	workers.Wait()
	close(results)
	<-completed
	return nil
}

// connectListener opens the engine's own connection (outside the pool)
// that LISTENs for new events. Its application_name carries the lease
// owner: other instances see the owner alive while it is connected.
func (e *Engine) connectListener(ctx context.Context) (*pgx.Conn, error) {
	for backoff := 100 * time.Millisecond; ; backoff = min(2*backoff, 5*time.Second) {
		cfg := e.pool.Config().ConnConfig.Copy()
		if e.cfg.Listen != nil {
			cfg = e.cfg.Listen.Copy()
		}
		cfg.RuntimeParams["application_name"] = leaseAppPrefix + e.owner
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN "+NotifyChannel); err == nil {
				return conn, nil
			}
			conn.Close(context.WithoutCancel(ctx))
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e.cfg.Log.Warn("webhooks: cannot listen for events; retrying", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
	}
}

// listenLoop wakes the fan-out on every notification, reconnecting when
// the connection drops (and then looking for work it may have missed).
func (e *Engine) listenLoop(ctx context.Context, conn *pgx.Conn) {
	defer func() { conn.Close(context.WithoutCancel(ctx)) }()
	signal(e.fanoutWake)
	for {
		_, err := conn.WaitForNotification(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			e.cfg.Log.Warn("webhooks: event listener lost its connection; reconnecting", "err", err)
			conn.Close(context.WithoutCancel(ctx))
			if conn, err = e.connectListener(ctx); err != nil {
				return
			}
		}
		signal(e.fanoutWake)
	}
}

// fanoutLoop turns new events into deliveries whenever woken.
func (e *Engine) fanoutLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.fanoutWake:
		}
		if _, err := e.DispatchOnce(ctx); err != nil && ctx.Err() == nil {
			e.cfg.Log.Error("webhooks: fan-out failed", "err", err)
		}
	}
}

// DispatchOnce fans out every undispatched event and returns how many
// deliveries it created.
func (e *Engine) DispatchOnce(ctx context.Context) (int, error) {
	total := 0
	for {
		evs, deliveries, err := e.st.dispatch(ctx, e.pool, e.cfg.Now(), fanoutBatch)
		if err != nil {
			return total, err
		}
		total += deliveries
		if deliveries > 0 {
			signal(e.claimWake)
		}
		if evs < fanoutBatch {
			return total, nil
		}
	}
}

// claimLoop claims due deliveries whenever woken and a slot is free, and
// queues them for the workers.
func (e *Engine) claimLoop(ctx context.Context, jobs chan<- job, slots chan struct{}) {
	tick := time.NewTicker(e.cfg.Poll)
	defer tick.Stop()
	saturated := false
	for ticks := 1; ; {
		select {
		case <-ctx.Done():
			return
		case <-e.claimWake:
		case <-tick.C:
			signal(e.fanoutWake)
			// Instances die rarely; looking for their leases every tenth
			// poll keeps the scan of pending rows cheap.
			if ticks++; ticks%10 == 0 {
				e.reap(ctx)
			}
		}
		for ctx.Err() == nil {
			free := reserve(ctx, slots, saturated)
			if free == 0 {
				return
			}
			claimed, err := e.claim(ctx, free)
			if err != nil {
				if ctx.Err() == nil {
					e.cfg.Log.Error("webhooks: claiming deliveries failed", "err", err)
				}
				claimed = nil
			}
			for range free - len(claimed) {
				<-slots
			}
			for _, j := range claimed {
				jobs <- j
			}
			saturated = len(claimed) == free
			if !saturated {
				break
			}
		}
	}
}

// claim leases up to n due deliveries for this engine.
func (e *Engine) claim(ctx context.Context, n int) ([]job, error) {
	now := e.cfg.Now()
	until := now.Add(e.cfg.Lease)
	jobs, err := e.st.claim(ctx, e.pool, e.owner, now, until, n)
	for i := range jobs {
		jobs[i].LeaseUntil = until
	}
	return jobs, err
}

// reap takes over the deliveries leased by instances that are gone.
func (e *Engine) reap(ctx context.Context) {
	n, err := e.st.reapDeadLeases(ctx, e.pool)
	switch {
	case err != nil && ctx.Err() == nil:
		e.cfg.Log.Error("webhooks: taking over dead leases failed", "err", err)
	case n > 0:
		e.cfg.Log.Info("webhooks: took over the deliveries of a stopped instance", "deliveries", n)
	}
}

// reserve takes slots for the next claim: it waits for one, then takes
// every other free one. Under load (the last claim took all it could) it
// waits a moment until half the slots are free, so claims stay batched
// instead of one query per finished attempt. 0 means ctx ended.
func reserve(ctx context.Context, slots chan struct{}, saturated bool) int {
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return 0
	}
	n := 1
	for n < cap(slots) {
		select {
		case slots <- struct{}{}:
			n++
			continue
		default:
		}
		break
	}
	if saturated && n < cap(slots)/2 {
		wait := time.NewTimer(2 * time.Millisecond)
		defer wait.Stop()
		for n < cap(slots)/2 {
			select {
			case slots <- struct{}{}:
				n++
			case <-wait.C:
				return n
			case <-ctx.Done():
				return n
			}
		}
	}
	return n
}

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
		err = e.st.complete(ctx, e.pool, e.owner, batch)
		cancel()
		if err == nil {
			return
		}
		time.Sleep(time.Duration(try+1) * 200 * time.Millisecond)
	}
	e.cfg.Log.Error("webhooks: recording delivery results failed; the deliveries will be retried", "err", err, "deliveries", len(batch))
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
		if err := e.st.complete(ctx, e.pool, e.owner, outs); err != nil {
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
	case !j.Active:
		return outcome{job: j, status: statusCanceled}
	case ctx.Err() != nil, e.cfg.Now().Add(e.cfg.Timeout).After(j.LeaseUntil):
		// Shutting down, or the job waited so long that its lease could
		// run out mid-attempt: hand it back unattempted.
		return outcome{job: j, status: statusPending}
	}
	o := e.attempt(context.WithoutCancel(ctx), j)
	o.attempted = true
	switch {
	case o.success:
		o.status = statusSucceeded
	case o.retryable() && j.Attempt <= len(e.cfg.Retries):
		o.status = statusPending
		o.next = e.cfg.Now().Add(e.cfg.Retries[j.Attempt-1])
	default:
		o.status = statusFailed
	}
	return o
}

// retryable: 5xx, network errors and timeouts are retried; 2xx is done;
// 3xx (redirects are not followed) and 4xx are the receiver's final word;
// a refused address or an unusable URL will not change by retrying.
func (o outcome) retryable() bool {
	if o.responseStatus != nil {
		return *o.responseStatus >= 500
	}
	return o.errText != nil && !o.finalErr
}

// attempt POSTs the stored body to the webhook and reports what happened.
func (e *Engine) attempt(ctx context.Context, j job) outcome {
	o := outcome{job: j, at: e.cfg.Now()}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.URL, bytes.NewReader(j.Body))
	if err != nil {
		o.errText, o.finalErr = ptr(redactIn("invalid URL: "+err.Error(), j.URL)), true
		return o
	}
	ts := strconv.FormatInt(o.at.Unix(), 10)
	id := j.EventID.String()
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set("X-Service-Event", j.EventType)
	h.Set("X-Service-Signature", SignatureHex(j.Secret, j.Body))
	h.Set("X-Service-Delivery", id)
	h.Set("X-Service-Timestamp", ts)
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", ts)
	if sig, err := StandardSignature(j.Secret, id, ts, j.Body); err == nil {
		h.Set("webhook-signature", sig)
	}

	start := time.Now()
	res, err := e.client.Do(req)
	if err != nil {
		o.duration = time.Since(start)
		var refused *RefusedError
		o.errText, o.finalErr = ptr(redactIn(describe(err, e.cfg.Timeout), j.URL)), errors.As(err, &refused)
		return o
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, MaxLoggedBody))
	// Read a little more so the connection can be reused, then let go.
	_, _ = io.CopyN(io.Discard, res.Body, 64<<10)
	_ = res.Body.Close()
	o.duration = time.Since(start)
	code := int32(res.StatusCode)
	o.responseStatus = &code
	o.responseBody = loggable(body)
	o.success = res.StatusCode >= 200 && res.StatusCode < 300
	return o
}

// describe turns a client error into the log's words.
func describe(err error, timeout time.Duration) string {
	var refused *RefusedError
	if errors.As(err, &refused) {
		return "refused: " + refused.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("timeout: no response within %s", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Sprintf("timeout: no response within %s", timeout)
		}
		err = ue.Err
	}
	return "network error: " + err.Error()
}

// loggable makes a response body storable as text: invalid UTF-8 is
// replaced and NUL bytes (which PostgreSQL text refuses) are dropped.
func loggable(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}

func ptr[T any](v T) *T { return &v }

// SignatureHex is the X-Service-Signature of body: hex HMAC-SHA256 keyed
// with the whole secret string, "whsec_" prefix included.
func SignatureHex(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// StandardSignature is the Standard Webhooks webhook-signature header:
// "v1," + base64 HMAC-SHA256 of "id.timestamp.body", keyed, as that spec
// says, with the bytes the secret's base64 part (after "whsec_") decodes to.
func StandardSignature(secret, id, timestamp string, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil {
		return "", fmt.Errorf("decode signing secret: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}
