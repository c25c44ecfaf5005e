package campaigns

import (
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/enum"
	"github.com/contactbook/contactbook/internal/mailer"
)

// Provider is the service a book sends its email through.
type Provider string

// Providers, in the order the API documents them.
const (
	ProviderSendGrid Provider = mailer.ProviderSendGrid
	ProviderSMTP     Provider = mailer.ProviderSMTP
	ProviderSES      Provider = mailer.ProviderSES
)

// Providers is every provider.
var Providers = []Provider{ProviderSendGrid, ProviderSMTP, ProviderSES}

// OneOf is the set the enum validator reads.
func (Provider) OneOf() []string { return enum.Strings(Providers) }

// SMTPSecurity is how an SMTP connection is encrypted.
type SMTPSecurity string

// SMTPSecurities: STARTTLS (default), implicit TLS, none.
var SMTPSecurities = []SMTPSecurity{mailer.SecurityStartTLS, mailer.SecurityTLS, mailer.SecurityNone}

// OneOf is the set the enum validator reads.
func (SMTPSecurity) OneOf() []string { return enum.Strings(SMTPSecurities) }

// BounceMailbox is the IMAP mailbox an SMTP book's bounces arrive in.
type BounceMailbox struct {
	IMAPHost     string `json:"imap_host"`
	IMAPPort     int    `json:"imap_port"`
	IMAPUsername string `json:"imap_username"`
	IMAPPassword string `json:"imap_password"` // masked in answers, never stored here
	IMAPFolder   string `json:"imap_folder"`
}

// ChecklistItem is one thing a book needs (or should have) before its
// email goes out well.
type ChecklistItem struct {
	Key string `json:"key"`
	// Required items make ready false while not done; the others are
	// advice (the footer's address, feedback from the provider).
	Required bool   `json:"required"`
	Done     bool   `json:"done"`
	Title    string `json:"title"`
	Detail   string `json:"detail"`
}

// providerRow is the provider part of a book's settings as stored, the
// secrets decrypted.
type providerRow struct {
	Provider            Provider
	SMTPHost            string
	SMTPPort            int
	SMTPSecurity        string
	SMTPUsername        string
	SMTPMaxConnections  int
	SESRegion           string
	SESAccessKeyID      string
	SESConfigurationSet string
	MaxSendRate         *int
	BounceMailbox       *BounceMailbox // without the password

	smtpPassword, sesSecret, imapPassword string
}

func defaultProviderRow() providerRow {
	return providerRow{Provider: ProviderSendGrid, SMTPPort: 587, SMTPSecurity: mailer.SecurityStartTLS, SMTPMaxConnections: 4}
}

// account is the mailer account of the book's settings.
func (st *storedSettings) account(bookID uuid.UUID) *mailer.Account {
	p := st.prov
	a := &mailer.Account{Key: bookID.String(), Provider: string(p.Provider)}
	if p.MaxSendRate != nil {
		a.MaxRate = *p.MaxSendRate
	}
	switch p.Provider {
	case ProviderSMTP:
		a.SMTP = mailer.SMTPAccount{Host: p.SMTPHost, Port: p.SMTPPort, Security: p.SMTPSecurity, Username: p.SMTPUsername,
			Password: p.smtpPassword, MaxConnections: p.SMTPMaxConnections}
	case ProviderSES:
		a.SES = mailer.SESAccount{Region: p.SESRegion, AccessKeyID: p.SESAccessKeyID, SecretAccessKey: p.sesSecret,
			ConfigurationSet: p.SESConfigurationSet}
	}
	return a
}

// canSend reports whether the provider has what it needs to send.
func (st *storedSettings) canSend() bool {
	p := st.prov
	switch p.Provider {
	case ProviderSMTP:
		return p.SMTPHost != "" && (p.SMTPUsername == "" || p.smtpPassword != "")
	case ProviderSES:
		return p.SESRegion != "" && p.SESAccessKeyID != "" && p.sesSecret != ""
	}
	return st.apiKey != ""
}

