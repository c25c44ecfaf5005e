// Package metrics exposes the service's Prometheus metrics: HTTP requests
// by route pattern and status, database pool statistics, webhook delivery
// outcomes and queue depth, campaign emails by outcome and scheduler runs.
// Domain packages record through small interfaces of their own; this
// package implements them, so nothing else imports Prometheus.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds every collector of the process.
type Metrics struct {
	registry          *prometheus.Registry
	httpRequests      *prometheus.CounterVec
	httpDuration      *prometheus.HistogramVec
	webhookDeliveries *prometheus.CounterVec
	campaignEmails    *prometheus.CounterVec
	schedulerRuns     *prometheus.CounterVec
}

// Gauge reads a value at scrape time (e.g. a queue depth from the database).
type Gauge func(ctx context.Context) (float64, error)

// New registers the collectors. webhookQueue may be nil.
func New(pool *pgxpool.Pool, webhookQueue Gauge) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		registry: reg,
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contactbook_http_requests_total", Help: "HTTP requests by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "contactbook_http_request_duration_seconds", Help: "HTTP request latency by method and route pattern.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method", "route"}),
		webhookDeliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contactbook_webhook_attempts_total", Help: "Webhook delivery attempts by outcome (success, failed, retry).",
		}, []string{"outcome"}),
		campaignEmails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contactbook_campaign_emails_total", Help: "Campaign step executions by outcome (sent, failed, retry, triggered).",
		}, []string{"outcome"}),
		schedulerRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contactbook_campaign_runs_total", Help: "Campaign processing runs by trigger (schedule, manual) and result (ok, error).",
		}, []string{"trigger", "result"}),
	}
	reg.MustRegister(m.httpRequests, m.httpDuration, m.webhookDeliveries, m.campaignEmails, m.schedulerRuns,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if pool != nil {
		reg.MustRegister(poolCollector{pool: pool})
	}
	if webhookQueue != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "contactbook_webhook_queue_depth", Help: "Webhook deliveries waiting to be attempted.",
		}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			v, err := webhookQueue(ctx)
			if err != nil {
				return -1
			}
			return v
		}))
	}
	return m
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// ObserveRequest records one finished HTTP request.
func (m *Metrics) ObserveRequest(method, route string, status int, elapsed time.Duration) {
	m.httpRequests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.httpDuration.WithLabelValues(method, route).Observe(elapsed.Seconds())
}

// WebhookAttempt records a delivery attempt's outcome.
func (m *Metrics) WebhookAttempt(outcome string) { m.webhookDeliveries.WithLabelValues(outcome).Inc() }

// CampaignEmails records n step executions with one outcome.
func (m *Metrics) CampaignEmails(outcome string, n int) {
	m.campaignEmails.WithLabelValues(outcome).Add(float64(n))
}

// CampaignRun records a processing run.
func (m *Metrics) CampaignRun(trigger string, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.schedulerRuns.WithLabelValues(trigger, result).Inc()
}

// poolCollector reports pgxpool statistics at scrape time.
type poolCollector struct{ pool *pgxpool.Pool }

var (
	poolAcquired = prometheus.NewDesc("contactbook_db_pool_acquired_conns", "Connections in use.", nil, nil)
	poolIdle     = prometheus.NewDesc("contactbook_db_pool_idle_conns", "Idle connections.", nil, nil)
	poolTotal    = prometheus.NewDesc("contactbook_db_pool_total_conns", "Open connections.", nil, nil)
	poolMax      = prometheus.NewDesc("contactbook_db_pool_max_conns", "Pool size limit.", nil, nil)
	poolAcquires = prometheus.NewDesc("contactbook_db_pool_acquires_total", "Connections handed out.", nil, nil)
	poolWaits    = prometheus.NewDesc("contactbook_db_pool_empty_acquires_total", "Acquires that had to wait for a connection.", nil, nil)
	poolWaitSecs = prometheus.NewDesc("contactbook_db_pool_acquire_seconds_total", "Time spent acquiring connections.", nil, nil)
)

func (poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolAcquired, poolIdle, poolTotal, poolMax, poolAcquires, poolWaits, poolWaitSecs} {
		ch <- d
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(poolAcquired, prometheus.GaugeValue, float64(s.AcquiredConns()))
	ch <- prometheus.MustNewConstMetric(poolIdle, prometheus.GaugeValue, float64(s.IdleConns()))
	ch <- prometheus.MustNewConstMetric(poolTotal, prometheus.GaugeValue, float64(s.TotalConns()))
	ch <- prometheus.MustNewConstMetric(poolMax, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(poolAcquires, prometheus.CounterValue, float64(s.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWaits, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWaitSecs, prometheus.CounterValue, s.AcquireDuration().Seconds())
}
