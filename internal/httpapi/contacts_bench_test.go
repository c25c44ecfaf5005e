package httpapi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
)

// seedBenchSQL fills a book with n contacts in one statement; it is
// scripts/bench/seed.sql with the book id and count as parameters. Contact
// g is "<first> Person<g>" of "Company <g % 1000>", created g minutes after
// a base time, starred when g is divisible by 10.
const seedBenchSQL = `
INSERT INTO contacts (book_id, first_name, last_name, company, job_title, emails, phones, starred, created_at, updated_at)
SELECT $1,
       (ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald','Ken','Dennis','Margaret','Linus'])[1 + g % 10],
       'Person' || g, 'Company ' || (g % 1000), 'Engineer',
       jsonb_build_array(jsonb_build_object('address', 'user' || g || '@example.com', 'label', 'work', 'primary', true)),
       jsonb_build_array(jsonb_build_object('number', '+1 555 ' || lpad((g % 10000)::text, 4, '0'), 'label', 'mobile', 'primary', true)),
       g % 10 = 0,
       timestamptz '2025-01-01' + g * interval '1 minute',
       timestamptz '2025-01-01' + g * interval '1 minute'
FROM generate_series($2::int, $3::int) g
RETURNING id`

func seedBench(b *testing.B, env *apptest.Env, book string, from, to int) []string {
	b.Helper()
	rows, err := env.App.Pool.Query(context.Background(), seedBenchSQL, book, from, to)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	ids := make([]string, 0, to-from+1)
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id.String())
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return ids
}

