package campaigns

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/postgres"
)

const settingsColumns = `id, book_id, sender_name, sender_email, reply_to_email, company_name, address_line1,
	address_line2, city, state, postal_code, country, event_webhook_public_key, track_opens, track_clicks,
	default_time_zone, created_at, updated_at, events_received_at, mailer_api_key_enc,
	provider, smtp_host, smtp_port, smtp_security, smtp_username, smtp_password_enc, smtp_max_connections,
	ses_region, ses_access_key_id, ses_secret_access_key_enc, ses_configuration_set, max_send_rate,
	bounce_mailbox, bounce_imap_password_enc`

// sealedProvider is the provider part of a row, its secrets sealed.
type sealedProvider struct {
	row                                   providerRow
	smtpPassword, sesSecret, imapPassword []byte
}

func scanSettings(row pgx.Row) (Settings, sealedProvider, []byte, error) {
	var st Settings
	var sealed []byte
	var sp sealedProvider
	p := &sp.row
	err := row.Scan(&st.ID, &st.BookID, &st.SenderName, &st.SenderEmail, &st.ReplyToEmail, &st.CompanyName,
		&st.AddressLine1, &st.AddressLine2, &st.City, &st.State, &st.PostalCode, &st.Country,
		&st.EventWebhookPublicKey, &st.TrackOpens, &st.TrackClicks, &st.DefaultTimeZone, &st.CreatedAt, &st.UpdatedAt, &st.EventsReceivedAt, &sealed,
		&p.Provider, &p.SMTPHost, &p.SMTPPort, &p.SMTPSecurity, &p.SMTPUsername, &sp.smtpPassword, &p.SMTPMaxConnections,
		&p.SESRegion, &p.SESAccessKeyID, &sp.sesSecret, &p.SESConfigurationSet, &p.MaxSendRate,
		&p.BounceMailbox, &sp.imapPassword)
	if p.BounceMailbox != nil {
		p.BounceMailbox.IMAPPassword = ""
	}
	return st, sp, sealed, err
}

// settings returns the row and the sealed secrets; pgx.ErrNoRows when none.
func (store) settings(ctx context.Context, db postgres.DB, bookID uuid.UUID) (Settings, sealedProvider, []byte, error) {
	return scanSettings(db.QueryRow(ctx, `SELECT `+settingsColumns+` FROM email_settings WHERE book_id = $1`, bookID))
}

