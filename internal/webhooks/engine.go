package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/postgres"
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
	statusHeld      = "held" // kept without sending while the webhook is paused (holdPending)
	statusSucceeded = "succeeded"
	statusFailed    = "failed"
	statusCanceled  = "canceled"
)

// DeliveryStatuses is every state of a delivery (webhook_deliveries.status).
var DeliveryStatuses = []string{statusPending, statusHeld, statusSucceeded, statusFailed, statusCanceled}

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
	// DisableAfter is how long a webhook may fail at every attempt before
	// it is switched off (WEBHOOK_DISABLE_AFTER, default 120 h).
	DisableAfter time.Duration
	// OnDisabled tells the team about a webhook switched off; optional.
	OnDisabled DisabledNotifier
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
	pool *pgxpool.Pool // its connection settings open the listener
	// db is pool translating errors, for the engine's statements.
	db     *postgres.Database
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
	if cfg.DisableAfter <= 0 {
		cfg.DisableAfter = DefaultDisableAfter
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
		db:    postgres.Wrap(pool),
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
		evs, deliveries, err := e.st.dispatch(ctx, e.db, e.cfg.Now(), fanoutBatch)
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
	due := time.NewTimer(e.cfg.Poll)
	defer due.Stop()
	saturated := false
	for ticks := 1; ; {
		select {
		case <-ctx.Done():
			return
		case <-e.claimWake:
		case <-due.C:
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
		if wait, ok := e.untilNextDue(ctx); ok {
			due.Reset(wait)
		}
	}
}

// claim leases up to n due deliveries for this engine.
func (e *Engine) claim(ctx context.Context, n int) ([]job, error) {
	now := e.cfg.Now()
	until := now.Add(e.cfg.Lease)
	jobs, err := e.st.claim(ctx, e.db, e.owner, now, until, n)
	for i := range jobs {
		jobs[i].LeaseUntil = until
	}
	return jobs, err
}

// untilNextDue is how long until a pending delivery next falls due, when
// that comes before the next poll: the claim loop sleeps that long, so
// deliveries a rate limit holds back go out at their send times, and
// retries on time, without polling faster.
func (e *Engine) untilNextDue(ctx context.Context) (time.Duration, bool) {
	now := e.cfg.Now()
	at, err := e.st.nextDue(ctx, e.db, now)
	if err != nil {
		if ctx.Err() == nil {
			e.cfg.Log.Warn("webhooks: looking for the next due delivery failed", "err", err)
		}
		return 0, false
	}
	if at == nil || at.Sub(now) >= e.cfg.Poll {
		return 0, false
	}
	return at.Sub(now), true
}

// WakeDeliveries has the engine look for due deliveries now; it never
// blocks. The service calls it after queueing an admin's send.
func (e *Engine) WakeDeliveries() { signal(e.claimWake) }

// reap takes over the deliveries leased by instances that are gone.
func (e *Engine) reap(ctx context.Context) {
	n, err := e.st.reapDeadLeases(ctx, e.db)
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
