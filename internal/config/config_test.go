package config

import (
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/postgres"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != ":8080" || c.PublicBaseURL != "http://localhost:8080" || c.JWTTTL != 24*time.Hour ||
		c.ImagesDir != "./data/images" || c.CampaignSchedule != "*/15 * * * *" || c.WebhookAllowInsecure ||
		c.WebhookPoll != time.Second || c.EventRetention != 30*24*time.Hour || c.WebhookDisableAfter != 120*time.Hour ||
		c.DatabaseURL != DefaultDatabaseURL || !c.JWTSecretGenerated || len(c.JWTSecret) < 32 || len(c.SettingsKey) != 32 ||
		c.APIKeyRateLimit != 1200 {
		t.Fatalf("defaults: %+v", c)
	}
	if c.BillingEnabled() {
		t.Fatal("billing on without a key")
	}
}

func TestLoadRejectsBadValues(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"ttl":       {"JWT_TTL": "forever"},
		"bool":      {"WEBHOOK_ALLOW_INSECURE": "maybe"},
		"schedule":  {"CAMPAIGN_SCHEDULE": "every now and then"},
		"base url":  {"PUBLIC_BASE_URL": "localhost"},
		"log level": {"LOG_LEVEL": "loud"},
		"poll":      {"WEBHOOK_POLL": "0s"},
		"retention": {"EVENT_RETENTION": "-1h"},
		"rescue":    {"JOB_RESCUE_AFTER": "5s"},
		"key limit": {"API_KEY_RATE_LIMIT": "-1"},
		"disable":   {"WEBHOOK_DISABLE_AFTER": "30s"},
		"disable 2": {"WEBHOOK_DISABLE_AFTER": "a week"},
		"metrics":   {"METRICS_TOKEN": "short"},
		"sender":    {"SYSTEM_MAILER_API_KEY": "SG.x", "SYSTEM_SENDER_EMAIL": "nobody"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Load(env(vars)); err == nil {
				t.Fatalf("accepted %v", vars)
			}
		})
	}
}

func TestLoadReadsEverything(t *testing.T) {
	c, err := Load(env(map[string]string{
		"JWT_SECRET": "0123456789abcdef0123", "JWT_TTL": "2h", "PUBLIC_BASE_URL": "https://cb.example.com/",
		"WEBHOOK_ALLOW_INSECURE": "true", "STRIPE_SECRET_KEY": "sk_test", "STRIPE_PRICE_MONTHLY_EUR": "price_x",
		"WEBHOOK_POLL": "250ms", "EVENT_RETENTION": "0", "API_KEY_RATE_LIMIT": "0", "WEBHOOK_DISABLE_AFTER": "1m",
		"METRICS_ADDR": "127.0.0.1:9090", "METRICS_TOKEN": "metrics-token-0123456789",
		"SYSTEM_MAILER_API_KEY": "SG.sys", "SYSTEM_SENDER_EMAIL": "team@cb.example.com", "SYSTEM_SENDER_NAME": "CB",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if string(c.JWTSecret) != "0123456789abcdef0123" || c.JWTSecretGenerated || c.JWTTTL != 2*time.Hour ||
		c.PublicBaseURL != "https://cb.example.com" || !c.WebhookAllowInsecure || !c.BillingEnabled() ||
		c.StripePrices["monthly_eur"] != "price_x" || !strings.HasPrefix(c.StripePrices["yearly_usd"], "price_") ||
		c.WebhookPoll != 250*time.Millisecond || c.EventRetention != 0 || c.APIKeyRateLimit != 0 || c.WebhookDisableAfter != time.Minute ||
		c.MetricsAddr != "127.0.0.1:9090" || c.MetricsToken != "metrics-token-0123456789" ||
		c.SystemMailerAPIKey != "SG.sys" || c.SystemSenderEmail != "team@cb.example.com" || c.SystemSenderName != "CB" {
		t.Fatalf("loaded: %+v", c)
	}
}

func TestLoadDatabaseBehindAPooler(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseDirectURL != c.DatabaseURL || c.DatabasePoolMode != postgres.PoolSession || c.ShutdownDrain != 0 {
		t.Fatalf("defaults: direct %q, mode %q, drain %s", c.DatabaseDirectURL, c.DatabasePoolMode, c.ShutdownDrain)
	}
	c, err = Load(env(map[string]string{
		"DATABASE_URL": "postgres://app@pgbouncer:6432/cb", "DATABASE_DIRECT_URL": "postgres://app@db:5432/cb",
		"DATABASE_POOL_MODE": "transaction", "SHUTDOWN_DRAIN": "5s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseDirectURL != "postgres://app@db:5432/cb" || c.DatabasePoolMode != postgres.PoolTransaction || c.ShutdownDrain != 5*time.Second {
		t.Fatalf("loaded: direct %q, mode %q, drain %s", c.DatabaseDirectURL, c.DatabasePoolMode, c.ShutdownDrain)
	}
	for _, vars := range []map[string]string{{"DATABASE_POOL_MODE": "statement"}, {"SHUTDOWN_DRAIN": "-1s"}, {"SHUTDOWN_DRAIN": "2h"}} {
		if _, err := Load(env(vars)); err == nil {
			t.Errorf("accepted %v", vars)
		}
	}
}

// Without PUBLIC_BASE_URL, links point at the address the service
// listens on: its host, or localhost for no host or every interface.
func TestPublicBaseURLFollowsTheListenAddress(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:18080":  "http://127.0.0.1:18080",
		":18080":           "http://localhost:18080",
		"0.0.0.0:9000":     "http://localhost:9000",
		"[::]:9000":        "http://localhost:9000",
		"[::1]:9000":       "http://[::1]:9000",
		"cb.internal:8081": "http://cb.internal:8081",
	} {
		c, err := Load(env(map[string]string{"HTTP_ADDR": addr}))
		if err != nil {
			t.Fatal(err)
		}
		if c.PublicBaseURL != want || !c.PublicBaseURLDerived {
			t.Errorf("HTTP_ADDR=%s: public base URL %q (derived %v), want %q", addr, c.PublicBaseURL, c.PublicBaseURLDerived, want)
		}
	}
	c, _ := Load(env(map[string]string{"HTTP_ADDR": "127.0.0.1:18080"}))
	c.SetHTTPAddr("127.0.0.1:18081") // serve --addr
	if c.PublicBaseURL != "http://127.0.0.1:18081" {
		t.Errorf("after --addr: %q", c.PublicBaseURL)
	}
	// A base URL that is set stays as it is, wherever the service listens.
	c, err := Load(env(map[string]string{"HTTP_ADDR": "127.0.0.1:18080", "PUBLIC_BASE_URL": "https://cb.example.com/"}))
	if err != nil {
		t.Fatal(err)
	}
	c.SetHTTPAddr(":9999")
	if c.PublicBaseURL != "https://cb.example.com" || c.PublicBaseURLDerived {
		t.Errorf("set: %q (derived %v)", c.PublicBaseURL, c.PublicBaseURLDerived)
	}
}
