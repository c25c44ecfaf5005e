package campaigns

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/segments"
)

// AddonSource tells a team's Campaigns add-on state (accounts.Service).
type AddonSource interface {
	Addon(ctx context.Context, teamID uuid.UUID) (accounts.Addon, error)
}

// Deps are what the request service and the runner are built from.
type Deps struct {
	DB       postgres.Pool
	Accounts AddonSource
	Sender   mailer.Sender
	// Mail sends through each book's provider (SendGrid through Sender);
	// nil builds one on Sender and DB.
	Mail *mailer.Dispatcher
	// AllowInsecureMail permits smtp_security none (MAIL_ALLOW_INSECURE).
	AllowInsecureMail bool
	// Now is the clock of every rule that depends on time; nil means time.Now.
	Now func() time.Time
	Log *slog.Logger
	// SettingsKey is the 32-byte AES key for the mailer API keys at rest.
	SettingsKey []byte
	// PublicBaseURL is the absolute base of unsubscribe links and image URLs.
	PublicBaseURL string
	// Processing tunes the runner; zero values take the defaults.
	Processing ProcessingOptions
	// Observer hears about processing passes (metrics); optional.
	Observer Observer
	// Queue takes the runs that requests ask for (RunArgs jobs, worked by
	// the Runner).
	Queue Queue
	// Schedule is the scheduler's cron spec (CAMPAIGN_SCHEDULE): the
	// Runner's periodic job. "" leaves the scheduler out.
	Schedule string
	// Segments compiles the segments that enrollments and audiences name.
	Segments *segments.Service
	// Outbox takes the webhook events of participants, emails and
	// unsubscribes; nil writes none.
	Outbox *events.Outbox
}

// Queue enqueues a job on its own or in the caller's transaction (the
// River client, jobs.Client).
type Queue interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// shared is what the request service and the runner both read: the
// database, the clock, the add-on state, the provider, the books' mailer
// settings with their sealed keys, and the public links.
type shared struct {
	db       postgres.Pool
	st       store
	accounts AddonSource
	sender   mailer.Sender
	mail     *mailer.Dispatcher
	now      func() time.Time
	log      *slog.Logger
	keys     auth.SecretBox
	links    links
	segments *segments.Service
	// allowInsecure permits saving smtp_security none.
	allowInsecure bool
}

func newShared(d Deps) shared {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Mail == nil {
		d.Mail = mailer.NewDispatcher(mailer.DispatcherConfig{SendGrid: d.Sender, DB: d.DB, AllowInsecure: d.AllowInsecureMail, Now: d.Now})
	}
	return shared{
		db: d.DB, accounts: d.Accounts, sender: d.Sender, mail: d.Mail, now: d.Now, log: d.Log, allowInsecure: d.AllowInsecureMail,
		keys: auth.NewSecretBox(d.SettingsKey), links: links{base: strings.TrimRight(d.PublicBaseURL, "/")},
		segments: d.Segments, st: store{outbox: d.Outbox},
	}
}