// present fills the answer's provider fields: only those of the chosen
// provider, secrets masked, and the checklist.
func (st *storedSettings) present(l links, bookID uuid.UUID) {
	p := st.prov
	s := &st.Settings
	s.Provider = p.Provider
	s.MaxSendRate = p.MaxSendRate
	s.SESNotificationURL = l.sesNotificationURL(bookID)
	s.SMTPHost, s.SMTPPort, s.SMTPSecurity, s.SMTPUsername, s.SMTPPassword, s.SMTPMaxConnections = nil, nil, nil, nil, nil, nil
	s.SESRegion, s.SESAccessKeyID, s.SESSecretAccessKey, s.SESConfigurationSet = nil, nil, nil, nil
	s.BounceMailbox = nil
	switch p.Provider {
	case ProviderSMTP:
		pw := MaskKey(p.smtpPassword)
		sec := p.SMTPSecurity
		s.SMTPHost, s.SMTPPort, s.SMTPSecurity, s.SMTPUsername = &p.SMTPHost, &p.SMTPPort, &sec, &p.SMTPUsername
		s.SMTPPassword, s.SMTPMaxConnections = &pw, &p.SMTPMaxConnections
		if p.BounceMailbox != nil {
			bm := *p.BounceMailbox
			bm.IMAPPassword = MaskKey(p.imapPassword)
			s.BounceMailbox = &bm
		}
	case ProviderSES:
		secret := MaskKey(p.sesSecret)
		s.SESRegion, s.SESAccessKeyID, s.SESSecretAccessKey, s.SESConfigurationSet = &p.SESRegion, &p.SESAccessKeyID, &secret, &p.SESConfigurationSet
	}
	s.Checklist = st.checklist()
	s.Ready = true
	for _, c := range s.Checklist {
		if c.Required && !c.Done {
			s.Ready = false
		}
	}
}

func (st *storedSettings) checklist() []ChecklistItem {
	p := st.prov
	s := st.Settings
	var out []ChecklistItem
	switch p.Provider {
	case ProviderSMTP:
		it := ChecklistItem{Key: "provider", Required: true, Done: st.canSend(), Title: "SMTP relay set"}
		switch {
		case p.SMTPHost == "":
			it.Detail = "Give the relay's host (smtp_host)."
		case !it.Done:
			it.Detail = "The relay user is set but its password (smtp_password) is missing."
		default:
			it.Detail = "Email goes through " + p.SMTPHost + "."
		}
		out = append(out, it)
	case ProviderSES:
		it := ChecklistItem{Key: "provider", Required: true, Done: st.canSend(), Title: "Amazon SES credentials saved"}
		if it.Done {
			it.Detail = "Email goes through SES in " + p.SESRegion + "."
		} else {
			it.Detail = "Give the region, an access key id and its secret access key."
		}
		out = append(out, it)
	default:
		it := ChecklistItem{Key: "provider", Required: true, Done: st.apiKey != "", Title: "SendGrid key saved"}
		if it.Done {
			it.Detail = "Key " + MaskKey(st.apiKey) + "."
		} else {
			it.Detail = "Campaign email cannot be sent without it."
		}
		out = append(out, it)
	}
	sender := ChecklistItem{Key: "sender_email", Required: true, Done: s.SenderEmail != "", Title: "Sender email set"}
	if sender.Done {
		sender.Detail = "Email comes from " + s.SenderEmail + "."
	} else {
		sender.Detail = "Campaign email cannot be sent without it."
	}
	out = append(out, sender)
	addr := ChecklistItem{Key: "company_address", Done: s.CompanyName != "" && s.AddressLine1 != "" && s.City != "" && s.Country != "", Title: "Company address present"}
	if addr.Done {
		addr.Detail = "Every email ends with it."
	} else {
		addr.Detail = "Give the company name, a street address, the city and the country."
	}
	out = append(out, addr)
	fb := ChecklistItem{Key: "feedback", Done: s.EventsReceivedAt != nil, Title: "Delivery events arriving"}
	switch p.Provider {
	case ProviderSMTP:
		fb = ChecklistItem{Key: "feedback", Done: p.BounceMailbox != nil, Title: "Bounce mailbox set"}
		if fb.Done {
			fb.Detail = "Bounces arriving in " + p.BounceMailbox.IMAPUsername + " at " + p.BounceMailbox.IMAPHost + " are read every 5 minutes."
		} else {
			fb.Detail = "Without it, only bounces the relay refuses at once are seen."
		}
	case ProviderSES:
		if fb.Done {
			fb.Detail = "Last notification " + s.EventsReceivedAt.UTC().Format("2006-01-02 15:04 UTC") + "."
		} else {
			fb.Detail = "Subscribe the SES notification URL to the SNS topic of your identity's bounces, complaints and deliveries."
		}
	default:
		switch {
		case fb.Done:
			fb.Detail = "Last batch " + s.EventsReceivedAt.UTC().Format("2006-01-02 15:04 UTC") + "."
		case s.EventWebhookPublicKey != "":
			fb.Detail = "No signed batch from SendGrid yet: check the Event Webhook URL in SendGrid."
		default:
			fb.Detail = "Set up the Event Webhook in SendGrid and save its verification key."
		}
	}
	return append(out, fb)
}

