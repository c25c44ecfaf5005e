package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// TestUUIDRoundTrip checks every google/uuid shape the stores use, both
// ways, NULLs included, and that the two shapes pgx would otherwise send
// through database/sql's text conversions take the binary plans.
func TestUUIDRoundTrip(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	id, other := uuid.New(), uuid.New()

	var (
		got    uuid.UUID
		gotPtr *uuid.UUID
		nilPtr *uuid.UUID
		arr    []uuid.UUID
	)
	err := pool.QueryRow(ctx, `SELECT $1::uuid, $2::uuid, $3::uuid, $4::uuid[]`, id, &other, nilPtr, []uuid.UUID{id, other}).
		Scan(&got, &gotPtr, &nilPtr, &arr)
	if err != nil {
		t.Fatal(err)
	}
	if got != id || gotPtr == nil || *gotPtr != other || nilPtr != nil || len(arr) != 2 || arr[0] != id || arr[1] != other {
		t.Fatalf("round trip: got %v %v %v %v", got, gotPtr, nilPtr, arr)
	}
	if err := pool.QueryRow(ctx, `SELECT NULL::uuid`).Scan(&got); err == nil {
		t.Fatal("NULL scanned into uuid.UUID without an error")
	}
	if err := pool.QueryRow(ctx, `SELECT $1::uuid IS NULL`, (*uuid.UUID)(nil)).Scan(new(bool)); err != nil {
		t.Fatal(err)
	}

	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	m := conn.Conn().TypeMap()
	if plan := m.PlanScan(pgtype.UUIDOID, pgtype.BinaryFormatCode, &got); plan == nil || typeName(plan) != "postgres.scanUUID" {
		t.Errorf("scan plan for *uuid.UUID is %s, want the binary one", typeName(plan))
	}
	if plan := m.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, &other); plan == nil || typeName(plan) != "postgres.encodeUUIDPointer" {
		t.Errorf("encode plan for *uuid.UUID is %s, want the binary one", typeName(plan))
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }
