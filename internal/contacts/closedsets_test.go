package contacts

import "testing"

// Every sort a listing accepts has its order, and every order is accepted.
func TestSortsHaveOrders(t *testing.T) {
	t.Parallel()
	for _, s := range Sorts {
		if _, ok := sortOrders[s]; !ok {
			t.Errorf("sort %q has no sortOrder", s)
		}
	}
	if len(sortOrders) != len(Sorts) {
		t.Errorf("%d sort orders for %d sorts", len(sortOrders), len(Sorts))
	}
}
