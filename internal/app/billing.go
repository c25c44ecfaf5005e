package app

import (
	"log/slog"
	"time"

	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/billing"
	"github.com/contactbook/contactbook/internal/config"
	"github.com/contactbook/contactbook/internal/postgres"
)

// newBilling builds the billing service; serve says at start-up which of
// its halves the configuration leaves off (reportSettings).
func newBilling(cfg config.Config, pool postgres.Pool, acc *accounts.Service, now func() time.Time, log *slog.Logger) *billing.Service {
	return billing.NewService(billing.Deps{DB: pool, Teams: acc, Config: billing.Config{
		SecretKey:     cfg.StripeSecretKey,
		WebhookSecret: cfg.StripeWebhookSecret,
		APIBase:       cfg.StripeAPIBase,
		Prices:        cfg.StripePrices,
		PublicBaseURL: cfg.PublicBaseURL,
	}, Now: now, Log: log})
}
