package httpapi_test

import (
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
)

// BenchmarkAuthenticatedGetByID measures GET /api/contacts/{id} with a
// login token: the dashboard's hot path, authentication included (the
// token's signature, and whether its session is still open).
func BenchmarkAuthenticatedGetByID(b *testing.B) {
	env := apptest.New(b, apptest.Options{RealClock: true})
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
