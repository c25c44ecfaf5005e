package webhooks

import (
	"context"

	"github.com/riverqueue/river"
)

// RunRecovery works a recovery job as the queue would, again: what a rerun
// after a crash does.
func RunRecovery(ctx context.Context, s *Service, args RecoveryArgs) error {
	w := &recoveryWorker{s: s}
	return w.Work(ctx, &river.Job[RecoveryArgs]{Args: args})
}
