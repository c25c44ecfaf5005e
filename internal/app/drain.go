package app

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/config"
	"github.com/contactbook/contactbook/internal/postgres"
)

// connect opens the service's pool on DATABASE_URL and, when that is a
// transaction pooler or another address than DATABASE_DIRECT_URL, a small
// pool straight to PostgreSQL for what needs a session.
func connect(ctx context.Context, cfg config.Config) (pool, direct *pgxpool.Pool, err error) {
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
