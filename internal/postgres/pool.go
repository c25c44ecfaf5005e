package postgres

// Pool is what services hold: plain queries and transactions.
// *pgxpool.Pool satisfies it.
type Pool interface {
	DB
	Beginner
}
