// Package app wires the service together: configuration, logging, the
// database pool and migrations, the domain services, the HTTP server and
// the background workers, and runs them until the process is told to stop.
// It also holds the command line (serve, migrate, addon set).
package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/accountmail"
	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/billing"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/carddav"
	"github.com/contactbook/contactbook/internal/config"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/delivery"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/forms"
	"github.com/contactbook/contactbook/internal/httpapi"
	"github.com/contactbook/contactbook/internal/idempotency"
	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/metrics"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/ratelimit"
	"github.com/contactbook/contactbook/internal/segments"
	"github.com/contactbook/contactbook/internal/suppression"
	"github.com/contactbook/contactbook/internal/tracking"
	"github.com/contactbook/contactbook/internal/transactional"
	"github.com/contactbook/contactbook/internal/transfer"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// Worker is a background component: it runs until ctx ends, then returns
// once its in-flight work is done.
type Worker interface {
	Run(ctx context.Context) error
}

// App is the wired service.
type App struct {
	Config config.Config
	Log    *slog.Logger
	Pool   *pgxpool.Pool
	// DB is Pool translating its errors into the service's error model
	// (postgres.Wrap): every store reaches the database through it. Only
	// what needs pgx's own pool (the job queue, the metrics, the webhook
	// engine's listener) takes Pool.
	DB *postgres.Database
	// Direct reaches PostgreSQL without a transaction pooler, for what
	// needs a session (the retention lock); Pool itself when DATABASE_URL
	// is direct.
	Direct   *pgxpool.Pool
	Handler  http.Handler
	Accounts *accounts.Service
	SSO      *accounts.SSO
	Books    *books.Service
	Contacts *contacts.Service
	Segments *segments.Service
	Workers  []Worker
	Metrics  *metrics.Metrics

	Webhooks      *webhooks.Service
	WebhookEngine *webhooks.Engine
	Outbox        *events.Outbox

	Billing *billing.Service

	Campaigns *campaigns.Service
	// Delivery applies the provider's event batches and reports on them.
	Delivery *delivery.Service
	// SESFeedback applies Amazon SES feedback delivered through SNS.
	SESFeedback *delivery.SESFeedback
	// BounceReader reads the SMTP books' bounce mailboxes (a periodic job).
	BounceReader *delivery.BounceReader
	// Suppressions serves the books' suppression lists.
	Suppressions *suppression.Service
	// CampaignRunner processes campaigns in the background, as jobs.
	CampaignRunner *campaigns.Runner
	// Mail sends the books' emails through their providers.
	Mail *mailer.Dispatcher
	// Idempotency keeps the first answers to Idempotency-Key.
	Idempotency *idempotency.Store
	// Transactional accepts transactional emails; TransactionalRunner
	// (one of the Workers) sends them.
	Transactional       *transactional.Service
	TransactionalRunner *transactional.Runner
	// Tracking records product events.
	Tracking *tracking.Service

	// Jobs is the durable job queue (River) and this instance's share of
	// its work.
	Jobs *jobs.Queue

	// Transfer imports and exports contacts; imports run as jobs.
	Transfer *transfer.Service

	// Forms collects sign-ups; Rights serves a person's preferences,
	// data export and erasure.
	Forms  *forms.Service
	Rights *forms.Rights

	// draining is set once a stop signal arrived: /readyz answers 503.
	draining atomic.Bool
	// Audit reads the teams' audit logs.
	Audit *audit.Service
	// KeyLimits limits each API key's requests a minute across instances.
	KeyLimits *ratelimit.PerKey
}

// Options adjust the wiring; tests use them to inject a clock.
type Options struct {
	Now func() time.Time
	// WithoutPeriodicJobs leaves every periodic job out (the scheduler's
	// ticks, the prunes, the account email requeue); tests run
	// that work when they mean to.
	WithoutPeriodicJobs bool
}

