package httpapi_test

import (
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
)

// TestErrorDetails: a request with several invalid fields names each in
// the error's details (JSON path and what is wrong), the message repeats
// the first; a rule of the domain that names a field names it too; an
// error about no field has no details.
func TestErrorDetails(t *testing.T) {
	t.Parallel()
	c := apptest.Setup(t).O

	r := c.Post("/api/contacts", map[string]any{
		"first_name": "Ann",
		"emails":     []map[string]any{{"address": "ann@example.com"}, {"address": "not an address"}},
		"website":    strings.Repeat("w", 3000),
	}).ExpectError(400, "INVALID_INPUT")
	var details []struct{ Field, Message string }
	r.Decode("error.details", &details)
	fields := map[string]string{}
	for _, d := range details {
		fields[d.Field] = d.Message
	}
	if len(details) < 2 || fields["emails[1].address"] == "" || fields["website"] == "" {
		t.Fatalf("details %+v: want emails[1].address and website", details)
	}
	if msg := r.String("error.message"); msg != details[0].Message {
		t.Fatalf("message %q, want the first detail's %q", msg, details[0].Message)
	}

	// A domain rule following the "`field` ..." convention.
	r = c.Post("/api/contacts", map[string]any{"first_name": "Ann", "labels": []string{"x"}}).ExpectError(400, "INVALID_INPUT")
	r.Decode("error.details", &details)
	if len(details) != 1 || details[0].Field != "labels" {
		t.Fatalf("details %+v: want one naming labels", details)
	}

	// Not about a field: no details member at all.
	r = c.Get("/api/contacts/"+"00000000-0000-0000-0000-000000000000").ExpectError(404, "NOT_FOUND")
	if r.Has("error.details") {
		t.Fatalf("a not-found error carries details: %v", r.Value("error.details"))
	}
}
