package campaigns

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// Participants held by a send window are not read by later claims: after
// a first round of claims holds the 2,700 participants in Tokyo (18:00
// there) and claims the 300 in UTC (09:00), the next claim's walk reads
// no participant rows but the unheld ones, and neither does the pass's
// completion sweep.
func TestWindowHeldParticipantsAreNotRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	team, book, campaign, step := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	seed := []string{
		`INSERT INTO teams (id, name) VALUES ('` + team.String() + `', 'Plan')`,
		`INSERT INTO books (id, team_id, name, slug) VALUES ('` + book.String() + `', '` + team.String() + `', 'Plan', 'plan')`,
		`INSERT INTO contacts (book_id, first_name, time_zone, emails)
		 SELECT '` + book.String() + `', 'c' || g, CASE WHEN g <= 2700 THEN 'Asia/Tokyo' ELSE 'UTC' END,
		        jsonb_build_array(jsonb_build_object('address', 'c' || g || '@example.com', 'label', 'work', 'primary', true))
		 FROM generate_series(1, 3000) g`,
		`INSERT INTO campaigns (id, book_id, name, status) VALUES ('` + campaign.String() + `', '` + book.String() + `', 'new', 'active')`,
		`INSERT INTO campaign_steps (id, campaign_id, step_type, name, sort_order, schedule_type)
		 VALUES ('` + step.String() + `', '` + campaign.String() + `', 'email', 'Step', 1, 'immediate')`,
		`INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at)
		 SELECT '` + campaign.String() + `', id, now() FROM contacts`,
		`VACUUM ANALYZE`,
	}
	for _, q := range seed {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("seed: %v\n%s", err, q)
		}
	}
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) // Monday
	params := func() claimParams {
		return claimParams{
			CampaignID: campaign, StepID: step, Limit: 500, ClaimID: uuid.New(), MaxTries: 3, Now: now,
			LeaseUntil: now.Add(time.Minute),
			Window:     &claimWindow{days: []int32{1, 2, 3, 4, 5}, start: 9 * 60, end: 17 * 60, defaultTZ: "UTC"},
		}
	}
	claimed, held, after := 0, 0, uuid.Nil
	for {
		p := params()
		p.After = after
		rows, last, h, err := store{}.claimDue(ctx, pool, p)
		if err != nil {
			t.Fatal(err)
		}
		claimed, held = claimed+len(rows), held+h
		if last == uuid.Nil {
			break
		}
		after = last
	}
	if claimed != 300 || held != 2700 {
		t.Fatalf("first round: %d claimed, %d held; want 300 and 2700", claimed, held)
	}
	if _, err := pool.Exec(ctx, `VACUUM campaign_participants`); err != nil {
		t.Fatal(err)
	}
	// 20 new UTC participants fall due.
	if _, err := pool.Exec(ctx, `
		WITH c AS (INSERT INTO contacts (book_id, first_name, emails)
		           SELECT $1, 'n' || g, jsonb_build_array(jsonb_build_object('address', 'n' || g || '@example.com'))
		           FROM generate_series(1, 20) g RETURNING id)
		INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at) SELECT $2, id, now() FROM c`, book, campaign); err != nil {
		t.Fatal(err)
	}

	capture := &statementCapture{}
	if _, _, _, err := (store{}).claimDue(ctx, capture, params()); !errors.Is(err, errCaptured) {
		t.Fatalf("claimDue: %v", err)
	}
	explain := func(sql string, args ...any) planNode {
		t.Helper()
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		var plan []byte
		if err := tx.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+sql, args...).Scan(&plan); err != nil {
			t.Fatalf("explain: %v", err)
		}
		var doc []struct {
			Plan planNode `json:"Plan"`
		}
		if err := json.Unmarshal(plan, &doc); err != nil || len(doc) != 1 {
			t.Fatalf("plan: %v\n%s", err, plan)
		}
		return doc[0].Plan
	}
	// 300 done (their completion rows answer the probe), 20 due.
	if read := explain(capture.sql, capture.args...).rowsOf("campaign_participants"); read > 320+20 {
		t.Fatalf("a claim read %.0f participant rows with 2,700 held and 320 not", read)
	}
	sweep := &statementCapture{}
	if _, err := (store{}).completeParticipants(ctx, sweep, campaign, []uuid.UUID{step}, now); !errors.Is(err, errCaptured) {
		t.Fatalf("completeParticipants: %v", err)
	}
	if read := explain(sweep.sql, sweep.args...).rowsOf("campaign_participants"); read > 320 {
		t.Fatalf("the completion sweep's walk read %.0f participant rows", read)
	}
}