// Build connects to the database, migrates it when configured to, and
// wires every service.
func Build(ctx context.Context, cfg config.Config, log *slog.Logger, opts Options) (*App, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	// Connected first: a transaction pooler where a session is expected
	// is refused before anything runs through it, migrations included.
	pool, direct, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.AutoMigrate {
		applied, err := postgres.Migrate(ctx, cfg.DatabaseDirectURL)
		if err != nil {
			pool.Close()
			if direct != pool {
				direct.Close()
			}
			return nil, err
		}
		if len(applied) > 0 {
			log.Info("applied migrations", "files", applied)
		}
	}
	tokens := auth.NewTokens(cfg.JWTSecret, cfg.JWTTTL, cfg.JWTIssuer, now)
	a := &App{Config: cfg, Log: log, Pool: pool, DB: postgres.Wrap(pool), Direct: direct}
	db := a.DB
	// The queue gauge is read at scrape time, when a.Webhooks is wired.
	a.Metrics = metrics.New(pool, func(ctx context.Context) (float64, error) { return a.Webhooks.QueueDepth(ctx) })
	a.WebhookEngine = webhooks.NewEngine(pool, webhooks.EngineConfig{
		Workers: cfg.WebhookWorkers, Poll: cfg.WebhookPoll, AllowInsecure: cfg.WebhookAllowInsecure, Now: now, Log: log, Observer: a.Metrics,
		Listen:       direct.Config().ConnConfig,
		DisableAfter: cfg.WebhookDisableAfter,
		// The notice goes to the team's admins and owners, whom a.Accounts
		// (wired below) knows.
		OnDisabled: func(ctx context.Context, tx *postgres.Tx, n webhooks.DisabledNotice) error {
			return a.Accounts.NotifyWebhookDisabled(ctx, tx, n.TeamID, n.URL, n.Reason, n.At)
		},
	})
	a.Workers = append(a.Workers, a.WebhookEngine)
	// Events committed by this instance's services wake its dispatcher.
	a.Outbox = events.NewOutbox(a.WebhookEngine.Wake)
	// The job queue comes first: the services enqueue on its client, and
	// their workers, which need the services, are added to it afterwards
	// (wireJobs).
	a.Jobs, err = jobs.New(pool, jobs.Config{
		RescueAfter: cfg.JobRescueAfter, WithoutPeriodic: opts.WithoutPeriodicJobs, Log: log,
		PollOnly: cfg.DatabasePoolMode == postgres.PoolTransaction,
	})
	if err != nil {
		a.Close()
		return nil, err
	}
	a.Workers = append(a.Workers, a.Jobs)
	queue := a.Jobs.Client()
	a.Webhooks = webhooks.NewService(webhooks.Deps{
		DB: db, Now: now, AllowInsecure: cfg.WebhookAllowInsecure, Queue: queue, Wake: a.WebhookEngine.WakeDeliveries, Log: log,
	})
	mail := accountmail.NewComposer(cfg.PublicBaseURL, queue)
	a.Accounts = accounts.NewService(accounts.Deps{
		DB: db, Tokens: tokens, Outbox: a.Outbox, Mail: mail, SecretKey: cfg.SettingsKey, PasswordCost: cfg.PasswordHashCost, Now: now, Log: log,
	})
	a.SSO = accounts.NewSSO(accounts.SSODeps{
		Accounts: a.Accounts, PublicBaseURL: cfg.PublicBaseURL, AllowInsecure: cfg.WebhookAllowInsecure,
		HTTPClient: webhooks.OutboundClient(webhooks.Outbound{AllowInsecure: cfg.WebhookAllowInsecure, Timeout: 15 * time.Second}), Log: log,
	})
	a.Books = books.NewService(db, a.Outbox, now)
	a.Contacts = contacts.NewService(contacts.Deps{DB: db, Books: a.Books, Outbox: a.Outbox, Marks: suppression.New(now).WithOutbox(a.Outbox), Now: now})
	a.Segments = segments.NewService(segments.Deps{DB: db, Books: a.Books, Campaigns: campaigns.Catalog{}, Now: now})
	a.Billing = newBilling(cfg, db, a.Accounts, now, log)
	a.Delivery = delivery.NewService(delivery.Deps{
		DB: db, Campaigns: campaigns.NewFeedback(a.Outbox), Transactional: transactional.Feedback{}, Outbox: a.Outbox, Now: now,
	})
	snsRoots, err := mailRoots(cfg.MailCAFile)
	if err != nil {
		a.Close()
		return nil, err
	}
	snsTransport := http.DefaultTransport.(*http.Transport).Clone()
	snsTransport.TLSClientConfig = &tls.Config{RootCAs: snsRoots, MinVersion: tls.VersionTLS12}
	a.SESFeedback = delivery.NewSESFeedback(a.Delivery, delivery.SNSConfig{
		CertHosts: cfg.SNSCertHosts, HTTP: &http.Client{Transport: snsTransport, Timeout: 10 * time.Second},
	})
	a.Suppressions = suppression.NewService(db, suppression.New(now).WithOutbox(a.Outbox))
	a.Audit = audit.NewService(db)
	a.Idempotency = idempotency.New(db, now)
	a.KeyLimits = ratelimit.NewPerKey(db, cfg.APIKeyRateLimit, now, log)
	a.Workers = append(a.Workers, a.KeyLimits)
	if err := a.wireJobs(now); err != nil {
		a.Close()
		return nil, err
	}
	a.Handler = httpapi.New(httpapi.Deps{
		Log:      log,
		Tokens:   tokens,
		Accounts: a.Accounts,
		Books:    a.Books,
		Contacts: a.Contacts,
		Segments: a.Segments,
		Ready:    a.ready,
		Observe:  a.Metrics.ObserveRequest,
		Metrics:  a.Metrics.Handler(),
		Webhooks: a.Webhooks,

		MetricsToken: cfg.MetricsToken,

		Billing:    a.Billing,
		TrustProxy: cfg.TrustProxy,
		RateCounts: ratelimit.New(db),
		Campaigns:  a.Campaigns,
		Transfer:   a.Transfer,

		Delivery:      a.Delivery,
		SESFeedback:   a.SESFeedback,
		Suppressions:  a.Suppressions,
		Audit:         a.Audit,
		KeyLimits:     a.KeyLimits,
		Forms:         a.Forms,
		Rights:        a.Rights,
		SSO:           a.SSO,
		Idempotency:   a.Idempotency,
		Transactional: a.Transactional,
		Tracking:      a.Tracking,

		SecureCookies: strings.HasPrefix(cfg.PublicBaseURL, "https://"),
		DAV: carddav.New(carddav.Deps{
			Accounts: a.Accounts, Books: a.Books, Contacts: a.Contacts, Log: log, ClientIP: httpapi.ClientIP,
		}),
	})
	return a, nil
}

