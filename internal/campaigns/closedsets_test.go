package campaigns

import "testing"

// Every filter of a step's contacts has its query, and every query is a filter.
func TestStepContactFiltersHaveQueries(t *testing.T) {
	t.Parallel()
	for _, f := range StepContactFilters {
		if _, ok := stepResults[f]; !ok {
			t.Errorf("filter %q has no query in stepResults", f)
		}
	}
	if len(stepResults) != len(StepContactFilters)+1 { // and "" for all
		t.Errorf("%d queries for %d filters and the empty one", len(stepResults), len(StepContactFilters))
	}
	if f, err := ParseStepContactFilter("nope"); err == nil {
		t.Errorf("ParseStepContactFilter(nope) = %q", f)
	}
}
