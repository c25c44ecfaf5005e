package app

import (
	"time"

	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/mailer"
)

// wireCampaigns builds the campaigns service (sending through the
// provider at MAILER_BASE_URL) and its scheduler worker.
func (a *App) wireCampaigns(now func() time.Time) {
	a.Campaigns = campaigns.NewService(campaigns.Deps{
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
	})
	a.Workers = append(a.Workers, campaigns.NewScheduler(a.Campaigns, a.Config.CampaignSchedule, a.Log))
}
