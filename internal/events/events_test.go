package events

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestEnvelopeMatchesBody pins the hand-built envelope to what marshalling
// Body gives, so receivers see the documented shape.
func TestEnvelopeMatchesBody(t *testing.T) {
	book := uuid.New()
	at := time.Date(2026, 11, 22, 6, 35, 54, 819000, time.UTC)
	var bodies bodyBuffer
	for _, ev := range []Event{
		{Type: ContactUpdated, TeamID: uuid.New(), BookID: &book, Data: map[string]any{"id": "x", "name": "A \"quoted\" <b>"}},
		{Type: MemberJoined, TeamID: uuid.New(), Data: map[string]any{"user_id": "u"}},
	} {
		data, err := json.Marshal(ev.Data)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(Body{Event: ev.Type, Timestamp: at, TeamID: ev.TeamID, BookID: ev.BookID, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		if got := envelope(ev, at, data); string(got) != string(want) {
			t.Errorf("envelope\n got %s\nwant %s", got, want)
		}
		if got, err := bodies.body(ev, at); err != nil || string(got) != string(want) {
			t.Errorf("bodyBuffer\n got %s (%v)\nwant %s", got, err, want)
		}
	}
}
