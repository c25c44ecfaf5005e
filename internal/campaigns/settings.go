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
	// EventsReceivedAt is when a signed event batch last reached the
	// book (to within a minute); nil when none has.
	EventsReceivedAt *time.Time `json:"events_received_at"`
	CreatedAt        time.Time  `json:"created_at"`
	UpdatedAt        time.Time  `json:"updated_at"`
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
	row, sealed, err := s.st.settings(ctx, db, bookID)
	if errors.Is(err, pgx.ErrNoRows) {
		return storedSettings{}, false, nil
	}
	if err != nil {
		return storedSettings{}, false, err
	}
	out := storedSettings{Settings: row}
	if len(sealed) > 0 {
		key, err := s.keys.Open(sealed, bookID[:])
		if err != nil {
			s.log.ErrorContext(ctx, "mailer api key does not decrypt; was SETTINGS_ENCRYPTION_KEY changed?", "book_id", bookID, "err", err)
		} else {
			out.apiKey = string(key)
		}
	}
	out.MailerAPIKey = MaskKey(out.apiKey)
	out.EventWebhookURL = s.links.eventWebhookURL(bookID)
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
		apiKey := cur.apiKey
		if in.MailerAPIKey != nil && *in.MailerAPIKey != cur.MailerAPIKey {
			apiKey = *in.MailerAPIKey
		}
		var sealed []byte
		if apiKey != "" {
			// Bound to the book: a sealed key copied to another book does not open.
			if sealed, err = s.keys.Seal([]byte(apiKey), sc.Book.ID[:]); err != nil {
				return apperr.Wrap(err, apperr.Internal, "encrypt mailer key")
			}
		}
		row, err := s.st.upsertSettings(ctx, tx, sc.Book.ID, in, sealed, s.now())
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
		out = row
		// What changed, never the provider key: only whether it changed.
		return audit.Record(ctx, tx, audit.Entry{
			TeamID: sc.Book.TeamID, Actor: audit.From(sc.Actor), Action: "email_settings.updated",
			TargetType: "book", TargetID: sc.Book.ID.String(),
			Details: map[string]any{
				"sender_email": row.SenderEmail, "sender_name": row.SenderName,
				"mailer_api_key_changed": apiKey != cur.apiKey,
				"track_opens":            row.TrackOpens, "track_clicks": row.TrackClicks,
			},
		})
	})
	return out, err
}
