package campaigns

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/contactbook/contactbook/internal/accounts"
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

// Queue enqueues a job on its own (the River client, jobs.Client).
type Queue interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// shared is what the request service and the runner both read: the
// database, the clock, the add-on state, the provider, the books' mailer
// settings with their sealed keys, and the public links.
type shared struct {
	db       postgres.Pool
	st       store
	accounts AddonSource
	sender   mailer.Sender
	now      func() time.Time
	log      *slog.Logger
	keys     KeyBox
	links    links
	segments *segments.Service
}

func newShared(d Deps) shared {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return shared{
		db: d.DB, accounts: d.Accounts, sender: d.Sender, now: d.Now, log: d.Log,
		keys: KeyBox{key: d.SettingsKey}, links: links{base: strings.TrimRight(d.PublicBaseURL, "/")},
		segments: d.Segments, st: store{outbox: d.Outbox},
	}
}
