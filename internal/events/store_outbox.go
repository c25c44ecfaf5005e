package events

// The webhook engine fans the queue out and prunes the outbox in
// statements that also write its own tables (deliveries), one statement
// each so that a crash leaves nothing half done; these fragments are
// those statements' part over the outbox.

// QueuedSQL is the query, for a WITH of the statement that fans events
// out, of up to limit (an SQL expression) queued events as (id, team_id,
// type), oldest first. It locks them and skips those another transaction
// holds, so several instances dispatch at once without waiting on each
// other; DequeueSQL then takes them off the queue.
func QueuedSQL(limit string) string {
	return `SELECT event_id AS id, team_id, type FROM event_queue
			ORDER BY occurred_at
			LIMIT ` + limit + `
			FOR UPDATE SKIP LOCKED`
}

// DequeueSQL is the data-modifying statement that takes off the queue
// the events of the query named taken (its column id, as QueuedSQL
// gives), returning 1 per event.
func DequeueSQL(taken string) string {
	return `DELETE FROM event_queue q USING ` + taken + ` WHERE q.event_id = ` + taken + `.id RETURNING 1`
}

// PruneSQL is the data-modifying statement that deletes, of the events
// whose ids the query named batch gives (column id), those that occurred
// before cutoff (an SQL expression) and are no longer queued, unless held
// keeps them: the caller's SQL test of one term (EXISTS (...)) on the
// event aliased e, such as a delivery still to send. It returns 1 per
// event deleted.
func PruneSQL(batch, cutoff, held string) string {
	return `DELETE FROM events e USING ` + batch + ` b
				WHERE e.id = b.id AND e.occurred_at < ` + cutoff + `
				  AND NOT EXISTS (SELECT 1 FROM event_queue q WHERE q.event_id = e.id)
				  AND NOT ` + held + `
				RETURNING 1`
}

// WantedSQL is the SQL test, for a statement of another package that
// reads a book's team with it, of whether an active webhook of the team
// teamExpr subscribes to the event type typeExpr: what Outbox.Wanted asks,
// with the same ordering against webhooks being created.
func WantedSQL(teamExpr, typeExpr string) string {
	return `events_wanted(` + teamExpr + `, ` + typeExpr + `)`
}
