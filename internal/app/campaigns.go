package app

import (
	"time"

	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/mailer"
)

// wireCampaigns builds the campaigns runner (sending through the provider
// at MAILER_BASE_URL) with its scheduler, and the request service that
// hands runs to the runner.
func (a *App) wireCampaigns(now func() time.Time) {
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
	d.Runs = a.CampaignRunner
	a.Campaigns = campaigns.NewService(d)
	a.Workers = append(a.Workers, a.CampaignRunner, campaigns.NewScheduler(a.CampaignRunner, a.Config.CampaignSchedule, a.Log))
}
