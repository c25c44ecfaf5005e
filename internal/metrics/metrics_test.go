package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestMetricsExposition(t *testing.T) {
	m := New(nil, func(context.Context) (float64, error) { return 7, nil })
	m.ObserveRequest("GET", "/api/v1/contacts/{id}", 200, 3*time.Millisecond)
	m.WebhookAttempt("success")
	m.CampaignEmails("sent", 1000)
	m.CampaignRun("schedule", nil)
	m.CampaignRun("manual", errors.New("boom"))

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`contactbook_http_requests_total{method="GET",route="/api/v1/contacts/{id}",status="200"} 1`,
		`contactbook_http_request_duration_seconds_bucket{method="GET",route="/api/v1/contacts/{id}",le="0.005"} 1`,
		`contactbook_webhook_attempts_total{outcome="success"} 1`,
		`contactbook_campaign_emails_total{outcome="sent"} 1000`,
		`contactbook_campaign_runs_total{result="error",trigger="manual"} 1`,
		`contactbook_webhook_queue_depth 7`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
