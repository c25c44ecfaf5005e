package campaigns

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/delivery"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/validate"
)

// Settings are a book's email settings as the API shows them: the
// provider key only masked.
type Settings struct {
	ID           uuid.UUID `json:"id"`
	BookID       uuid.UUID `json:"book_id"`
	SenderName   string    `json:"sender_name"`
	SenderEmail  string    `json:"sender_email"`
	ReplyToEmail string    `json:"reply_to_email"`
	CompanyName  string    `json:"company_name"`
	AddressLine1 string    `json:"address_line1"`
	AddressLine2 string    `json:"address_line2"`
	City         string    `json:"city"`
	State        string    `json:"state"`
	PostalCode   string    `json:"postal_code"`
	Country      string    `json:"country"`
	MailerAPIKey string    `json:"mailer_api_key"`
	// EventWebhookPublicKey verifies the provider's signed event batches;
	// EventWebhookURL is where the provider is told to post them.
	EventWebhookPublicKey string `json:"event_webhook_public_key"`
	EventWebhookURL       string `json:"event_webhook_url"`
	TrackOpens            bool   `json:"track_opens"`
	TrackClicks           bool   `json:"track_clicks"`
	// DefaultTimeZone is the IANA zone send windows are read in for
	// contacts without a time zone of their own.
	DefaultTimeZone string `json:"default_time_zone"`
	// EventsReceivedAt is when a signed event batch (or an SES
	// notification) last reached the book (to within a minute); nil when
	// none has.
	EventsReceivedAt *time.Time `json:"events_received_at"`
	CreatedAt        time.Time  `json:"created_at"`
	UpdatedAt        time.Time  `json:"updated_at"`

	// Provider is the service the book sends through; only its own
	// fields are answered, secrets masked.
	Provider            Provider       `json:"provider"`
	SMTPHost            *string        `json:"smtp_host,omitempty"`
	SMTPPort            *int           `json:"smtp_port,omitempty"`
	SMTPSecurity        *string        `json:"smtp_security,omitempty"`
	SMTPUsername        *string        `json:"smtp_username,omitempty"`
	SMTPPassword        *string        `json:"smtp_password,omitempty"`
	SMTPMaxConnections  *int           `json:"smtp_max_connections,omitempty"`
	SESRegion           *string        `json:"ses_region,omitempty"`
	SESAccessKeyID      *string        `json:"ses_access_key_id,omitempty"`
	SESSecretAccessKey  *string        `json:"ses_secret_access_key,omitempty"`
	SESConfigurationSet *string        `json:"ses_configuration_set,omitempty"`
	MaxSendRate         *int           `json:"max_send_rate"`
	BounceMailbox       *BounceMailbox `json:"bounce_mailbox"`
	SESNotificationURL  string         `json:"ses_notification_url"`
	// Ready says the book can send: every required checklist item done.
	Ready     bool            `json:"ready"`
	Checklist []ChecklistItem `json:"checklist"`
}

// SettingsView is what GET answers: the settings, or only the book id when
// the book was never configured.
type SettingsView struct {
	Settings   *Settings
	BookID     uuid.UUID
	Configured bool
}

// SettingsInput is a PUT body. PUT replaces every field; an absent field
// becomes empty, except mailer_api_key: absent or equal to the masked value
// keeps the stored key, "" removes it.
type SettingsInput struct {
	SenderName   string  `json:"sender_name" validate:"max=200,headertext"`
	SenderEmail  string  `json:"sender_email" validate:"omitempty,max=254,headertext,email"`
	ReplyToEmail string  `json:"reply_to_email" validate:"omitempty,max=254,headertext,email"`
	CompanyName  string  `json:"company_name" validate:"max=200"`
	AddressLine1 string  `json:"address_line1" validate:"max=200"`
	AddressLine2 string  `json:"address_line2" validate:"max=200"`
	City         string  `json:"city" validate:"max=100"`
	State        string  `json:"state" validate:"max=100"`
	PostalCode   string  `json:"postal_code" validate:"max=20"`
	Country      string  `json:"country" validate:"max=100"`
	MailerAPIKey *string `json:"mailer_api_key" validate:"omitempty,max=1000,headertext"`
	// EventWebhookPublicKey is the base64 P-256 key SendGrid shows for its
	// signed Event Webhook; "" turns event intake off.
	EventWebhookPublicKey string `json:"event_webhook_public_key" validate:"max=1000"`
	TrackOpens            bool   `json:"track_opens"`
	TrackClicks           bool   `json:"track_clicks"`
	// DefaultTimeZone: "" or absent is UTC.
	DefaultTimeZone string `json:"default_time_zone" validate:"omitempty,timezone"`
	providerInput
}

