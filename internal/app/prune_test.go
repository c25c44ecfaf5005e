package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/forms"
	"github.com/contactbook/contactbook/internal/idempotency"
	"github.com/contactbook/contactbook/internal/tracking"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// Every job that deletes old rows is a prune, named <what>_prune; one
// renamed to that still works the jobs an older instance queued under its
// old name.
func TestPruneJobsAreNamedOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args river.JobArgs
		was  string
	}{
		{accounts.PruneArgs{}, "accounts_sweep"},
		{audit.PruneArgs{}, "audit_log_retention"},
		{webhooks.PruneArgs{}, "webhook_retention"},
		{forms.PruneArgs{}, ""},
		{contacts.TombstonePruneArgs{}, ""},
		{idempotency.PruneArgs{}, ""},
		{tracking.PruneArgs{}, ""},
	} {
		kind := tc.args.Kind()
		if !strings.HasSuffix(kind, "_prune") {
			t.Errorf("%s: a pruning job's kind ends in _prune", kind)
		}
		if tc.was == "" {
			continue
		}
		aliased, ok := tc.args.(river.JobArgsWithKindAliases)
		if !ok || !slices.Contains(aliased.KindAliases(), tc.was) {
			t.Errorf("%s: jobs queued as %s are no longer worked", kind, tc.was)
		}
	}
}
