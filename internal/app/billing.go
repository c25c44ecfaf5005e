package app

import (
	"log/slog"
	"time"

	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/billing"
	"github.com/contactbook/contactbook/internal/config"
	"github.com/contactbook/contactbook/internal/postgres"
)

// newBilling builds the billing service and says at start-up which of its
// halves are off, so an operator sees it before a user meets the 503.
func newBilling(cfg config.Config, pool postgres.Pool, acc *accounts.Service, now func() time.Time, log *slog.Logger) *billing.Service {
	svc := billing.NewService(pool, acc, billing.Config{
		SecretKey:     cfg.StripeSecretKey,
		WebhookSecret: cfg.StripeWebhookSecret,
		APIBase:       cfg.StripeAPIBase,
		Prices:        cfg.StripePrices,
		PublicBaseURL: cfg.PublicBaseURL,
	}, now, log)
	if !cfg.BillingEnabled() {
		log.Warn("billing is off: STRIPE_SECRET_KEY is not set, so add-on checkout answers 503 SERVICE_UNAVAILABLE")
	}
	if !svc.WebhookEnabled() {
		log.Warn("billing webhook is off: STRIPE_WEBHOOK_SECRET is not set, so payment events are refused with 503 and the add-on is not activated by payments")
	}
	return svc
}
