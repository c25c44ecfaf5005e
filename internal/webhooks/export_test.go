package webhooks

import (
	"context"
	"log/slog"

	"github.com/riverqueue/river"
)

// RunRecovery works a recovery job as the queue would, again: what a rerun
// after a crash does.
func RunRecovery(ctx context.Context, s *Service, args RecoveryArgs) error {
	w := &recoveryWorker{s: s, log: slog.New(slog.DiscardHandler)}
	return w.Work(ctx, &river.Job[RecoveryArgs]{Args: args})
}
