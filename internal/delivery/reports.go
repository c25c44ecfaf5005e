package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
)

// Deliverability is a book's campaign email over the last Days days.
// Counts are unique emails; every rate is a fraction of Sent.
type Deliverability struct {
	Days          int     `json:"days"`
	Sent          int64   `json:"sent"`
	Delivered     int64   `json:"delivered"`
	Bounced       int64   `json:"bounced"`
	Complained    int64   `json:"complained"`
	Unsubscribed  int64   `json:"unsubscribed"`
	Opened        int64   `json:"opened"`
	Clicked       int64   `json:"clicked"`
	DeliveryRate  float64 `json:"delivery_rate"`
	BounceRate    float64 `json:"bounce_rate"`
	ComplaintRate float64 `json:"complaint_rate"`
	OpenRate      float64 `json:"open_rate"`
	ClickRate     float64 `json:"click_rate"`
	// Daily holds every day of the window, oldest first, days without
	// email included (all zero), so a chart needs no gaps filled.
	Daily []DayCounts `json:"daily"`
}

// DayCounts is one UTC day of a book's campaign email, with the rates a
// mailbox provider judges a sender by.
type DayCounts struct {
	Day           string  `json:"day"` // YYYY-MM-DD
	Sent          int64   `json:"sent"`
	Delivered     int64   `json:"delivered"`
	Bounced       int64   `json:"bounced"`
	Complained    int64   `json:"complained"`
	Opened        int64   `json:"opened"`
	Clicked       int64   `json:"clicked"`
	BounceRate    float64 `json:"bounce_rate"`
	ComplaintRate float64 `json:"complaint_rate"`
}

// Deliverability reports the book's last days UTC days, today included
// (viewer). It sums the book's daily counters: at most 365 rows, however
// many events the book has.
func (s *Service) Deliverability(ctx context.Context, sc access.Scope, days int) (Deliverability, error) {
	if days < 1 || days > 365 {
		return Deliverability{}, apperr.Invalidf("The query parameter days must be from 1 to 365.")
	}
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return Deliverability{}, err
	}
	d := Deliverability{Days: days}
	rows, err := s.db.Query(ctx, `
		WITH w AS (
			SELECT generate_series(today - ($3::int - 1), today, interval '1 day')::date AS day
			FROM (SELECT ($2::timestamptz AT TIME ZONE 'UTC')::date AS today) t
		)
		SELECT to_char(w.day, 'YYYY-MM-DD'), COALESCE(c.sent, 0), COALESCE(c.delivered, 0), COALESCE(c.bounced, 0),
		       COALESCE(c.complained, 0), COALESCE(c.unsubscribed, 0), COALESCE(c.opened, 0), COALESCE(c.clicked, 0)
		FROM w LEFT JOIN delivery_daily_counts c ON c.book_id = $1 AND c.day = w.day
		ORDER BY w.day`,
		sc.Book.ID, s.now(), days)
	if err != nil {
		return Deliverability{}, err
	}
	var (
		day          DayCounts
		unsubscribed int64
	)
	_, err = pgx.ForEachRow(rows, []any{&day.Day, &day.Sent, &day.Delivered, &day.Bounced, &day.Complained, &unsubscribed, &day.Opened, &day.Clicked}, func() error {
		d.Sent, d.Delivered, d.Bounced, d.Complained = d.Sent+day.Sent, d.Delivered+day.Delivered, d.Bounced+day.Bounced, d.Complained+day.Complained
		d.Unsubscribed, d.Opened, d.Clicked = d.Unsubscribed+unsubscribed, d.Opened+day.Opened, d.Clicked+day.Clicked
		day.BounceRate, day.ComplaintRate = rate(day.Bounced, day.Sent), rate(day.Complained, day.Sent)
		d.Daily = append(d.Daily, day)
		return nil
	})
	if err != nil {
		return Deliverability{}, err
	}
	d.DeliveryRate, d.BounceRate, d.ComplaintRate = rate(d.Delivered, d.Sent), rate(d.Bounced, d.Sent), rate(d.Complained, d.Sent)
	d.OpenRate, d.ClickRate = rate(d.Opened, d.Sent), rate(d.Clicked, d.Sent)
	return d, nil
}

