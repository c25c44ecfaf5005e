package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
)

// TestLabelSortOrderBounds: sort_order is 0..1,000,000, and appending
// after a label at the bound still works.
func TestLabelSortOrderBounds(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	book := owner.CreateBook("B")
	labels := "/api/books/" + book + "/labels"
	first := owner.Post(labels, map[string]any{"name": "first"}).Expect(http.StatusCreated).String("data.id")

	for _, v := range []any{2147483647, 2147483648, int64(9223372036854775807), 1000001, -1} {
		r := owner.Patch(labels+"/"+first, map[string]any{"sort_order": v}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		if !strings.Contains(r.String("error.message"), "sort_order") {
			t.Errorf("sort_order %v: message %q does not name sort_order", v, r.String("error.message"))
		}
	}
	owner.Patch(labels+"/"+first, map[string]any{"sort_order": 1000000}).Expect(http.StatusOK)
	for _, name := range []string{"zeta", "alpha"} {
		r := owner.Post(labels, map[string]any{"name": name}).Expect(http.StatusCreated)
		if r.Int("data.sort_order") != 1000000 {
			t.Fatalf("appended at %d, want the bound", r.Int("data.sort_order"))
		}
	}
	list := owner.Get(labels).Expect(http.StatusOK)
	var got []string
	for i := range list.Len("data") {
		got = append(got, list.String(fmt.Sprintf("data.%d.name", i)))
	}
	if strings.Join(got, ",") != "alpha,first,zeta" {
		t.Fatalf("order %v: labels at the bound sort by name", got)
	}
	// The database holds the bound too.
	if _, err := env.App.Pool.Exec(t.Context(), `UPDATE labels SET sort_order = 2147483647 WHERE id = $1`, first); err == nil {
		t.Fatal("the database accepted a sort_order beyond the bound")
	}
	expectNoErrorLogged(t, env)
}

// TestPagingBounds: paging values are integers of 0..2147483647.
func TestPagingBounds(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	key := owner.NewKey().InBook(owner.CreateBook("B"))
	for _, q := range []string{"limit=2147483648", "offset=2147483648", "offset=9223372036854775807", "offset=-1", "limit=1.5"} {
		r := key.Get("/api/v1/contacts?"+q).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		if name, _, _ := strings.Cut(q, "="); !strings.Contains(r.String("error.message"), "query parameter "+name) {
			t.Errorf("%s: %s", q, r.Body)
		}
	}
	r := key.Get("/api/v1/contacts?offset=2147483647&limit=2147483647").Expect(http.StatusOK)
	if r.Len("data") != 0 || r.Int("meta.limit") != 200 {
		t.Fatalf("the largest values: %s", r.Body)
	}
}
