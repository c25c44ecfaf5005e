package app

import (
	"time"

	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/forms"
	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/suppression"
	"github.com/contactbook/contactbook/internal/transfer"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// wireJobs builds the durable background work: the campaigns runner
// (sending through the provider at MAILER_BASE_URL) with the scheduler's
// periodic ticks, the hourly webhook history prune, the job queue that
// runs them, the campaigns request service that queues runs on it, and the
// contact imports (transfer) with their worker, and the sign-up forms with
// their confirmation emails and the hourly prune of expired submissions.
func (a *App) wireJobs(now func() time.Time, opts Options) error {
	d := campaigns.Deps{
		DB:            a.Pool,
		Accounts:      a.Accounts,
		Books:         a.Books,
		Sender:        mailer.NewSender(a.Config.MailerBaseURL, nil),
		Now:           now,
		Log:           a.Log,
		SettingsKey:   a.Config.SettingsKey,
		PublicBaseURL: a.Config.PublicBaseURL,
		ImagesDir:     a.Config.ImagesDir,
		Observer:      a.Metrics,
	}
	a.CampaignRunner = campaigns.NewRunner(d)
	workers := river.NewWorkers()
	if err := campaigns.AddWorkers(workers, a.CampaignRunner); err != nil {
		return err
	}
	a.Transfer = transfer.NewService(a.Pool, a.Books, a.Contacts, now)
	if err := transfer.AddWorkers(workers, a.Transfer, a.Log); err != nil {
		return err
	}
	a.Forms = forms.NewService(forms.Deps{
		DB: a.Pool, Books: a.Books, Contacts: a.Contacts, Senders: a.CampaignRunner,
		Suppressor: suppression.New(now), Mail: d.Sender, PublicBaseURL: a.Config.PublicBaseURL, Now: now, Log: a.Log,
	})
	formPrune, err := forms.AddWorkers(workers, a.Forms)
	if err != nil {
		return err
	}
	var periodic []*river.PeriodicJob
	schedule, err := campaigns.Schedule(a.Config.CampaignSchedule)
	if err != nil {
		return err
	}
	prune, err := webhooks.NewRetention(a.Pool, a.Config.EventRetention, now, a.Log).Jobs(workers)
	if err != nil {
		return err
	}
	if !opts.WithoutPeriodicJobs {
		periodic = append(periodic, schedule, formPrune)
		if prune != nil {
			periodic = append(periodic, prune)
		}
	}
	a.Jobs, err = jobs.New(a.Pool, jobs.Config{Workers: workers, Periodic: periodic, RescueAfter: a.Config.JobRescueAfter, Log: a.Log})
	if err != nil {
		return err
	}
	a.Workers = append(a.Workers, a.Jobs)
	d.Runs = campaigns.NewRuns(a.Jobs.Client())
	a.Transfer.SetQueue(a.Jobs.Client())
	a.Forms.SetQueue(a.Jobs.Client())
	a.Campaigns = campaigns.NewService(d)
	a.Rights = forms.NewRights(a.Forms, a.Campaigns, a.Delivery)
	return nil
}