func (in *SettingsInput) trim() {
	for _, f := range []*string{&in.SenderName, &in.SenderEmail, &in.ReplyToEmail, &in.CompanyName, &in.AddressLine1,
		&in.AddressLine2, &in.City, &in.State, &in.PostalCode, &in.Country, &in.EventWebhookPublicKey, &in.DefaultTimeZone} {
		*f = strings.TrimSpace(*f)
	}
	if in.DefaultTimeZone == "" {
		in.DefaultTimeZone = "UTC"
	}
	if in.MailerAPIKey != nil {
		k := strings.TrimSpace(*in.MailerAPIKey)
		in.MailerAPIKey = &k
	}
}

// storedSettings is the row with the key decrypted (never leaves the
// package).
type storedSettings struct {
	Settings
	apiKey string
	prov   providerRow
}

// MaskKey shows a key as four asterisks and its last four characters.
// Keys of four characters or fewer show only the asterisks.
func MaskKey(key string) string {
	if key == "" {
		return ""
	}
	r := []rune(key)
	if len(r) <= 4 {
		return "****"
	}
	return "****" + string(r[len(r)-4:])
}

// loadSettings reads and decrypts a book's settings; ok is false when the
// book has none. A key that no longer decrypts (the settings key changed)
// is logged and treated as absent, so the owner can save a new one.
func (s *shared) loadSettings(ctx context.Context, db postgres.DB, bookID uuid.UUID) (storedSettings, bool, error) {
	row, prov, sealed, err := s.st.settings(ctx, db, bookID)
	if errors.Is(err, pgx.ErrNoRows) {
		return storedSettings{prov: defaultProviderRow()}, false, nil
	}
	if err != nil {
		return storedSettings{}, false, err
	}
	out := storedSettings{Settings: row, prov: prov.row}
	open := func(name string, sealed []byte, dst *string) {
		if len(sealed) == 0 {
			return
		}
		plain, err := s.keys.Open(sealed, bookID[:])
		if err != nil {
			s.log.ErrorContext(ctx, "a saved provider secret does not decrypt; was SETTINGS_ENCRYPTION_KEY changed?", "book_id", bookID, "secret", name, "err", err)
			return
		}
		*dst = string(plain)
	}
	open("mailer_api_key", sealed, &out.apiKey)
	open("smtp_password", prov.smtpPassword, &out.prov.smtpPassword)
	open("ses_secret_access_key", prov.sesSecret, &out.prov.sesSecret)
	open("bounce_mailbox.imap_password", prov.imapPassword, &out.prov.imapPassword)
	out.MailerAPIKey = MaskKey(out.apiKey)
	out.EventWebhookURL = s.links.eventWebhookURL(bookID)
	out.present(s.links, bookID)
	return out, true, nil
}

// GetSettings returns the book's email settings (member).
func (s *Service) GetSettings(ctx context.Context, sc access.Scope) (SettingsView, error) {
	if err := s.bookFor(ctx, sc, auth.RoleMember); err != nil {
		return SettingsView{}, err
	}
	st, ok, err := s.loadSettings(ctx, s.db, sc.Book.ID)
	if err != nil || !ok {
		return SettingsView{BookID: sc.Book.ID}, err
	}
	return SettingsView{Settings: &st.Settings, BookID: sc.Book.ID, Configured: true}, nil
}