func benchExec(b *testing.B, env *apptest.Env, sql string, args ...any) {
	b.Helper()
	if _, err := env.App.Pool.Exec(context.Background(), sql, args...); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkContact100k measures the contact endpoints over HTTP (through
// the real router and PostgreSQL) on a book of 100,000 contacts; the bulk
// operations act on 10,000 of them. ns/op is one request, client included.
func BenchmarkContact100k(b *testing.B) {
	env := apptest.Setup(b, apptest.Options{Bare: true, RealClock: true}).Env
	owner := env.Signup("bench")
	book := owner.CreateBook("Bench")
	key := owner.NewKey().InBook(book)
	ids := seedBench(b, env, book, 1, 100000)
	// As autovacuum leaves an insert-only table: analysed, and its
	// visibility map set (index-only scans for the list's pages).
	benchExec(b, env, `VACUUM ANALYZE contacts`)
	tenK := ids[:10000]
	one := ids[len(ids)/2]
	field := owner.Post("/api/books/"+book+"/fields", map[string]any{"key": "tier", "name": "Tier", "type": "text"}).Expect(201).String("data.id")

	run := func(name string, fn func(b *testing.B)) {
		b.Run(name, func(b *testing.B) {
			env.T = b // failures inside report on the sub-benchmark
			fn(b)
		})
	}
	run("GetByID", func(b *testing.B) {
		for b.Loop() {
			key.Get("/api/v1/contacts/" + one).Expect(200)
		}
	})
	run("List50WithTotal", func(b *testing.B) {
		for b.Loop() {
			if key.Get("/api/v1/contacts?limit=50").Expect(200).Int("meta.total") < 100000 {
				b.Fatal("total")
			}
		}
	})
	run("List50Offset5000", func(b *testing.B) {
		for b.Loop() {
			key.Get("/api/v1/contacts?limit=50&offset=5000&sort=name").Expect(200)
		}
	})
	for _, off := range []int{50000, 99950} {
		run(fmt.Sprintf("List50Offset%dWithTotal", off), func(b *testing.B) {
			for b.Loop() {
				if key.Get(fmt.Sprintf("/api/v1/contacts?limit=50&offset=%d", off)).Expect(200).Len("data") != 50 {
					b.Fatal("page")
				}
			}
		})
	}
	// The page 50,000 contacts deep, reached by the cursor of the one before.
	cursor := key.Get("/api/v1/contacts?limit=50&offset=49950").Expect(200).String("meta.next_cursor")
	run("List50Cursor50000WithTotal", func(b *testing.B) {
		for b.Loop() {
			if key.Get("/api/v1/contacts?limit=50&cursor="+cursor).Expect(200).Len("data") != 50 {
				b.Fatal("page")
			}
		}
	})
	run("ListQ", func(b *testing.B) {
		for b.Loop() {
			if key.Get("/api/v1/contacts?q=person4242").Expect(200).Int("meta.total") != 11 { // 4242 and 42420..42429
				b.Fatal("q")
			}
		}
	})
	run("ListQEmail", func(b *testing.B) {
		for b.Loop() {
			if key.Get("/api/v1/contacts?q=user777%40").Expect(200).Int("meta.total") != 1 {
				b.Fatal("q")
			}
		}
	})
	// Each change runs without a webhook of the team (no events are
	// written) and again with one subscribed to the contact events (every
	// event written in the change's transaction; no engine runs here, so
	// they stay queued).
	watch := func() (stop func()) {
		id := owner.Post("/api/teams/"+owner.TeamID+"/webhooks", map[string]any{
			"url": "http://127.0.0.1:9/hook", "events": []string{"contact.created", "contact.updated", "contact.deleted"},
		}).Expect(201).String("data.webhook.id")
		return func() {
			env.T = b // the last sub-benchmark has ended
			owner.Delete("/api/teams/" + owner.TeamID + "/webhooks/" + id).Expect(204)
		}
	}
	created := 0
	next := 200000 // first number of the next seeded batch, across reruns
	value := 0     // every request changes all 10,000 values, across reruns too
	label := owner.Post("/api/books/"+book+"/labels", map[string]any{"name": "on deleted"}).Expect(201).String("data.id")
	for _, suffix := range []string{"", "WithWebhook"} {
		var stop func()
		if suffix != "" {
			stop = watch()
		}
		run("Create"+suffix, func(b *testing.B) {
			for b.Loop() {
				created++
				key.Post("/api/v1/contacts", map[string]any{
					"first_name": "New", "last_name": fmt.Sprint("Contact ", created), "company": "Bench Inc",
					"emails": []any{map[string]any{"address": fmt.Sprintf("new%d@bench.example", created), "label": "work", "primary": true}},
					"phones": []any{map[string]any{"number": "+1 555 0100", "label": "mobile"}},
				}).Expect(201)
			}
		})
		run("BulkAddLabel10k"+suffix, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				label := owner.Post("/api/books/"+book+"/labels", map[string]any{"name": fmt.Sprint("add ", suffix, i)}).Expect(201).String("data.id")
				b.StartTimer()
				if n := key.Post("/api/v1/contacts/bulk-add-label", map[string]any{"contact_ids": tenK, "label_id": label}).Expect(200).Int("data.added"); n != 10000 {
					b.Fatalf("added %d", n)
				}
			}
		})
		run("BulkRemoveLabel10k"+suffix, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				label := owner.Post("/api/books/"+book+"/labels", map[string]any{"name": fmt.Sprint("remove ", suffix, i)}).Expect(201).String("data.id")
				benchExec(b, env, `INSERT INTO contact_labels (contact_id, label_id) SELECT unnest($1::uuid[]), $2`, tenK, label)
				b.StartTimer()
				if n := key.Post("/api/v1/contacts/bulk-remove-label", map[string]any{"contact_ids": tenK, "label_id": label}).Expect(200).Int("data.removed"); n != 10000 {
					b.Fatalf("removed %d", n)
				}
			}
		})
		run("BulkUpdateField10k"+suffix, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				value++
				if n := key.Post("/api/v1/contacts/bulk-update-field", map[string]any{"contact_ids": tenK, "field_definition_id": field, "value": fmt.Sprint("v", value)}).
					Expect(200).Int("data.updated"); n != 10000 {
					b.Fatalf("updated %d", n)
				}
			}
		})
		run("BulkDelete10k"+suffix, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				fresh := seedBench(b, env, book, next, next+9999)
				next += 10000
				benchExec(b, env, `INSERT INTO contact_labels (contact_id, label_id) SELECT unnest($1::uuid[]), $2`, fresh, label)
				benchExec(b, env, `INSERT INTO contact_field_values (contact_id, field_id, value) SELECT unnest($1::uuid[]), $2, 'x'`, fresh, field)
				b.StartTimer()
				if n := key.Post("/api/v1/contacts/bulk-delete", map[string]any{"contact_ids": fresh}).Expect(200).Int("data.deleted"); n != 10000 {
					b.Fatalf("deleted %d", n)
				}
			}
		})
		if stop != nil {
			stop()
		}
	}
}