func (store) upsertSettings(ctx context.Context, db postgres.DB, bookID uuid.UUID, in SettingsInput, sealed []byte, sp sealedProvider, now time.Time) (Settings, error) {
	p := sp.row
	var mailbox *BounceMailbox
	if p.BounceMailbox != nil {
		bm := *p.BounceMailbox
		bm.IMAPPassword = "" // sealed apart
		mailbox = &bm
	}
	st, _, _, err := scanSettings(db.QueryRow(ctx, `
		INSERT INTO email_settings (book_id, sender_name, sender_email, reply_to_email, company_name, address_line1,
		                            address_line2, city, state, postal_code, country, mailer_api_key_enc, created_at, updated_at,
		                            event_webhook_public_key, track_opens, track_clicks, default_time_zone,
		                            provider, smtp_host, smtp_port, smtp_security, smtp_username, smtp_password_enc,
		                            smtp_max_connections, ses_region, ses_access_key_id, ses_secret_access_key_enc,
		                            ses_configuration_set, max_send_rate, bounce_mailbox, bounce_imap_password_enc)
		VALUES (@book_id, @sender_name, @sender_email, @reply_to_email, @company_name, @address_line1,
		        @address_line2, @city, @state, @postal_code, @country, @mailer_api_key_enc, @now, @now,
		        @event_webhook_public_key, @track_opens, @track_clicks, @default_time_zone,
		        @provider, @smtp_host, @smtp_port, @smtp_security, @smtp_username, @smtp_password_enc,
		        @smtp_max_connections, @ses_region, @ses_access_key_id, @ses_secret_access_key_enc,
		        @ses_configuration_set, @max_send_rate, @bounce_mailbox, @bounce_imap_password_enc)
		ON CONFLICT (book_id) DO UPDATE SET
			sender_name = EXCLUDED.sender_name, sender_email = EXCLUDED.sender_email,
			reply_to_email = EXCLUDED.reply_to_email, company_name = EXCLUDED.company_name,
			address_line1 = EXCLUDED.address_line1, address_line2 = EXCLUDED.address_line2,
			city = EXCLUDED.city, state = EXCLUDED.state, postal_code = EXCLUDED.postal_code,
			country = EXCLUDED.country, mailer_api_key_enc = EXCLUDED.mailer_api_key_enc, updated_at = EXCLUDED.updated_at,
			event_webhook_public_key = EXCLUDED.event_webhook_public_key, track_opens = EXCLUDED.track_opens,
			track_clicks = EXCLUDED.track_clicks, default_time_zone = EXCLUDED.default_time_zone,
			provider = EXCLUDED.provider, smtp_host = EXCLUDED.smtp_host, smtp_port = EXCLUDED.smtp_port,
			smtp_security = EXCLUDED.smtp_security, smtp_username = EXCLUDED.smtp_username,
			smtp_password_enc = EXCLUDED.smtp_password_enc, smtp_max_connections = EXCLUDED.smtp_max_connections,
			ses_region = EXCLUDED.ses_region, ses_access_key_id = EXCLUDED.ses_access_key_id,
			ses_secret_access_key_enc = EXCLUDED.ses_secret_access_key_enc,
			ses_configuration_set = EXCLUDED.ses_configuration_set, max_send_rate = EXCLUDED.max_send_rate,
			bounce_mailbox = EXCLUDED.bounce_mailbox, bounce_imap_password_enc = EXCLUDED.bounce_imap_password_enc
		RETURNING `+settingsColumns,
		pgx.StrictNamedArgs{
			"book_id": bookID, "sender_name": in.SenderName, "sender_email": in.SenderEmail,
			"reply_to_email": in.ReplyToEmail, "company_name": in.CompanyName, "address_line1": in.AddressLine1,
			"address_line2": in.AddressLine2, "city": in.City, "state": in.State, "postal_code": in.PostalCode,
			"country": in.Country, "mailer_api_key_enc": sealed, "now": now,
			"event_webhook_public_key": in.EventWebhookPublicKey, "track_opens": in.TrackOpens, "track_clicks": in.TrackClicks,
			"default_time_zone": in.DefaultTimeZone,
			"provider":          p.Provider, "smtp_host": p.SMTPHost, "smtp_port": p.SMTPPort, "smtp_security": p.SMTPSecurity,
			"smtp_username": p.SMTPUsername, "smtp_password_enc": sp.smtpPassword, "smtp_max_connections": p.SMTPMaxConnections,
			"ses_region": p.SESRegion, "ses_access_key_id": p.SESAccessKeyID, "ses_secret_access_key_enc": sp.sesSecret,
			"ses_configuration_set": p.SESConfigurationSet, "max_send_rate": p.MaxSendRate, "bounce_mailbox": mailbox,
			"bounce_imap_password_enc": sp.imapPassword,
		}))
	return st, err
}

// lockBook takes the book row's lock for the rest of tx.
func (store) lockBook(ctx context.Context, tx postgres.DB, bookID uuid.UUID) error {
	return books.Lock(ctx, tx, bookID)
}

// bounceMailboxBooks lists the books whose SMTP settings name a bounce
// mailbox.
func (store) bounceMailboxBooks(ctx context.Context, db postgres.DB) ([]uuid.UUID, error) {
	rows, err := db.Query(ctx, `SELECT book_id FROM email_settings WHERE provider = 'smtp' AND bounce_mailbox IS NOT NULL ORDER BY book_id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}
