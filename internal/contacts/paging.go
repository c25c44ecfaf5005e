package contacts

import (
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
)

// sortOrder is one value of the sort parameter: the column an index of
// the book serves it from, and its direction. Every order ends with the id,
// so it is total and a cursor names one position in it.
type sortOrder struct {
	column string // of contacts c
	desc   bool
	isTime bool // the column is a timestamp (else text)
}

// Sorts is every order a listing may ask for (`sort`); each has its
// sortOrder below.
var Sorts = []string{"created_at", "-created_at", "name", "-name", "updated_at", "-updated_at"}

var sortOrders = map[string]sortOrder{
	"created_at":  {column: "c.created_at", isTime: true},
	"-created_at": {column: "c.created_at", desc: true, isTime: true},
	"updated_at":  {column: "c.updated_at", isTime: true},
	"-updated_at": {column: "c.updated_at", desc: true, isTime: true},
	"name":        {column: "c.sort_name"},
	"-name":       {column: "c.sort_name", desc: true},
}

// orderBy is the ORDER BY clause over the sort column and the id, written
// for the columns named by key and id (c.created_at, p.key, ...).
func (o sortOrder) orderBy(key, id string) string {
	if o.desc {
		return key + " DESC, " + id + " DESC"
	}
	return key + ", " + id
}

// after is the keyset condition for the rows after (key, id) in the
// order: a row comparison the book's index on (book_id, column, id) serves.
func (o sortOrder) after(key, id string) string {
	op := " > "
	if o.desc {
		op = " < "
	}
	return "(" + o.column + ", c.id)" + op + "(" + key + ", " + id + ")"
}

// cursor is a position in a sorted list of a book's contacts: the sort
// key and id of the last contact a page returned. The client gets it
// opaque (base64url of this JSON) and sends it back as is.
type cursor struct {
	Sort string    `json:"s"`
	Key  string    `json:"k"` // RFC 3339 with nanoseconds for times, the text otherwise
	ID   uuid.UUID `json:"i"`
}

var errBadCursor = apperr.Invalidf("The query parameter cursor is not valid: send back meta.next_cursor of a previous page as it was given, with the same sort.")

// encodeCursor makes the opaque cursor of the position after a row whose
// sort key is key (a time.Time or a string).
func encodeCursor(sort string, key any, id uuid.UUID) string {
	c := cursor{Sort: sort, ID: id}
	switch k := key.(type) {
	case time.Time:
		c.Key = k.UTC().Format(time.RFC3339Nano)
	case string:
		c.Key = k
	}
	b, _ := json.Marshal(c) // strings and a UUID: cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// position is where a cursor points: after the row with this sort key
// (the parameter its column compares with) and id, in this sort.
type position struct {
	sort string
	key  any
	id   uuid.UUID
}

// decodeCursor parses a cursor. sort is the sort the request asks for;
// empty means the cursor's own.
func decodeCursor(raw, sort string) (position, error) {
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return position{}, errBadCursor
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.ID == uuid.Nil {
		return position{}, errBadCursor
	}
	o, ok := sortOrders[c.Sort]
	if !ok {
		return position{}, errBadCursor
	}
	if sort != "" && c.Sort != sort {
		return position{}, apperr.Invalidf("The cursor was made for sort=%s; send the same sort (or none) with it.", c.Sort)
	}
	p := position{sort: c.Sort, key: c.Key, id: c.ID}
	if o.isTime {
		if p.key, err = time.Parse(time.RFC3339Nano, c.Key); err != nil {
			return position{}, errBadCursor
		}
	}
	return p, nil
}
