package postgres

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"
)

// registerUUID makes google/uuid values travel as 16 binary bytes in both
// directions. pgx-google-uuid covers uuid.UUID arguments and NullUUID; two
// shapes slip past it because pgx tries database/sql's interfaces before
// any wrapper: a *uuid.UUID scan target (every id column) was filled by
// formatting the UUID as text and parsing it back, and a *uuid.UUID
// argument (a nullable id) went the same way out. On a bulk change of
// 10,000 contacts those conversions were a tenth of the request's CPU.
func registerUUID(m *pgtype.Map) {
	pgxuuid.Register(m)
	t := &pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}}
	m.RegisterType(t)
	m.RegisterType(&pgtype.Type{Name: "_uuid", OID: pgtype.UUIDArrayOID, Codec: &pgtype.ArrayCodec{ElementType: t}})
}

// uuidCodec adds binary plans for *uuid.UUID to pgx-google-uuid's codec.
type uuidCodec struct{ pgxuuid.UUIDCodec }

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*uuid.UUID); ok && format == pgtype.BinaryFormatCode {
		return scanUUID{}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

func (c uuidCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(*uuid.UUID); ok && format == pgtype.BinaryFormatCode {
		return encodeUUIDPointer{}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

type scanUUID struct{}

func (scanUUID) Scan(src []byte, dst any) error {
	switch len(src) {
	case 16:
		copy(dst.(*uuid.UUID)[:], src)
		return nil
	case 0:
		if src == nil {
			return errors.New("cannot scan NULL into *uuid.UUID")
		}
	}
	return fmt.Errorf("invalid length for uuid: %d", len(src))
}

type encodeUUIDPointer struct{}

func (encodeUUIDPointer) Encode(value any, buf []byte) ([]byte, error) {
	id := value.(*uuid.UUID)
	if id == nil {
		return nil, nil // NULL
	}
	return append(buf, id[:]...), nil
}
