// Package config loads the service's settings from environment variables
// (docs/configuration.md lists them). Load takes a getenv
// function so tests and the CLI can supply their own environment without
// touching the process's.
package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"golang.org/x/crypto/bcrypt"

	"github.com/contactbook/contactbook/internal/billing"
	"github.com/contactbook/contactbook/internal/postgres"
)

// DefaultDatabaseURL is the local development database that `make run`
// prepares when DATABASE_URL is unset.
const DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/contactbook?sslmode=disable"

// MinJWTSecret is the length under which serve warns that JWT_SECRET is
// weak; any non-empty secret is accepted.
const MinJWTSecret = 32

// Config is every setting of the service.
type Config struct {
	DatabaseURL string
	// DatabaseDirectURL reaches PostgreSQL itself, never through a
	// transaction pooler: migrations and whatever holds a session (locks,
	// LISTEN) use it. Defaults to DatabaseURL.
	DatabaseDirectURL string
	// DatabasePoolMode says whether DatabaseURL is a transaction pooler.
	DatabasePoolMode postgres.PoolMode
	DBMaxConns       int32
	HTTPAddr         string
	// PublicBaseURL is the absolute base of links in emails, image URLs
	// and the API reference: PUBLIC_BASE_URL, else the address the
	// service listens on (PublicBaseURLDerived is then true).
	PublicBaseURL        string
	PublicBaseURLDerived bool

	JWTSecret          []byte
	JWTSecretGenerated bool // true when no JWT_SECRET was given: tokens die with the process
	JWTTTL             time.Duration
	JWTIssuer          string

	MailerBaseURL string

	// The service's own account emails (invitations, password resets):
	// the operator's provider key and sender. Without a key, links are
	// logged at warn instead of sent.
	SystemMailerAPIKey string
	SystemSenderEmail  string
	SystemSenderName   string
	// SystemMailProvider is the provider of account emails: sendgrid
	// (SYSTEM_MAILER_API_KEY), smtp (SYSTEM_SMTP_URL) or ses
	// (SYSTEM_SES_REGION and keys).
	SystemMailProvider       string
	SystemSMTPURL            string
	SystemSESRegion          string
	SystemSESAccessKeyID     string
	SystemSESSecretAccessKey string

	// SESEndpoint replaces the region's Amazon SES API base (tests).
	SESEndpoint string
	// SNSCertHosts, when set, replaces the rule for the hosts that SNS
	// signing certificates and subscription links may come from
	// (sns.<region>.amazonaws.com): a list of host or host:port (tests).
	SNSCertHosts []string
	// MailAllowInsecure permits SMTP and IMAP without encryption
	// (development only).
	MailAllowInsecure bool
	// MailCAFile is a PEM file of extra certificate authorities trusted
	// for SMTP, IMAP and SNS certificate TLS (a company's own CA).
	MailCAFile string

	StripeSecretKey     string
	StripeWebhookSecret string
	StripeAPIBase       string
	StripePrices        map[string]string // "monthly_usd" -> price id

	WebhookAllowInsecure bool
	WebhookWorkers       int
	// WebhookPoll is how often an idle webhook engine looks for work it
	// was not woken for (events written by an instance that died, due
	// retries); it is also the precision of retry times.
	WebhookPoll time.Duration
	// WebhookDisableAfter is how long a webhook may fail at every attempt
	// before it is switched off (WEBHOOK_DISABLE_AFTER, at least 1m).
	WebhookDisableAfter time.Duration
	// EventRetention is how long events, their deliveries and the delivery
	// log are kept; 0 keeps them for ever.
	EventRetention time.Duration
	// APIKeyRateLimit is each API key's requests a minute, across
	// instances; 0 turns the limit off.
	APIKeyRateLimit int
	// JobRescueAfter is how long a background job may stay running before
	// it is taken for one whose instance died and given to another: the
	// pause a crash costs a campaign run or an import.
	JobRescueAfter time.Duration

	ImagesDir        string
	CampaignSchedule string
	// SettingsKey encrypts the mailer API keys at rest (AES-256-GCM).
	// Derived from SETTINGS_ENCRYPTION_KEY, else from JWT_SECRET.
	SettingsKey []byte

	// PasswordHashCost is the bcrypt cost of stored passwords.
	PasswordHashCost int

	LogLevel  string
	LogFormat string // json or text; empty means "decide by terminal"

	AutoMigrate bool
	// ShutdownDrain is how long, after a stop signal, the instance keeps
	// serving while /readyz answers 503, so a load balancer takes it out
	// of rotation before it stops accepting connections.
	ShutdownDrain time.Duration
	// PprofAddr, when set, serves net/http/pprof on its own listener
	// (keep it on localhost); empty turns profiling off.
	PprofAddr string
	// MetricsAddr, when set, serves /metrics on its own listener (keep it
	// private); empty serves no such listener.
	MetricsAddr string
	// MetricsToken, when set, is the bearer token /metrics requires, on
	// METRICS_ADDR and on the public port; without it the public port has
	// no /metrics at all.
	MetricsToken string
	// TrustProxy makes the client IP come from the right-most X-Forwarded-For
	// entry (rate limits, throttles); only safe behind one proxy that sets it.
	TrustProxy bool
}

