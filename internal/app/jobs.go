package app

import (
	"time"

	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/accountmail"
	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/forms"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/suppression"
	"github.com/contactbook/contactbook/internal/transfer"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// wireJobs builds the services whose work runs as jobs and hands every
// package's background work to the queue, in one list: the campaigns
// runner (sending through the provider at MAILER_BASE_URL, ticked on
// CAMPAIGN_SCHEDULE), the contact imports, the sign-up forms'
// confirmation emails and their hourly prune, the webhook history prune
// and recoveries, the account emails, the accounts sweep and the audit log
// retention. The services enqueue on the
// queue's client, passed to their constructors.
func (a *App) wireJobs(now func() time.Time) error {
	queue := a.Jobs.Client()
	d := campaigns.Deps{
		DB:            a.DB,
		Accounts:      a.Accounts,
		Sender:        mailer.NewSender(a.Config.MailerBaseURL, nil),
		Now:           now,
		Log:           a.Log,
		SettingsKey:   a.Config.SettingsKey,
		PublicBaseURL: a.Config.PublicBaseURL,
		Observer:      a.Metrics,
		Queue:         queue,
		Schedule:      a.Config.CampaignSchedule,
		Segments:      a.Segments,
		Outbox:        a.Outbox,
	}
	a.CampaignRunner = campaigns.NewRunner(d)
	a.Campaigns = campaigns.NewService(d)
	a.Transfer = transfer.NewService(a.DB, a.Contacts, queue, now, a.Log)
	a.Forms = forms.NewService(forms.Deps{
		DB: a.DB, Books: a.Books, Contacts: a.Contacts, Senders: a.CampaignRunner, Suppressor: suppression.New(now).WithOutbox(a.Outbox),
		Mail: d.Sender, Queue: queue, PublicBaseURL: a.Config.PublicBaseURL, Now: now, Log: a.Log,
	})
	a.Rights = forms.NewRights(a.Forms, a.Campaigns, a.Delivery)
	accountMail := accountmail.NewWorker(a.DB, queue, accountmail.Sender{
		Client: mailer.NewSender(a.Config.MailerBaseURL, nil), APIKey: a.Config.SystemMailerAPIKey,
		FromEmail: a.Config.SystemSenderEmail, FromName: a.Config.SystemSenderName,
	}, now, a.Log)
	return a.Jobs.Add(
		a.CampaignRunner,
		a.Transfer,
		a.Forms,
		webhookRetention{webhooks.NewRetention(a.Direct, a.Config.EventRetention, now, a.Log)},
		a.Webhooks,
		accountMail,
		accounts.NewSweeper(a.DB, now),
		audit.NewRetention(a.DB, a.Log),
	)
}

// webhookRetention hands the webhook history prune to the queue as a
// jobs.Source: webhooks.Retention registers its worker and returns its one
// periodic job (nil when retention is off) rather than a list.
type webhookRetention struct{ r *webhooks.Retention }

func (s webhookRetention) Jobs(w *river.Workers) ([]*river.PeriodicJob, error) {
	prune, err := s.r.Jobs(w)
	if err != nil || prune == nil {
		return nil, err
	}
	return []*river.PeriodicJob{prune}, nil
}
