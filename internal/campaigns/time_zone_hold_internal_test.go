package campaigns

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// A change of a contact's time zone lets its window holds go in the
// statement that changes it, whoever writes it, and the next claim reads
// the window in the new zone; other holds stay, and a write that keeps
// the zone changes nothing.
func TestTimeZoneChangeReleasesWindowHolds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	team, book, campaign, step, abCampaign, abStep := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	ann, ben := uuid.New(), uuid.New()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
	}
	exec(`INSERT INTO teams (id, name) VALUES ($1, 'T')`, team)
	exec(`INSERT INTO books (id, team_id, name, slug) VALUES ($1, $2, 'B', 'b')`, book, team)
	exec(`INSERT INTO contacts (id, book_id, first_name, time_zone, emails) VALUES
		($1, $3, 'Ann', 'Asia/Tokyo', '[{"address":"ann@example.com"}]'), ($2, $3, 'Ben', 'Asia/Tokyo', '[{"address":"ben@example.com"}]')`, ann, ben, book)
	exec(`INSERT INTO campaigns (id, book_id, name, status) VALUES ($1, $3, 'Window', 'active'), ($2, $3, 'AB', 'active')`, campaign, abCampaign, book)
	exec(`INSERT INTO campaign_steps (id, campaign_id, step_type, name, sort_order, schedule_type, send_window) VALUES
		($1, $2, 'email', 'S', 1, 'immediate', '{"days":["mon","tue","wed","thu","fri"],"start":"09:00","end":"17:00"}')`, step, campaign)
	exec(`INSERT INTO campaign_steps (id, campaign_id, step_type, name, sort_order, schedule_type) VALUES ($1, $2, 'email', 'S', 1, 'immediate')`, abStep, abCampaign)
	exec(`INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at) VALUES ($1, $2, now()), ($1, $3, now())`, campaign, ann, ben)
	// Ann also waits for an A/B decision in the other campaign.
	exec(`INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at, held_until, held_step_id) VALUES ($1, $2, now(), now() + interval '1 hour', $3)`,
		abCampaign, ann, abStep)

	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) // Monday, 18:00 in Tokyo
	claim := func() (claimed []uuid.UUID, held int) {
		t.Helper()
		after := uuid.Nil
		for {
			rows, last, h, err := store{}.claimDue(ctx, pool, claimParams{
				CampaignID: campaign, StepID: step, Limit: 500, ClaimID: uuid.New(), MaxTries: 3, Now: now, After: after,
				LeaseUntil: now.Add(time.Minute),
				Window:     &claimWindow{days: []int32{1, 2, 3, 4, 5}, start: 9 * 60, end: 17 * 60, defaultTZ: "UTC"},
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				claimed = append(claimed, r.ContactID)
			}
			held += h
			if last == uuid.Nil {
				return claimed, held
			}
			after = last
		}
	}
	heldUntil := func(campaign, contact uuid.UUID) *time.Time {
		t.Helper()
		var at *time.Time
		if err := pool.QueryRow(ctx, `SELECT held_until FROM campaign_participants WHERE campaign_id = $1 AND contact_id = $2`, campaign, contact).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	if claimed, held := claim(); len(claimed) != 0 || held != 2 {
		t.Fatalf("Monday 18:00 Tokyo: claimed %v, held %d; want both held", claimed, held)
	}
	// A write that keeps the zone keeps the hold.
	exec(`UPDATE contacts SET first_name = 'Ann', time_zone = 'Asia/Tokyo' WHERE id = $1`, ann)
	if heldUntil(campaign, ann) == nil {
		t.Fatal("a write keeping the zone let the hold go")
	}
	// Ann moves to London: 09:00 there, inside the window.
	exec(`UPDATE contacts SET time_zone = 'Europe/London' WHERE id = $1`, ann)
	if at := heldUntil(campaign, ann); at != nil {
		t.Fatalf("Ann still held until %s after her zone changed", at)
	}
	if heldUntil(campaign, ben) == nil {
		t.Fatal("Ben's hold went with Ann's zone change")
	}
	if heldUntil(abCampaign, ann) == nil {
		t.Fatal("the A/B hold, which no zone decides, went with the zone change")
	}
	if claimed, held := claim(); len(claimed) != 1 || claimed[0] != ann || held != 0 {
		t.Fatalf("after the change: claimed %v, held %d; want Ann claimed in her new zone and Ben not read", claimed, held)
	}
	// A zone cleared (the book's default, UTC here) counts as a change.
	exec(`UPDATE contacts SET time_zone = NULL WHERE id = $1`, ben)
	if claimed, held := claim(); len(claimed) != 1 || claimed[0] != ben || held != 0 {
		t.Fatalf("after Ben's zone was cleared: claimed %v, held %d; want Ben claimed", claimed, held)
	}
}
