package app

import (
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"github.com/contactbook/contactbook/internal/accountmail"
	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/config"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/delivery"
	"github.com/contactbook/contactbook/internal/forms"
	"github.com/contactbook/contactbook/internal/idempotency"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/suppression"
	"github.com/contactbook/contactbook/internal/tracking"
	"github.com/contactbook/contactbook/internal/transactional"
	"github.com/contactbook/contactbook/internal/transfer"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// wireJobs builds the services whose work runs as jobs and hands every
// package's background work to the queue, in one list: the campaigns
// runner (sending through the provider at MAILER_BASE_URL, ticked on
// CAMPAIGN_SCHEDULE), the contact imports, the sign-up forms'
// confirmation emails and their hourly prune, the webhook history prune
// and recoveries, the account emails, the accounts prune, the prune of deleted
// contacts' tombstones and the audit log prune. The services enqueue on the
// queue's client, passed to their constructors.
func (a *App) wireJobs(now func() time.Time) error {
	queue := a.Jobs.Client()
	roots, err := mailRoots(a.Config.MailCAFile)
	if err != nil {
		return err
	}
	sendgrid := mailer.NewSender(a.Config.MailerBaseURL, nil)
	// One dispatcher for every email a book sends (campaigns, tests,
	// sign-up confirmations): one SMTP pool and one pace per book.
	mail := mailer.NewDispatcher(mailer.DispatcherConfig{
		SendGrid: sendgrid, DB: a.DB, SESEndpoint: a.Config.SESEndpoint, RootCAs: roots,
		AllowInsecure: a.Config.MailAllowInsecure, Now: now,
	})
	a.Mail = mail
	d := campaigns.Deps{
		DB:                a.DB,
		Accounts:          a.Accounts,
		Sender:            sendgrid,
		Mail:              mail,
		AllowInsecureMail: a.Config.MailAllowInsecure,
		Now:               now,
		Log:               a.Log,
		SettingsKey:       a.Config.SettingsKey,
		PublicBaseURL:     a.Config.PublicBaseURL,
		Observer:          a.Metrics,
		Queue:             queue,
		Schedule:          a.Config.CampaignSchedule,
		Segments:          a.Segments,
		Outbox:            a.Outbox,
	}
	a.CampaignRunner = campaigns.NewRunner(d)
	a.Campaigns = campaigns.NewService(d)
	var txRunner *transactional.Runner
	a.Transactional, txRunner = transactional.New(transactional.Deps{
		DB: a.DB, Composer: a.Campaigns, Provider: transactional.NewBookMailer(mail, a.Campaigns), Outbox: a.Outbox, Now: now, Log: a.Log,
	})
	a.TransactionalRunner = txRunner
	a.Tracking = tracking.NewService(tracking.Deps{DB: a.DB, Entries: a.Campaigns, Outbox: a.Outbox, Now: now, Log: a.Log})
	a.Workers = append(a.Workers, txRunner)
	a.Transfer = transfer.NewService(transfer.Deps{DB: a.DB, Contacts: a.Contacts, Queue: queue, Now: now, Log: a.Log})
	a.Forms = forms.NewService(forms.Deps{
		DB: a.DB, Books: a.Books, Contacts: a.Contacts, Senders: a.CampaignRunner, Suppressor: suppression.New(now).WithOutbox(a.Outbox),
		Mail: mail, Queue: queue, PublicBaseURL: a.Config.PublicBaseURL, Now: now, Log: a.Log,
	})
	a.Rights = forms.NewRights(a.Forms, a.Campaigns, a.Delivery)
	system, err := systemMailAccount(a.Config)
	if err != nil {
		return err
	}
	// The service's own emails keep a dispatcher of their own: their
	// relay is not a book's and shares no pool or pace with one.
	accountMail := accountmail.NewWorker(accountmail.WorkerDeps{DB: a.DB, Queue: queue, Sender: accountmail.Sender{
		Client: mailer.NewDispatcher(mailer.DispatcherConfig{
			SendGrid: mailer.NewSender(a.Config.MailerBaseURL, nil), SESEndpoint: a.Config.SESEndpoint, RootCAs: roots,
			AllowInsecure: a.Config.MailAllowInsecure, Now: now,
		}),
		APIKey: a.Config.SystemMailerAPIKey, Account: system,
		FromEmail: a.Config.SystemSenderEmail, FromName: a.Config.SystemSenderName,
	}, Now: now, Log: a.Log})
	a.BounceReader = delivery.NewBounceReader(a.Delivery, a.Campaigns, roots, a.Log)
	return a.Jobs.Add(
		a.CampaignRunner,
		a.BounceReader,
		a.Transfer,
		a.Forms,
		webhooks.NewRetention(a.Direct, a.Config.EventRetention, now, a.Log),
		a.Webhooks,
		accountMail,
		accounts.NewPruner(a.DB, now),
		contacts.NewTombstonePrune(a.DB, a.Config.EventRetention, now),
		audit.NewRetention(a.DB, a.Log),
		idempotency.NewRetention(a.Idempotency, a.Log),
		tracking.NewRetention(a.DB, a.Config.EventRetention, now, a.Log),
	)
}

// systemMailAccount is the account of SYSTEM_MAIL_PROVIDER; nil for
// SendGrid.
func systemMailAccount(c config.Config) (*mailer.Account, error) {
	switch c.SystemMailProvider {
	case mailer.ProviderSMTP:
		s, err := mailer.ParseSMTPURL(c.SystemSMTPURL)
		if err != nil {
			return nil, fmt.Errorf("SYSTEM_SMTP_URL: %w", err)
		}
		return &mailer.Account{Key: "system", Provider: mailer.ProviderSMTP, SMTP: s}, nil
	case mailer.ProviderSES:
		return &mailer.Account{Key: "system", Provider: mailer.ProviderSES, SES: mailer.SESAccount{
			Region: c.SystemSESRegion, AccessKeyID: c.SystemSESAccessKeyID, SecretAccessKey: c.SystemSESSecretAccessKey,
		}}, nil
	}
	return nil, nil
}

// mailRoots are the certificate authorities trusted for SMTP, IMAP and
// SNS certificates: the system's, and MAIL_CA_FILE's when set.
func mailRoots(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("MAIL_CA_FILE: %w", err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("MAIL_CA_FILE: %s holds no PEM certificate", file)
	}
	return roots, nil
}
