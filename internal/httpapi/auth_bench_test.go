package httpapi_test

import (
	"context"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
)

// BenchmarkAuthenticatedGetByID measures GET /api/contacts/{id} with a
// login token: the dashboard's hot path, authentication included (the
// token's signature, and whether its session is still open).
func BenchmarkAuthenticatedGetByID(b *testing.B) {
	env := apptest.Setup(b, apptest.Options{Bare: true, RealClock: true}).Env
	owner := env.Signup("bench")
	book := owner.CreateBook("Bench")
	ids := seedBench(b, env, book, 1, 1000)
	benchExec(b, env, `ANALYZE`)
	c := owner.InBook(book)
	path := "/api/contacts/" + ids[len(ids)/2]
	c.Get(path).Expect(200)
	b.ResetTimer()
	for b.Loop() {
		c.Get(path).Expect(200)
	}
}

// BenchmarkKeyGetByID measures GET /api/v1/contacts/{id} with an API key,
// without the per-key rate limit and with it (a limit the benchmark never
// reaches, so every request is counted and answered): the difference is
// what the limit costs the public API's hot path.
func BenchmarkKeyGetByID(b *testing.B) {
	for _, limit := range []string{"0", "100000000"} {
		name := "limit=off"
		if limit != "0" {
			name = "limit=on"
		}
		b.Run(name, func(b *testing.B) {
			env := apptest.Setup(b, apptest.Options{Bare: true, RealClock: true, Env: map[string]string{"API_KEY_RATE_LIMIT": limit}}).Env
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			go func() { _ = env.App.KeyLimits.Run(ctx) }()
			owner := env.Signup("bench")
			book := owner.CreateBook("Bench")
			ids := seedBench(b, env, book, 1, 1000)
			benchExec(b, env, `ANALYZE`)
			c := owner.NewKey().InBook(book)
			path := "/api/v1/contacts/" + ids[len(ids)/2]
			c.Get(path).Expect(200)
			b.ResetTimer()
			for b.Loop() {
				c.Get(path).Expect(200)
			}
		})
	}
}
