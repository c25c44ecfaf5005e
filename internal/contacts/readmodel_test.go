package contacts_test

import (
	"context"
	"testing"

	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// TestContactRecordsHasEveryColumn: contact_records, the read model other
// packages join (a segment rule may test any column), lists every column
// of contacts. A column added to contacts and not to the view fails here.
func TestContactRecordsHasEveryColumn(t *testing.T) {
	t.Parallel()
	db := pgtest.Setup(t).DB
	var missing []string
	rows, err := db.Query(context.Background(), `
		SELECT column_name FROM information_schema.columns WHERE table_name = 'contacts'
		EXCEPT
		SELECT column_name FROM information_schema.columns WHERE table_name = 'contact_records'
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		missing = append(missing, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("contact_records lacks the contacts columns %v: add them to the view in a migration", missing)
	}
}