var (
	awsRegion        = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)
	configurationSet = regexp.MustCompile(`^[A-Za-z0-9_-]*$`)
)

// providerInput is the provider part of a PUT.
type providerInput struct {
	Provider            string         `json:"provider"`
	SMTPHost            *string        `json:"smtp_host"`
	SMTPPort            *int           `json:"smtp_port"`
	SMTPSecurity        *string        `json:"smtp_security"`
	SMTPUsername        *string        `json:"smtp_username"`
	SMTPPassword        *string        `json:"smtp_password"`
	SMTPMaxConnections  *int           `json:"smtp_max_connections"`
	SESRegion           *string        `json:"ses_region"`
	SESAccessKeyID      *string        `json:"ses_access_key_id"`
	SESSecretAccessKey  *string        `json:"ses_secret_access_key"`
	SESConfigurationSet *string        `json:"ses_configuration_set"`
	MaxSendRate         *int           `json:"max_send_rate"`
	BounceMailbox       *BounceMailbox `json:"bounce_mailbox"`
}

func trimmed(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}

// resolve checks the provider fields of in against the provider's rules
// and returns the row to store, keeping stored secrets where the masked
// value is repeated (or a secret left out) and the host and user they
// belong to did not change.
func (in *SettingsInput) resolve(cur storedSettings, allowInsecure bool) (providerRow, error) {
	prov := Provider(strings.TrimSpace(in.Provider))
	if prov == "" {
		prov = ProviderSendGrid
	}
	if _, err := enum.Parse(Providers, "`provider`", string(prov)); err != nil {
		return providerRow{}, err
	}
	// A field of another provider is refused, so that a typo or a
	// half-switched form is not silently dropped. Empty values (what a
	// settings answer carries for another provider) count as absent.
	foreign := map[Provider][]struct {
		name string
		set  bool
	}{
		ProviderSMTP: {{"smtp_host", trimmed(in.SMTPHost) != ""}, {"smtp_port", in.SMTPPort != nil}, {"smtp_security", trimmed(in.SMTPSecurity) != ""},
			{"smtp_username", trimmed(in.SMTPUsername) != ""}, {"smtp_password", trimmed(in.SMTPPassword) != ""},
			{"smtp_max_connections", in.SMTPMaxConnections != nil}, {"bounce_mailbox", in.BounceMailbox != nil}},
		ProviderSES: {{"ses_region", trimmed(in.SESRegion) != ""}, {"ses_access_key_id", trimmed(in.SESAccessKeyID) != ""},
			{"ses_secret_access_key", trimmed(in.SESSecretAccessKey) != ""}, {"ses_configuration_set", trimmed(in.SESConfigurationSet) != ""}},
		ProviderSendGrid: {{"mailer_api_key", in.MailerAPIKey != nil && *in.MailerAPIKey != ""}, {"event_webhook_public_key", in.EventWebhookPublicKey != ""}},
	}
	for _, p := range Providers {
		if p == prov {
			continue
		}
		for _, f := range foreign[p] {
			if f.set {
				return providerRow{}, apperr.Invalidf("`%s` belongs to the provider %s, not %s.", f.name, p, prov)
			}
		}
	}
	row := defaultProviderRow()
	row.Provider = prov
	if in.MaxSendRate != nil {
		if *in.MaxSendRate < 1 || *in.MaxSendRate > 1000 {
			return providerRow{}, apperr.Invalidf("`max_send_rate` must be 1 to 1000 emails a second, or null for no limit.")
		}
		rate := *in.MaxSendRate
		row.MaxSendRate = &rate
	}
	old := cur.prov
	switch prov {
	case ProviderSMTP:
		row.SMTPHost = trimmed(in.SMTPHost)
		if row.SMTPHost == "" {
			return providerRow{}, apperr.Invalidf("`smtp_host` is required for the provider smtp.")
		}
		if len(row.SMTPHost) > 253 || strings.ContainsAny(row.SMTPHost, " /:@\t\r\n") {
			return providerRow{}, apperr.Invalidf("`smtp_host` must be a host name or an IP address, without port or scheme.")
		}
		if in.SMTPPort != nil {
			if *in.SMTPPort < 1 || *in.SMTPPort > 65535 {
				return providerRow{}, apperr.Invalidf("`smtp_port` must be 1 to 65535.")
			}
			row.SMTPPort = *in.SMTPPort
		}
		if sec := trimmed(in.SMTPSecurity); sec != "" {
			if _, err := enum.Parse(SMTPSecurities, "`smtp_security`", sec); err != nil {
				return providerRow{}, err
			}
			row.SMTPSecurity = sec
		}
		if row.SMTPSecurity == mailer.SecurityNone && !allowInsecure {
			return providerRow{}, apperr.Invalidf("`smtp_security` none sends passwords and email unencrypted and is not allowed on this service.")
		}
		row.SMTPUsername = trimmed(in.SMTPUsername)
		if len(row.SMTPUsername) > 254 {
			return providerRow{}, apperr.Invalidf("`smtp_username` must be at most 254 characters.")
		}
		if in.SMTPMaxConnections != nil {
			if *in.SMTPMaxConnections < 1 || *in.SMTPMaxConnections > 20 {
				return providerRow{}, apperr.Invalidf("`smtp_max_connections` must be 1 to 20.")
			}
			row.SMTPMaxConnections = *in.SMTPMaxConnections
		}
		same := old.Provider == ProviderSMTP && old.SMTPHost == row.SMTPHost && old.SMTPUsername == row.SMTPUsername
		pw, err := keepSecret("smtp_password", in.SMTPPassword, old.smtpPassword, same)
		if err != nil {
			return providerRow{}, err
		}
		row.smtpPassword = pw
		if in.BounceMailbox != nil {
			if err := row.resolveMailbox(*in.BounceMailbox, old); err != nil {
				return providerRow{}, err
			}
		}
	case ProviderSES:
		row.SESRegion = trimmed(in.SESRegion)
		if row.SESRegion == "" {
			return providerRow{}, apperr.Invalidf("`ses_region` is required for the provider ses.")
		}
		if !awsRegion.MatchString(row.SESRegion) {
			return providerRow{}, apperr.Invalidf("`ses_region` must be an AWS region name, e.g. us-east-1.")
		}
		row.SESAccessKeyID = trimmed(in.SESAccessKeyID)
		if len(row.SESAccessKeyID) > 128 || strings.ContainsAny(row.SESAccessKeyID, " \t\r\n") {
			return providerRow{}, apperr.Invalidf("`ses_access_key_id` must be an AWS access key id.")
		}
		row.SESConfigurationSet = trimmed(in.SESConfigurationSet)
		if len(row.SESConfigurationSet) > 64 || !configurationSet.MatchString(row.SESConfigurationSet) {
			return providerRow{}, apperr.Invalidf("`ses_configuration_set` must be an SES configuration set name (letters, digits, - and _).")
		}
		same := old.Provider == ProviderSES && old.SESRegion == row.SESRegion && old.SESAccessKeyID == row.SESAccessKeyID
		secret, err := keepSecret("ses_secret_access_key", in.SESSecretAccessKey, old.sesSecret, same)
		if err != nil {
			return providerRow{}, err
		}
		row.sesSecret = secret
	}
	return row, nil
}

