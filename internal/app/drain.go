package app

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/config"
	"github.com/contactbook/contactbook/internal/postgres"
)

// connect opens the service's pool on DATABASE_URL and, when that is a
// transaction pooler or another address than DATABASE_DIRECT_URL, a small
// pool straight to PostgreSQL for what needs a session. It refuses a
// transaction pooler where a session is expected: in session mode every
// statement prepared on one server session and run on another would
// fail, so the service would start and answer 500s.
func connect(ctx context.Context, cfg config.Config) (pool, direct *pgxpool.Pool, err error) {
	if cfg.DatabasePoolMode == postgres.PoolSession {
		if err := refusePooler(ctx, cfg.DatabaseURL, "DATABASE_URL",
			"set DATABASE_POOL_MODE=transaction, and DATABASE_DIRECT_URL to PostgreSQL itself (migrations, locks and the webhook listener need a session)"); err != nil {
			return nil, nil, err
		}
	}
	if cfg.DatabaseDirectURL != cfg.DatabaseURL || cfg.DatabasePoolMode == postgres.PoolTransaction {
		if err := refusePooler(ctx, cfg.DatabaseDirectURL, "DATABASE_DIRECT_URL",
			"set DATABASE_DIRECT_URL to PostgreSQL itself (it defaults to DATABASE_URL): migrations, locks and the webhook listener need a session"); err != nil {
			return nil, nil, err
		}
	}
	pool, err = postgres.ConnectMode(ctx, cfg.DatabaseURL, cfg.DBMaxConns, cfg.DatabasePoolMode)
	if err != nil {
		return nil, nil, err
	}
	if cfg.DatabasePoolMode == postgres.PoolSession && cfg.DatabaseDirectURL == cfg.DatabaseURL {
		return pool, pool, nil
	}
	// Two connections: the hourly retention prune holds one while it runs;
	// migrations open their own.
	direct, err = postgres.ConnectMode(ctx, cfg.DatabaseDirectURL, 2, postgres.PoolSession)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return pool, direct, nil
}

// poolerCheckTimeout bounds the start-up check for a transaction pooler.
const poolerCheckTimeout = 15 * time.Second

// refusePooler fails when url (the setting name) leads to a transaction
// pooler; fix says what to set instead.
func refusePooler(ctx context.Context, url, name, fix string) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, poolerCheckTimeout)
	defer cancel()
	pooled, err := postgres.TransactionPooled(ctx, cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if pooled {
		return fmt.Errorf("%s leads to a transaction pooler (such as PgBouncer with pool_mode = transaction): consecutive statements of one connection were answered by different PostgreSQL sessions; %s", name, fix)
	}
	return nil
}

// errDraining is what /readyz reports while the instance drains.
var errDraining = apperr.New(apperr.Unavailable, "The instance is shutting down.")

// ready is the readiness check: the database answers and no stop signal
// has arrived.
func (a *App) ready(ctx context.Context) error {
	if a.draining.Load() {
		return errDraining
	}
	return a.Pool.Ping(ctx)
}

// drain marks the instance not ready and keeps serving for SHUTDOWN_DRAIN,
// long enough for a load balancer's health checks to take it out of
// rotation: requests it still routes here are answered, and none arrives
// at a closed port.
func (a *App) drain() {
	a.draining.Store(true)
	if a.Config.ShutdownDrain <= 0 {
		return
	}
	a.Log.Info("draining: /readyz answers 503", "for", a.Config.ShutdownDrain.String())
	time.Sleep(a.Config.ShutdownDrain)
}