// PutSettings creates or replaces the book's email settings (owner).
func (s *Service) PutSettings(ctx context.Context, sc access.Scope, in SettingsInput) (Settings, error) {
	if err := s.bookFor(ctx, sc, auth.RoleOwner); err != nil {
		return Settings{}, err
	}
	in.trim()
	if err := validate.Struct(in); err != nil {
		return Settings{}, err
	}
	if in.EventWebhookPublicKey != "" {
		if _, err := delivery.ParsePublicKey(in.EventWebhookPublicKey); err != nil {
			return Settings{}, apperr.Invalidf("`event_webhook_public_key` must be the base64 P-256 public key that SendGrid shows for its signed Event Webhook.")
		}
	}
	var out Settings
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		// The book row lock serialises two PUTs of the masked value.
		if err := s.st.lockBook(ctx, tx, sc.Book.ID); err != nil {
			return err
		}
		cur, _, err := s.loadSettings(ctx, tx, sc.Book.ID)
		if err != nil {
			return err
		}
		prov, err := in.resolve(cur, s.allowInsecure)
		if err != nil {
			return err
		}
		apiKey := cur.apiKey
		if in.MailerAPIKey != nil && *in.MailerAPIKey != cur.MailerAPIKey {
			apiKey = *in.MailerAPIKey
		}
		if prov.Provider != ProviderSendGrid {
			// The SendGrid key belongs to SendGrid: a book that moves away
			// from it does not keep it.
			apiKey = ""
		}
		seal := func(plain string) ([]byte, error) {
			if plain == "" {
				return nil, nil
			}
			sealed, err := s.keys.Seal([]byte(plain), sc.Book.ID[:])
			if err != nil {
				return nil, apperr.Wrap(err, apperr.Internal, "encrypt provider secret")
			}
			return sealed, nil
		}
		var sealed []byte
		var sp sealedProvider
		sp.row = prov
		for _, x := range []struct {
			plain string
			dst   *[]byte
		}{{apiKey, &sealed}, {prov.smtpPassword, &sp.smtpPassword}, {prov.sesSecret, &sp.sesSecret}, {prov.imapPassword, &sp.imapPassword}} {
			if *x.dst, err = seal(x.plain); err != nil {
				return err
			}
		}
		row, err := s.st.upsertSettings(ctx, tx, sc.Book.ID, in, sealed, sp, s.now())
		if err != nil {
			return err
		}
		if cur.DefaultTimeZone != row.DefaultTimeZone {
			// Who waits for a window waits until a time read in the old
			// zone: the next pass reads them again.
			if err := s.st.releaseBookHolds(ctx, tx, sc.Book.ID); err != nil {
				return err
			}
		}
		row.MailerAPIKey = MaskKey(apiKey)
		row.EventWebhookURL = s.links.eventWebhookURL(sc.Book.ID)
		saved := storedSettings{Settings: row, apiKey: apiKey, prov: prov}
		saved.present(s.links, sc.Book.ID)
		out = saved.Settings
		// What changed, never the provider key: only whether it changed.
		return audit.Record(ctx, tx, audit.Entry{
			TeamID: sc.Book.TeamID, Actor: audit.From(sc.Actor), Action: "email_settings.updated",
			TargetType: "book", TargetID: sc.Book.ID.String(),
			Details: map[string]any{
				"sender_email": row.SenderEmail, "sender_name": row.SenderName,
				"mailer_api_key_changed": apiKey != cur.apiKey,
				"track_opens":            row.TrackOpens, "track_clicks": row.TrackClicks,
				"provider": prov.Provider, "max_send_rate": prov.MaxSendRate,
				"provider_secret_changed": prov.smtpPassword != cur.prov.smtpPassword || prov.sesSecret != cur.prov.sesSecret ||
					prov.imapPassword != cur.prov.imapPassword,
			},
		})
	})
	return out, err
}

// VerifyResult is what trying the saved provider found.
type VerifyResult struct {
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// VerifySettings tries the book's saved provider for real without sending
// an email (member): SMTP connects, starts TLS as set and authenticates;
// SES asks GetAccount; SendGrid proves the key. Detail says what failed
// and never holds a secret.
func (s *Service) VerifySettings(ctx context.Context, sc access.Scope) (VerifyResult, error) {
	if err := s.bookFor(ctx, sc, auth.RoleMember); err != nil {
		return VerifyResult{}, err
	}
	st, ok, err := s.loadSettings(ctx, s.db, sc.Book.ID)
	if err != nil {
		return VerifyResult{}, err
	}
	if !ok {
		return VerifyResult{Detail: "No email settings are saved for this book."}, nil
	}
	good, detail := s.mail.Verify(ctx, st.account(sc.Book.ID), st.apiKey)
	for _, secret := range []string{st.apiKey, st.prov.smtpPassword, st.prov.sesSecret} {
		if secret != "" {
			detail = strings.ReplaceAll(detail, secret, MaskKey(secret))
		}
	}
	return VerifyResult{OK: good, Detail: detail}, nil
}
