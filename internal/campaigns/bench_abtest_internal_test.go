package campaigns

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// BenchmarkABDecision decides the A/B test of a step sent to 100,000
// participants, every one of them in the test (test_percent 100: the
// most rows the decision reads), two variants, 20 % of the emails opened.
// Each iteration undoes the decision first (not timed).
//
//	go test -run '^$' -bench BenchmarkABDecision -benchtime 5x ./internal/campaigns/
func BenchmarkABDecision(b *testing.B) {
	ctx := context.Background()
	pool := pgtest.Setup(b).Pool
	team, book, campaign, step := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	varA, varB := uuid.New(), uuid.New()
	sentAt := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	seed := []string{
		`INSERT INTO teams (id, name) VALUES ('` + team.String() + `', 'AB')`,
		`INSERT INTO books (id, team_id, name, slug) VALUES ('` + book.String() + `', '` + team.String() + `', 'AB', 'ab')`,
		`INSERT INTO contacts (book_id, first_name) SELECT '` + book.String() + `', 'c' || g FROM generate_series(1, 100000) g`,
		`INSERT INTO campaigns (id, book_id, name, status) VALUES ('` + campaign.String() + `', '` + book.String() + `', 'AB', 'active')`,
		`INSERT INTO campaign_steps (id, campaign_id, step_type, name, sort_order, schedule_type, variants, ab_test, test_started_at, test_quota)
		 VALUES ('` + step.String() + `', '` + campaign.String() + `', 'email', 'Launch', 0, 'immediate',
		         '[{"id": "` + varA.String() + `", "subject": "A"}, {"id": "` + varB.String() + `", "subject": "B"}]',
		         '{"metric": "opens", "test_percent": 100, "decide_after_minutes": 240}', '2026-03-02 09:00Z', NULL)`,
		`INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at) SELECT '` + campaign.String() + `', id, now() FROM contacts`,
		`INSERT INTO campaign_step_completions (step_id, participant_id, campaign_id, result, completed_at, tries, token_hash, variant_id)
		 SELECT '` + step.String() + `', p.id, p.campaign_id, 'success', '2026-03-02 09:00Z', 1, '\x00',
		        CASE WHEN row_number() OVER (ORDER BY p.id) % 2 = 0 THEN '` + varA.String() + `'::uuid ELSE '` + varB.String() + `'::uuid END
		 FROM campaign_participants p WHERE p.campaign_id = '` + campaign.String() + `'`,
		`INSERT INTO email_deliveries (participant_id, step_id, state, state_at, delivered_at, opened_at)
		 SELECT c.participant_id, c.step_id, 'delivered', '2026-03-02 09:01Z', '2026-03-02 09:01Z',
		        CASE WHEN random() < 0.2 THEN '2026-03-02 10:00Z'::timestamptz END
		 FROM campaign_step_completions c WHERE c.step_id = '` + step.String() + `'`,
		`VACUUM ANALYZE`,
	}
	for _, q := range seed {
		if _, err := pool.Exec(ctx, q); err != nil {
			b.Fatalf("seed: %v\n%s", err, q)
		}
	}
	st := Step{ID: step, ABTest: &ABTest{Metric: MetricOpens, TestPercent: 100, DecideAfterMinutes: 240}}
	now := sentAt.Add(5 * time.Hour)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if _, err := pool.Exec(ctx, `UPDATE campaign_steps SET winner_variant_id = NULL, decided_at = NULL WHERE id = $1`, step); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		winner, decided, err := store{}.decideTest(ctx, pool, st, now, now)
		elapsed := time.Since(start)
		if err != nil || !decided || winner == nil {
			b.Fatalf("decide: %v %v %v", winner, decided, err)
		}
		b.ReportMetric(float64(elapsed.Microseconds())/1000, "ms/decision")
	}
}
