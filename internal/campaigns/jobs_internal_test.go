package campaigns

import (
	"testing"
	"time"
)

// The scheduler's periodic job keeps CAMPAIGN_SCHEDULE's meaning: a
// standard cron expression or a descriptor, read in UTC.
func TestScheduleMapsCampaignSchedule(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	berlin := time.FixedZone("CET", 3600)
	for _, c := range []struct {
		spec     string
		from     time.Time
		want     time.Time
		wantNext time.Time
	}{
		{"*/15 * * * *", at("2026-03-02T10:07:30Z"), at("2026-03-02T10:15:00Z"), at("2026-03-02T10:30:00Z")},
		{"0 9 * * 1", at("2026-03-02T09:00:00Z"), at("2026-03-09T09:00:00Z"), at("2026-03-16T09:00:00Z")},
		// 09:30 in Berlin is 08:30 UTC: the next 09:00 is UTC's.
		{"0 9 * * *", at("2026-03-02T08:30:00Z").In(berlin), at("2026-03-02T09:00:00Z"), at("2026-03-03T09:00:00Z")},
		{"@hourly", at("2026-03-02T10:07:00Z"), at("2026-03-02T11:00:00Z"), at("2026-03-02T12:00:00Z")},
		{"@every 1m", at("2026-03-02T10:07:00Z"), at("2026-03-02T10:08:00Z"), at("2026-03-02T10:09:00Z")},
	} {
		s, err := cronSchedule(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		got := s.Next(c.from)
		if !got.Equal(c.want) || !s.Next(got).Equal(c.wantNext) {
			t.Errorf("%s from %s: %s then %s, want %s then %s", c.spec, c.from, got, s.Next(got), c.want, c.wantNext)
		}
	}
	for _, bad := range []string{"", "not a schedule", "* * * * * *", "61 * * * *"} {
		if _, err := cronSchedule(bad); err == nil {
			t.Errorf("%q must be refused", bad)
		}
	}
}
