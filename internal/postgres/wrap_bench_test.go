package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// BenchmarkWrapRows reads 10,000 rows through the pool and through the
// translating wrapper: the wrapper adds one allocation per query and none
// per row.
func BenchmarkWrapRows(b *testing.B) {
	ctx := context.Background()
	pool := pgtest.Setup(b).Pool
	for _, bc := range []struct {
		name string
		db   postgres.DB
	}{{"pool", pool}, {"wrapped", postgres.Wrap(pool)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rows, _ := bc.db.Query(ctx, `SELECT g, g::text FROM generate_series(1, 10000) g`)
				var (
					n int
					s string
				)
				if _, err := pgx.ForEachRow(rows, []any{&n, &s}, func() error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
