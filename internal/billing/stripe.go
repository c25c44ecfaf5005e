package billing

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/client"
)

// providerTimeout bounds one call to the payment provider; a checkout is a
// user waiting on a button.
const providerTimeout = 30 * time.Second

// newStripeClient builds a provider client of its own: its key and its
// backends (the API one pointed at apiBase, which tests set to
// stripe-mock), never stripe-go's package-level key or backends, so two
// services in one process cannot see each other's settings.
func newStripeClient(key, apiBase string, httpClient *http.Client, log *slog.Logger) *client.API {
	if httpClient == nil {
		httpClient = &http.Client{Timeout: providerTimeout}
	}
	logger := stripeLogger{log: log}
	backend := func(typ stripe.SupportedBackend, url *string) stripe.Backend {
		return stripe.GetBackendWithConfig(typ, &stripe.BackendConfig{
			URL:               url,
			HTTPClient:        httpClient,
			LeveledLogger:     logger,
			MaxNetworkRetries: stripe.Int64(2),
			EnableTelemetry:   stripe.Bool(false),
		})
	}
	return client.New(key, &stripe.Backends{
		API:     backend(stripe.APIBackend, stripe.String(apiBase)),
		Connect: backend(stripe.ConnectBackend, nil),
		Uploads: backend(stripe.UploadsBackend, nil),
	})
}

// stripeLogger sends stripe-go's log lines to the service's logger instead
// of stdout/stderr. Request failures are also returned to the caller,
// which reports them once, so they are warnings here.
type stripeLogger struct{ log *slog.Logger }

func (l stripeLogger) Debugf(format string, v ...any) { l.emit(slog.LevelDebug, format, v) }
func (l stripeLogger) Infof(format string, v ...any)  { l.emit(slog.LevelDebug, format, v) }
func (l stripeLogger) Warnf(format string, v ...any)  { l.emit(slog.LevelWarn, format, v) }
func (l stripeLogger) Errorf(format string, v ...any) { l.emit(slog.LevelWarn, format, v) }

func (l stripeLogger) emit(level slog.Level, format string, v []any) {
	l.log.Log(context.Background(), level, "payment provider client", "detail", fmt.Sprintf(format, v...))
}