// Close releases the pools.
func (a *App) Close() {
	a.Pool.Close()
	if a.Direct != a.Pool {
		a.Direct.Close()
	}
}

// shutdownGrace bounds how long in-flight requests and webhook attempts
// may take to finish after a stop signal.
const shutdownGrace = 25 * time.Second

// SideListener is a listener Serve runs next to the public one, with a
// handler of its own (metrics, profiles): kept off the public port.
type SideListener struct {
	Name     string
	Listener net.Listener
	Handler  http.Handler
}

// Serve runs the HTTP server on ln, a server on each side listener, and
// the workers until ctx ends (or a server fails), then shuts down
// gracefully: stop taking requests, finish those in flight, let the
// workers finish their current work.
func (a *App) Serve(ctx context.Context, ln net.Listener, side ...SideListener) error {
	errorLog := slog.NewLogLogger(a.Log.Handler(), slog.LevelWarn)
	srv := &http.Server{
		Handler:           a.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          errorLog,
	}
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	var wg sync.WaitGroup
	for _, w := range a.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Run(workCtx); err != nil && !errors.Is(err, context.Canceled) {
				a.Log.Error("worker stopped", "worker", fmt.Sprintf("%T", w), "err", err)
			}
		}()
	}

	serveErr := make(chan error, 1+len(side))
	servers := []*http.Server{srv}
	go func() { serveErr <- srv.Serve(ln) }()
	for _, s := range side {
		// No write timeout: a CPU profile takes as long as it is asked to.
		sideSrv := &http.Server{Handler: s.Handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: errorLog}
		servers = append(servers, sideSrv)
		go func() {
			if err := sideSrv.Serve(s.Listener); !errors.Is(err, http.ErrServerClosed) {
				serveErr <- fmt.Errorf("%s listener: %w", s.Name, err)
			}
		}()
		a.Log.Info("listening", "serving", s.Name, "addr", s.Listener.Addr().String())
	}
	a.Log.Info("listening", "addr", ln.Addr().String(), "public_base_url", a.Config.PublicBaseURL,
		"api_reference", a.Config.PublicBaseURL+"/docs")

	var err error
	select {
	case err = <-serveErr:
	case <-ctx.Done():
		a.drain()
		a.Log.Info("shutting down")
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	for _, s := range servers {
		if shutErr := s.Shutdown(shutCtx); err == nil {
			err = shutErr
		}
	}
	stopWork()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(shutdownGrace):
		a.Log.Warn("workers did not stop in time")
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// NewLogger builds the process logger from the configuration.
func NewLogger(cfg config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	format := cfg.LogFormat
	if format == "" {
		format = "json"
		if f, ok := w.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				format = "text"
			}
		}
	}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