// Load reads the configuration from getenv and validates it.
func Load(getenv func(string) string) (Config, error) {
	env := func(key, def string) string {
		if v := strings.TrimSpace(getenv(key)); v != "" {
			return v
		}
		return def
	}
	var errs []error
	boolEnv := func(key string, def bool) bool {
		v := env(key, strconv.FormatBool(def))
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not a boolean", key, v))
		}
		return b
	}
	intEnv := func(key string, def int) int {
		v := env(key, strconv.Itoa(def))
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("%s: %q is not a positive integer", key, v))
		}
		return n
	}

	c := Config{
		DatabaseURL:              env("DATABASE_URL", DefaultDatabaseURL),
		DBMaxConns:               int32(intEnv("DB_MAX_CONNS", 20)),
		HTTPAddr:                 env("HTTP_ADDR", ":8080"),
		PublicBaseURL:            strings.TrimRight(env("PUBLIC_BASE_URL", ""), "/"),
		JWTIssuer:                env("JWT_ISSUER", "contactbook"),
		MailerBaseURL:            strings.TrimRight(env("MAILER_BASE_URL", "https://api.sendgrid.com"), "/"),
		SystemMailerAPIKey:       env("SYSTEM_MAILER_API_KEY", ""),
		SystemSenderEmail:        env("SYSTEM_SENDER_EMAIL", ""),
		SystemSenderName:         env("SYSTEM_SENDER_NAME", "contactbook"),
		SystemMailProvider:       strings.ToLower(env("SYSTEM_MAIL_PROVIDER", "sendgrid")),
		SystemSMTPURL:            env("SYSTEM_SMTP_URL", ""),
		SystemSESRegion:          env("SYSTEM_SES_REGION", ""),
		SystemSESAccessKeyID:     env("SYSTEM_SES_ACCESS_KEY_ID", ""),
		SystemSESSecretAccessKey: env("SYSTEM_SES_SECRET_ACCESS_KEY", ""),
		SESEndpoint:              strings.TrimRight(env("SES_ENDPOINT", ""), "/"),
		MailAllowInsecure:        boolEnv("MAIL_ALLOW_INSECURE", false),
		MailCAFile:               env("MAIL_CA_FILE", ""),
		StripeSecretKey:          env("STRIPE_SECRET_KEY", ""),
		StripeWebhookSecret:      env("STRIPE_WEBHOOK_SECRET", ""),
		StripeAPIBase:            strings.TrimRight(env("STRIPE_API_BASE", "https://api.stripe.com"), "/"),
		WebhookAllowInsecure:     boolEnv("WEBHOOK_ALLOW_INSECURE", false),
		WebhookWorkers:           intEnv("WEBHOOK_WORKERS", 16),
		ImagesDir:                env("IMAGES_DIR", "./data/images"),
		CampaignSchedule:         env("CAMPAIGN_SCHEDULE", "*/15 * * * *"),
		LogLevel:                 strings.ToLower(env("LOG_LEVEL", "info")),
		LogFormat:                strings.ToLower(env("LOG_FORMAT", "")),
		AutoMigrate:              boolEnv("AUTO_MIGRATE", true),
		PprofAddr:                env("PPROF_ADDR", ""),
		MetricsAddr:              env("METRICS_ADDR", ""),
		MetricsToken:             env("METRICS_TOKEN", ""),
		TrustProxy:               boolEnv("TRUST_PROXY", false),
		StripePrices:             map[string]string{},
		PasswordHashCost:         intEnv("PASSWORD_HASH_COST", bcrypt.DefaultCost),
	}
	if c.PasswordHashCost < bcrypt.MinCost || c.PasswordHashCost > 15 {
		errs = append(errs, fmt.Errorf("PASSWORD_HASH_COST: %d is outside %d..15", c.PasswordHashCost, bcrypt.MinCost))
	}

	if s := getenv("JWT_SECRET"); s != "" {
		c.JWTSecret = []byte(s)
	} else {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			errs = append(errs, fmt.Errorf("generate JWT secret: %w", err))
		}
		c.JWTSecret = []byte(hex.EncodeToString(b))
		c.JWTSecretGenerated = true
	}
	if c.MetricsToken != "" && len(c.MetricsToken) < 16 {
		errs = append(errs, errors.New("METRICS_TOKEN: use at least 16 characters"))
	}
	ttl, err := time.ParseDuration(env("JWT_TTL", "24h"))
	if err != nil || ttl <= 0 {
		errs = append(errs, fmt.Errorf("JWT_TTL: %q is not a positive duration such as 24h", getenv("JWT_TTL")))
	}
	c.JWTTTL = ttl
	poll, err := time.ParseDuration(env("WEBHOOK_POLL", "1s"))
	if err != nil || poll <= 0 {
		errs = append(errs, fmt.Errorf("WEBHOOK_POLL: %q is not a positive duration such as 1s", getenv("WEBHOOK_POLL")))
	}
	c.WebhookPoll = poll
	disableAfter, err := time.ParseDuration(env("WEBHOOK_DISABLE_AFTER", "120h"))
	if err != nil || disableAfter < time.Minute {
		errs = append(errs, fmt.Errorf("WEBHOOK_DISABLE_AFTER: %q is not a duration of at least 1m such as 120h", getenv("WEBHOOK_DISABLE_AFTER")))
	}
	c.WebhookDisableAfter = disableAfter
	keep, err := time.ParseDuration(env("EVENT_RETENTION", "720h"))
	if err != nil || keep < 0 {
		errs = append(errs, fmt.Errorf("EVENT_RETENTION: %q is not a duration such as 720h (0 keeps everything)", getenv("EVENT_RETENTION")))
	}
	c.EventRetention = keep
	rescue, err := time.ParseDuration(env("JOB_RESCUE_AFTER", "1m"))
	if err != nil || rescue < 10*time.Second {
		errs = append(errs, fmt.Errorf("JOB_RESCUE_AFTER: %q is not a duration of at least 10s such as 1m", getenv("JOB_RESCUE_AFTER")))
	}
	c.JobRescueAfter = rescue
	drain, err := time.ParseDuration(env("SHUTDOWN_DRAIN", "0s"))
	if err != nil || drain < 0 || drain > time.Minute {
		errs = append(errs, fmt.Errorf("SHUTDOWN_DRAIN: %q is not a duration between 0s and 1m such as 5s", getenv("SHUTDOWN_DRAIN")))
	}
	c.ShutdownDrain = drain
	c.DatabaseDirectURL = env("DATABASE_DIRECT_URL", c.DatabaseURL)
	mode, err := postgres.ParsePoolMode(env("DATABASE_POOL_MODE", string(postgres.PoolSession)))
	if err != nil {
		errs = append(errs, fmt.Errorf("DATABASE_POOL_MODE: %w", err))
	}
	c.DatabasePoolMode = mode
	keyLimit, err := strconv.Atoi(env("API_KEY_RATE_LIMIT", "1200"))
	if err != nil || keyLimit < 0 {
		errs = append(errs, fmt.Errorf("API_KEY_RATE_LIMIT: %q is not a number of requests a minute (0 turns the limit off)", getenv("API_KEY_RATE_LIMIT")))
	}
	c.APIKeyRateLimit = keyLimit

	keySource := env("SETTINGS_ENCRYPTION_KEY", string(c.JWTSecret))
	c.SettingsKey = deriveKey(keySource)

	for _, plan := range billing.Plans {
		for _, cur := range billing.Currencies {
			pair := string(plan) + "_" + string(cur)
			c.StripePrices[pair] = env("STRIPE_PRICE_"+strings.ToUpper(pair), "price_campaigns_"+pair)
		}
	}

	if c.PublicBaseURL == "" {
		c.PublicBaseURLDerived = true
		c.PublicBaseURL = BaseURLFor(c.HTTPAddr)
	}
	if u, err := url.Parse(c.PublicBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("PUBLIC_BASE_URL: %q is not an absolute http(s) URL", c.PublicBaseURL))
	}
	for name, v := range map[string]string{"MAILER_BASE_URL": c.MailerBaseURL, "STRIPE_API_BASE": c.StripeAPIBase} {
		if u, err := url.Parse(v); err != nil || u.Host == "" {
			errs = append(errs, fmt.Errorf("%s: %q is not an absolute URL", name, v))
		}
	}
	for _, h := range strings.Split(env("SNS_CERT_HOSTS", ""), ",") {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			c.SNSCertHosts = append(c.SNSCertHosts, h)
		}
	}
	if c.SESEndpoint != "" {
		if u, err := url.Parse(c.SESEndpoint); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			errs = append(errs, fmt.Errorf("SES_ENDPOINT: %q is not an absolute http(s) URL", c.SESEndpoint))
		}
	}
	switch c.SystemMailProvider {
	case "sendgrid":
	case "smtp":
		if u, err := url.Parse(c.SystemSMTPURL); err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
			errs = append(errs, fmt.Errorf("SYSTEM_SMTP_URL: an smtp://user:pass@host:587 or smtps:// URL is required when SYSTEM_MAIL_PROVIDER is smtp"))
		}
	case "ses":
		if c.SystemSESRegion == "" || c.SystemSESAccessKeyID == "" || c.SystemSESSecretAccessKey == "" {
			errs = append(errs, fmt.Errorf("SYSTEM_SES_REGION, SYSTEM_SES_ACCESS_KEY_ID and SYSTEM_SES_SECRET_ACCESS_KEY are required when SYSTEM_MAIL_PROVIDER is ses"))
		}
	default:
		errs = append(errs, fmt.Errorf("SYSTEM_MAIL_PROVIDER: %q is not one of sendgrid, smtp, ses", c.SystemMailProvider))
	}
	if c.SystemMailProvider != "sendgrid" && !strings.Contains(c.SystemSenderEmail, "@") {
		errs = append(errs, fmt.Errorf("SYSTEM_SENDER_EMAIL: %q is not an email address; account emails need a sender", c.SystemSenderEmail))
	}
	if c.SystemMailerAPIKey != "" && !strings.Contains(c.SystemSenderEmail, "@") {
		errs = append(errs, fmt.Errorf("SYSTEM_SENDER_EMAIL: %q is not an email address; account emails need a sender when SYSTEM_MAILER_API_KEY is set", c.SystemSenderEmail))
	}
	if _, err := cron.ParseStandard(c.CampaignSchedule); err != nil {
		errs = append(errs, fmt.Errorf("CAMPAIGN_SCHEDULE: %q: %v", c.CampaignSchedule, err))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("LOG_LEVEL: %q is not one of debug, info, warn, error", c.LogLevel))
	}
	switch c.LogFormat {
	case "", "json", "text":
	default:
		errs = append(errs, fmt.Errorf("LOG_FORMAT: %q is not json or text", c.LogFormat))
	}
	return c, errors.Join(errs...)
}

// SetHTTPAddr changes the listen address (the serve command's --addr, or
// the address a listener on port 0 was given); a public base URL derived
// from the address follows it.
func (c *Config) SetHTTPAddr(addr string) {
	c.HTTPAddr = addr
	if c.PublicBaseURLDerived {
		c.PublicBaseURL = BaseURLFor(addr)
	}
}

// BaseURLFor is the base URL of a service listening on addr, the public
// base URL when PUBLIC_BASE_URL is unset: http://host:port, with
// localhost for an address that names no host or every interface
// (":8080", "0.0.0.0:8080", "[::]:8080").
func BaseURLFor(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		// Not host:port; net.Listen refuses it at start-up.
		return "http://localhost:8080"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// BillingEnabled reports whether checkout can talk to the payment provider.
func (c Config) BillingEnabled() bool { return c.StripeSecretKey != "" }
