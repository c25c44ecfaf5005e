package audit_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

func TestRecordWritesTheEntry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	team, target := uuid.New(), uuid.New()
	err := audit.Record(ctx, pool, audit.Entry{
		TeamID: team, Actor: audit.System(), Action: "webhook.disabled",
		TargetType: "webhook", TargetID: target.String(),
		Details: map[string]any{"reason": "failing since 2026-11-20"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var actorType, action, targetID, reason string
	err = pool.QueryRow(ctx, `SELECT actor_type, action, target_id, details->>'reason' FROM audit_log WHERE team_id = $1`, team).
		Scan(&actorType, &action, &targetID, &reason)
	if err != nil {
		t.Fatal(err)
	}
	if actorType != "system" || action != "webhook.disabled" || targetID != target.String() || reason != "failing since 2026-11-20" {
		t.Fatalf("entry = %s %s %s %q", actorType, action, targetID, reason)
	}
}
