package postgres

import "context"

// DeleteInBatches runs sql, a DELETE of at most limit rows whose last
// parameter is that limit, until a run deletes fewer, and says how many
// rows went in all: a prune of a large backlog holds no lock and writes
// no WAL burst longer than one batch takes.
func DeleteInBatches(ctx context.Context, db DB, limit int, sql string, args ...any) (int64, error) {
	args = append(args[:len(args):len(args)], limit)
	var total int64
	for {
		tag, err := db.Exec(ctx, sql, args...)
		if err != nil {
			return total, err
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(limit) {
			return total, nil
		}
	}
}