// rate is n/sent within 0..1: an email sent just before the window can
// be delivered or opened inside it.
func rate(n, sent int64) float64 {
	if sent == 0 {
		return 0
	}
	return min(1, float64(n)/float64(sent))
}

// Activity is one thing that happened to a contact's campaign email or
// participation. At is when it happened (for provider events, the
// provider's timestamp).
type Activity struct {
	At         time.Time  `json:"at"`
	Type       string     `json:"type"`
	CampaignID *uuid.UUID `json:"campaign_id"`
	StepID     *uuid.UUID `json:"step_id"`
	Detail     string     `json:"detail"`
	// TransactionalID names the transactional email of a transactional_*
	// entry (campaign_id and step_id are null then).
	TransactionalID *uuid.UUID `json:"transactional_id"`
}

// ActivityTypes is every kind of Activity, in the order the API document
// lists them: the participation's and the email's own, then the provider's
// feedback, then the participation's end.
var ActivityTypes = []string{"enrolled", "sent", "failed", "skipped", "delivered", "deferred", "bounced", "dropped",
	"opened", "clicked", "complained", "unsubscribed", "removed",
	"transactional_sent", "transactional_failed", "transactional_suppressed", "transactional_delivered",
	"transactional_deferred", "transactional_bounced", "transactional_dropped", "transactional_opened",
	"transactional_clicked", "transactional_complained", "transactional_unsubscribed"}

var errContactNotFound = apperr.NotFoundf("Contact not found.")

