package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Pool is what services hold: plain queries and transactions.
// *pgxpool.Pool satisfies it.
type Pool interface {
	DB
	Beginner
	// SendBatch sends queued statements in one round trip; outside a
	// transaction they run as one implicit transaction.
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}
