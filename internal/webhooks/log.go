package webhooks

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// LogFilter selects and pages a webhook's delivery log.
type LogFilter struct {
	// Limit is the page size: 0 means the default, above the maximum it
	// is clamped.
	Limit int
	// Event keeps the attempts of one event type ("" for all).
	Event string
	// Success keeps the attempts that succeeded (true) or failed.
	Success *bool
	// Since keeps the attempts made at or after it.
	Since *time.Time
	// Cursor is the next_cursor of the previous page ("" for the first).
	Cursor string
}

// LogPage is one page of the delivery log, newest attempt first.
type LogPage struct {
	Items []Attempt
	// NextCursor fetches the next page; "" on the last.
	NextCursor string
}

// logPosition is where a page of the log starts: after the attempt made
// at (at, seq), newest first.
type logPosition struct {
	at  time.Time
	seq int64
}

// encode is the opaque cursor of the position.
func (p logPosition) encode() string {
	raw := p.at.UTC().Format(time.RFC3339Nano) + "|" + strconv.FormatInt(p.seq, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

var errBadCursor = apperr.Invalidf("The query parameter cursor is not one this list gave out.")

func decodeLogCursor(raw string) (*logPosition, error) {
	if raw == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return nil, errBadCursor
	}
	at, seq, ok := strings.Cut(string(b), "|")
	if !ok {
		return nil, errBadCursor
	}
	var p logPosition
	if p.at, err = time.Parse(time.RFC3339Nano, at); err != nil {
		return nil, errBadCursor
	}
	if p.seq, err = strconv.ParseInt(seq, 10, 64); err != nil {
		return nil, errBadCursor
	}
	return &p, nil
}

// Deliveries returns a page of the webhook's delivery log, newest attempt
// first.
func (s *Service) Deliveries(ctx context.Context, sc access.Scope, id uuid.UUID, f LogFilter) (LogPage, error) {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return LogPage{}, err
	}
	switch {
	case f.Limit < 0:
		return LogPage{}, apperr.Invalidf("The query parameter limit must be a non-negative integer.")
	case f.Limit == 0:
		f.Limit = DefaultLogLimit
	case f.Limit > MaxLogLimit:
		f.Limit = MaxLogLimit
	}
	if f.Event != "" && !events.Known(f.Event) && f.Event != events.WebhookTest {
		return LogPage{}, apperr.Invalidf("The query parameter event must be an event type: %s or %s.", strings.Join(events.Types, ", "), events.WebhookTest)
	}
	after, err := decodeLogCursor(f.Cursor)
	if err != nil {
		return LogPage{}, err
	}
	if _, err := s.st.webhook(ctx, s.db, sc.Team, id); err != nil {
		return LogPage{}, err
	}
	items, last, err := s.st.attempts(ctx, s.db, id, f, after)
	if err != nil {
		return LogPage{}, err
	}
	page := LogPage{Items: items}
	if len(items) > f.Limit {
		page.Items = items[:f.Limit]
		page.NextCursor = last.encode()
	}
	return page, nil
}

// attempts reads up to f.Limit+1 attempts of the log (one more tells
// whether a next page exists) and the position of the f.Limit-th. payload
// is the stored event body: exactly the bytes that were sent.
func (store) attempts(ctx context.Context, db postgres.DB, webhookID uuid.UUID, f LogFilter, after *logPosition) ([]Attempt, logPosition, error) {
	args := pgx.StrictNamedArgs{"webhook": webhookID, "limit": f.Limit + 1, "success": f.Success, "since": f.Since,
		"event": f.Event, "after_at": nil, "after_seq": nil}
	if after != nil {
		args["after_at"], args["after_seq"] = after.at, after.seq
	}
	rows, err := db.Query(ctx, `
		SELECT a.id, a.webhook_id, a.delivery_id, a.event_type, e.body, a.response_status, a.response_body, a.error,
		       a.duration_ms, a.success, a.manual, a.created_at, a.seq
		FROM webhook_attempts a JOIN event_records e ON e.id = a.event_id
		WHERE a.webhook_id = @webhook
		  AND (@success::bool IS NULL OR a.success = @success)
		  AND (@since::timestamptz IS NULL OR a.created_at >= @since)
		  AND (@event = '' OR a.event_type = @event)
		  AND (@after_at::timestamptz IS NULL OR (a.created_at, a.seq) < (@after_at, @after_seq::bigint))
		ORDER BY a.created_at DESC, a.seq DESC
		LIMIT @limit`, args)
	if err != nil {
		return nil, logPosition{}, err
	}
	var (
		out  []Attempt
		last logPosition
	)
	for rows.Next() {
		var (
			a       Attempt
			body    []byte
			errText *string
			pos     logPosition
		)
		err := rows.Scan(&a.ID, &a.WebhookID, &a.DeliveryID, &a.EventType, &body, &a.ResponseStatus, &a.ResponseBody, &errText,
			&a.DurationMS, &a.Success, &a.Manual, &a.CreatedAt, &pos.seq)
		if err != nil {
			rows.Close()
			return nil, logPosition{}, err
		}
		a.Payload = body
		if a.ResponseStatus == nil && errText != nil && a.ResponseBody == "" {
			a.ResponseBody = *errText
		}
		if len(out) < f.Limit {
			pos.at = a.CreatedAt
			last = pos
		}
		out = append(out, a)
	}
	return out, last, rows.Err()
}