// keepSecret decides a secret of a PUT: a new value replaces it, ""
// removes it, and the masked value (or none) keeps the stored one only
// when same says it still belongs where it was saved for; repeating the
// mask for another host or user is refused, since the secret would go
// where it was never meant to.
func keepSecret(field string, in *string, stored string, same bool) (string, error) {
	if in == nil {
		if same {
			return stored, nil
		}
		return "", nil
	}
	v := strings.TrimSpace(*in)
	switch {
	case v == "":
		return "", nil
	case stored != "" && v == MaskKey(stored):
		if !same {
			return "", apperr.Invalidf("`%s` must be given again: the host or user it was saved for changed.", field)
		}
		return stored, nil
	case strings.HasPrefix(v, "****") && stored == "":
		return "", apperr.Invalidf("`%s` is a masked value but none is saved; give the secret itself.", field)
	case len(v) > 1000 || strings.ContainsAny(v, "\r\n"):
		return "", apperr.Invalidf("`%s` must be at most 1000 characters on one line.", field)
	}
	return v, nil
}

// resolveMailbox checks the bounce mailbox and keeps its password by the
// same rule.
func (row *providerRow) resolveMailbox(in BounceMailbox, old providerRow) error {
	bm := BounceMailbox{
		IMAPHost: strings.TrimSpace(in.IMAPHost), IMAPPort: in.IMAPPort,
		IMAPUsername: strings.TrimSpace(in.IMAPUsername), IMAPFolder: strings.TrimSpace(in.IMAPFolder),
	}
	if bm.IMAPHost == "" {
		return apperr.Invalidf("`bounce_mailbox.imap_host` is required.")
	}
	if len(bm.IMAPHost) > 253 || strings.ContainsAny(bm.IMAPHost, " /:@\t\r\n") {
		return apperr.Invalidf("`bounce_mailbox.imap_host` must be a host name or an IP address.")
	}
	if bm.IMAPPort == 0 {
		bm.IMAPPort = 993
	}
	if bm.IMAPPort < 1 || bm.IMAPPort > 65535 {
		return apperr.Invalidf("`bounce_mailbox.imap_port` must be 1 to 65535.")
	}
	if bm.IMAPUsername == "" {
		return apperr.Invalidf("`bounce_mailbox.imap_username` is required.")
	}
	if bm.IMAPFolder == "" {
		bm.IMAPFolder = "INBOX"
	}
	if len(bm.IMAPUsername) > 254 || len(bm.IMAPFolder) > 200 || strings.ContainsAny(bm.IMAPFolder, "\r\n") {
		return apperr.Invalidf("`bounce_mailbox.imap_username` or `imap_folder` is too long.")
	}
	same := old.BounceMailbox != nil && old.BounceMailbox.IMAPHost == bm.IMAPHost && old.BounceMailbox.IMAPUsername == bm.IMAPUsername
	var pw *string
	if in.IMAPPassword != "" {
		pw = &in.IMAPPassword
	}
	pw2, err := keepSecret("bounce_mailbox.imap_password", pw, old.imapPassword, same)
	if err != nil {
		return err
	}
	if pw2 == "" {
		return apperr.Invalidf("`bounce_mailbox.imap_password` is required.")
	}
	row.BounceMailbox, row.imapPassword = &bm, pw2
	return nil
}