// Activity pages a contact's timeline, newest first (viewer): enrolments
// and removals, each email step's outcome (sent, failed, or skipped when
// its condition did not hold), and what the
// provider reported about the email. A soft bounce (blocked) shows as
// deferred, its detail saying so: like a deferral it ends nothing, and
// only hard bounces are bounced anywhere. Machine opens are not recorded.
func (s *Service) Activity(ctx context.Context, actor *auth.Actor, contactID uuid.UUID, limit, offset int) ([]Activity, int64, error) {
	var teamID uuid.UUID
	err := s.db.QueryRow(ctx, `SELECT b.team_id FROM contact_records ct JOIN book_teams b ON b.book_id = ct.book_id WHERE ct.id = $1`, contactID).Scan(&teamID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, errContactNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	if err := actor.Require(ctx, teamID, auth.RoleViewer, errContactNotFound); err != nil {
		return nil, 0, err
	}
	const timeline = `
		SELECT p.enrolled_at AS at, 'enrolled' AS type, p.campaign_id, NULL::uuid AS step_id, '' AS detail, 0 AS stage,
		       NULL::uuid AS transactional_id
		FROM campaign_participations p WHERE p.contact_id = $1
		UNION ALL
		SELECT p.removed_at, 'removed', p.campaign_id, NULL, '', 3, NULL
		FROM campaign_participations p WHERE p.contact_id = $1 AND p.removed_at IS NOT NULL
		UNION ALL
		SELECT c.completed_at, CASE c.result WHEN 'success' THEN 'sent' WHEN 'skipped' THEN 'skipped' ELSE 'failed' END,
		       c.campaign_id, c.step_id, c.result_detail, 1, NULL
		FROM campaign_email_sends c
		WHERE c.contact_id = $1 AND c.result IS NOT NULL
		UNION ALL
		SELECT e.occurred_at, CASE e.kind WHEN 'blocked' THEN 'deferred' ELSE e.kind END, e.campaign_id, e.step_id,
		       CASE e.kind WHEN 'blocked' THEN 'blocked (soft bounce)' || CASE WHEN e.detail <> '' THEN ': ' || e.detail ELSE '' END
		                   ELSE e.detail END, 2, NULL
		FROM delivery_events e WHERE e.contact_id = $1 AND e.kind <> 'processed'
		UNION ALL
		SELECT COALESCE(t.sent_at, t.created_at), 'transactional_' || t.status, NULL, NULL, t.detail, 1, t.id
		FROM transactional_message_records t WHERE t.contact_id = $1 AND t.status <> 'queued'
		UNION ALL
		SELECT e.occurred_at, 'transactional_' || CASE e.kind WHEN 'blocked' THEN 'deferred' ELSE e.kind END, NULL, NULL,
		       CASE e.kind WHEN 'blocked' THEN 'blocked (soft bounce)' || CASE WHEN e.detail <> '' THEN ': ' || e.detail ELSE '' END
		                   ELSE e.detail END, 2, e.message_id
		FROM transactional_event_records e WHERE e.contact_id = $1 AND e.kind <> 'processed'`
	var total int64
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM (`+timeline+`) t`, contactID).Scan(&total); err != nil {
		return nil, 0, err
	}
	// At the same instant, the later stage of an email's life comes first.
	rows, err := s.db.Query(ctx, `SELECT at, type, campaign_id, step_id, detail, transactional_id FROM (`+timeline+`) t
		ORDER BY at DESC, stage DESC, type LIMIT $2 OFFSET $3`, contactID, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Activity, error) {
		var a Activity
		err := r.Scan(&a.At, &a.Type, &a.CampaignID, &a.StepID, &a.Detail, &a.TransactionalID)
		return a, err
	})
	return items, total, err
}

// FeedbackJoinSQL joins, as alias, the provider's feedback on the
// campaign email of a participant and step (SQL expressions), for a
// statement that reads it for many emails at once (one hash join rather
// than a probe per email); FeedbackHeardSQL tests it.
func FeedbackJoinSQL(alias, participant, step string) string {
	return `LEFT JOIN email_deliveries ` + alias + ` ON ` + alias + `.participant_id = ` + participant + ` AND ` + alias + `.step_id = ` + step
}

// FeedbackHeardSQL is whether the feedback joined as alias holds the
// event kind (a SQL text expression, as EmailHeardSQL takes it).
func FeedbackHeardSQL(alias, kind string) string {
	return `(CASE ` + kind + ` WHEN 'delivered' THEN ` + alias + `.delivered_at WHEN 'opened' THEN ` + alias + `.opened_at
		WHEN 'clicked' THEN ` + alias + `.clicked_at WHEN 'bounced' THEN ` + alias + `.bounced_at END IS NOT NULL)`
}

// StepCountsJoin is the SQL that left-joins, as alias, the engagement
// counts of the campaign step whose id is the SQL expression step: its
// columns delivered, opened, clicked, bounced, complained and
// unsubscribed, NULL while the provider has reported nothing.
func StepCountsJoin(alias, step string) string {
	return `LEFT JOIN delivery_step_counts ` + alias + ` ON ` + alias + `.step_id = ` + step
}

// EmailReportedSQL is the SQL test of whether the provider reported an
// event of the campaign email of a participant and step (SQL
// expressions): column is the email_deliveries column of its first time
// (delivered_at, opened_at, clicked_at, bounced_at, complained_at or
// unsubscribed_at; chosen by the caller from a fixed list, never from
// input).
func EmailReportedSQL(participant, step, column string) string {
	return `EXISTS (SELECT 1 FROM email_deliveries d
			WHERE d.participant_id = ` + participant + ` AND d.step_id = ` + step + ` AND d.` + column + ` IS NOT NULL)`
}

// EmailHeardSQL is the SQL test of whether the provider reported the
// event kind (the SQL text expression kind: 'delivered', 'opened',
// 'clicked' or 'bounced') of the campaign email of a participant and step
// (SQL expressions): the unique engagement the campaign stats count.
func EmailHeardSQL(participant, step, kind string) string {
	return `EXISTS (SELECT 1 FROM email_deliveries ed WHERE ed.participant_id = ` + participant + ` AND ed.step_id = ` + step + `
		AND CASE ` + kind + ` WHEN 'delivered' THEN ed.delivered_at WHEN 'opened' THEN ed.opened_at
		                       WHEN 'clicked' THEN ed.clicked_at WHEN 'bounced' THEN ed.bounced_at END IS NOT NULL)`
}

// CountSentSQL is the data-modifying statement, for a WITH of the
// statement that records campaign emails as sent, that adds them to the
// deliverability report's denominator: the emails sent per book and UTC
// day. from is the SQL FROM clause (and WHERE) whose rows are the emails
// just sent, book the SQL expression of their book and day that of the
// UTC day they were sent; the rows are counted per book.
func CountSentSQL(from, book, day string) string {
	return `INSERT INTO delivery_daily_counts AS dc (book_id, day, sent)
			SELECT ` + book + `, ` + day + `, count(*)
			` + from + `
			GROUP BY ` + book + `
			ON CONFLICT (book_id, day) DO UPDATE SET sent = dc.sent + EXCLUDED.sent`
}
