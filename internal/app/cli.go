package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/config"
	"github.com/contactbook/contactbook/internal/httpapi"
	"github.com/contactbook/contactbook/internal/postgres"
)

const usage = `usage: contactbook [command] [flags]

commands:
  serve [--addr ADDR] [--no-migrate]      run the service (the default command)
  migrate                                 apply pending database migrations and exit
  addon set --team ID --status STATUS     set a team's Campaigns add-on
                                          (none, trial, active, canceled)
  images import [--dir DIR]               copy campaign images kept as files
                                          under IMAGES_DIR into the database
  help                                    print this text

"contactbook COMMAND --help" describes a command. Settings come from
environment variables (DATABASE_URL, HTTP_ADDR, ...), listed in docs/configuration.md.`

// errHelpShown reports that a command printed its usage because it was
// asked to (-h, --help): the command line ends there, successfully.
var errHelpShown = errors.New("help shown")

// runFunc runs a parsed command with the loaded configuration.
type runFunc func(cfg config.Config, log *slog.Logger) error

// Main runs the command line. It returns instead of exiting so main can
// exit once, and tests can call it. Flags are parsed before the
// configuration is loaded, so --help works whatever the environment holds.
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || isHelp(args[0])) {
		cmd, args = args[0], args[1:]
	}
	var run runFunc
	var err error
	switch {
	case cmd == "help" || isHelp(cmd):
		fmt.Fprintln(stdout, usage)
		return nil
	case cmd == "serve":
		run, err = serveCommand(ctx, args, stdout)
	case cmd == "migrate":
		run, err = migrateCommand(ctx, args, stdout)
	case cmd == "addon":
		run, err = addonCommand(ctx, args, stdout)
	case cmd == "images":
		run, err = imagesCommand(ctx, args, stdout)
	default:
		return fmt.Errorf("unknown command %q\n\n%s", cmd, usage)
	}
	if errors.Is(err, errHelpShown) {
		return nil
	}
	if err != nil {
		return err
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return run(cfg, NewLogger(cfg, stderr))
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

func serveCommand(ctx context.Context, args []string, stdout io.Writer) (runFunc, error) {
	fs := newCommandFlags("serve", "contactbook serve [--addr ADDR] [--no-migrate]",
		"Run the service (HTTP API, campaign scheduler, webhook delivery) until SIGINT or\n"+
			"SIGTERM, then finish the work in flight and exit 0.")
	addr := fs.String("addr", "", "listen address (default: HTTP_ADDR, else :8080)")
	noMigrate := fs.Bool("no-migrate", false, "do not apply pending migrations at start-up (like AUTO_MIGRATE=false)")
	if err := fs.parse(args, stdout); err != nil {
		return nil, err
	}
	return func(cfg config.Config, log *slog.Logger) error {
		if *addr != "" {
			cfg.SetHTTPAddr(*addr)
		}
		if *noMigrate {
			cfg.AutoMigrate = false
		}
		return serve(ctx, cfg, log)
	}, nil
}

func serve(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	// Links derived from a listen address on port 0 need the port the
	// system picks, so that listener is bound first; otherwise it is bound
	// once the service is built, so nothing connects to a port that
	// cannot answer yet.
	var ln net.Listener
	if _, port, _ := net.SplitHostPort(cfg.HTTPAddr); port == "0" && cfg.PublicBaseURLDerived {
		var err error
		if ln, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
			return fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
		}
		defer ln.Close() // closed by Serve; a no-op then
		cfg.SetHTTPAddr(ln.Addr().String())
	}
	reportSettings(cfg, log)
	a, err := Build(ctx, cfg, log, Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	if _, err := importImageFiles(ctx, a.DB, cfg.ImagesDir, log); err != nil {
		return err
	}
	// The side listeners (metrics, profiles) are bound before the public
	// one, so a bad address stops the start-up instead of a feature.
	var side []SideListener
	defer func() {
		for _, s := range side {
			s.Listener.Close() // already closed when Serve ran; a no-op then
		}
	}()
	listen := func(name, addr string, h http.Handler) error {
		if addr == "" {
			return nil
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listen on %s (%s): %w", addr, name, err)
		}
		side = append(side, SideListener{Name: name, Listener: ln, Handler: h})
		return nil
	}
	if err := listen("metrics", cfg.MetricsAddr, httpapi.MetricsHandler(log, a.Metrics.Handler(), cfg.MetricsToken)); err != nil {
		return err
	}
	if err := listen("pprof", cfg.PprofAddr, pprofHandler()); err != nil {
		return err
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
			return fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
		}
	}
	return a.Serve(ctx, ln, side...)
}

// reportSettings says at start-up which features are off or weakened by
// the configuration, so an operator sees it before a user meets it. Only
// serve reports: the other commands touch none of these features.
func reportSettings(cfg config.Config, log *slog.Logger) {
	if cfg.JWTSecretGenerated {
		log.Warn("JWT_SECRET is not set: using a random secret; tokens stop working when the process restarts")
	} else if len(cfg.JWTSecret) < config.MinJWTSecret {
		// Refusing to start would take the whole service down over a
		// secret that still works; a weak one is the operator's call.
		log.Warn(fmt.Sprintf("JWT_SECRET is shorter than %d characters: login tokens are only as hard to forge as the secret is to guess", config.MinJWTSecret))
	}
	if !cfg.BillingEnabled() {
		log.Warn("billing is off: STRIPE_SECRET_KEY is not set, so add-on checkout answers 503 SERVICE_UNAVAILABLE")
	}
	if cfg.StripeWebhookSecret == "" {
		log.Warn("billing webhook is off: STRIPE_WEBHOOK_SECRET is not set, so payment events are refused with 503 and the add-on is not activated by payments")
	}
	if cfg.SystemMailProvider == "sendgrid" && cfg.SystemMailerAPIKey == "" {
		log.Warn("SYSTEM_MAILER_API_KEY is not set: invitation and password reset emails are not sent; their links are logged at warn instead")
	}
	if cfg.PublicBaseURLDerived {
		log.Info("PUBLIC_BASE_URL is not set: links in emails, image URLs and the API reference use " + cfg.PublicBaseURL +
			", the address the service listens on; set PUBLIC_BASE_URL to the address people reach it at")
	}
	if cfg.MetricsAddr == "" && cfg.MetricsToken == "" {
		log.Info("metrics are off: set METRICS_ADDR to serve /metrics on a listener of its own, or METRICS_TOKEN to serve it on the public port to holders of that bearer token")
	}
}

func migrateCommand(ctx context.Context, args []string, stdout io.Writer) (runFunc, error) {
	fs := newCommandFlags("migrate", "contactbook migrate", "Apply the pending database migrations to DATABASE_URL and exit.")
	if err := fs.parse(args, stdout); err != nil {
		return nil, err
	}
	return func(cfg config.Config, _ *slog.Logger) error {
		applied, err := postgres.Migrate(ctx, cfg.DatabaseDirectURL)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "applied %d migration(s)\n", len(applied))
		for _, f := range applied {
			fmt.Fprintln(stdout, " ", f)
		}
		return nil
	}, nil
}

func addonCommand(ctx context.Context, args []string, stdout io.Writer) (runFunc, error) {
	const synopsis = "contactbook addon set --team ID --status none|trial|active|canceled"
	const about = "Set a team's Campaigns add-on by hand, without the payment provider."
	if len(args) == 0 || args[0] != "set" {
		fs := newCommandFlags("addon", synopsis, about)
		if err := fs.parse(args, stdout); err != nil {
			return nil, err
		}
		return nil, fs.mistake(errors.New("the subcommand is missing"))
	}
	fs := newCommandFlags("addon set", synopsis, about)
	team := fs.String("team", "", "the team's id")
	status := fs.String("status", "", "none, trial, active or canceled")
	if err := fs.parse(args[1:], stdout); err != nil {
		return nil, err
	}
	teamID, err := uuid.Parse(*team)
	if err != nil {
		return nil, fs.mistake(fmt.Errorf("--team must be a team id (a UUID), got %q", *team))
	}
	return func(cfg config.Config, log *slog.Logger) error {
		cfg.AutoMigrate = false
		a, err := Build(ctx, cfg, log, Options{})
		if err != nil {
			return err
		}
		defer a.Close()
		t, err := a.Accounts.SetAddon(ctx, teamID, accounts.AddonState(*status))
		if err != nil {
			return err
		}
		log.Info("add-on set", "team_id", t.ID, "campaign_addon", t.CampaignAddon)
		fmt.Fprintf(stdout, "team %s: campaign add-on %s\n", t.ID, t.CampaignAddon)
		return nil
	}, nil
}

// commandFlags are the flags of one command, with the text its usage shows.
type commandFlags struct {
	*flag.FlagSet
	synopsis, about string
}

func newCommandFlags(name, synopsis, about string) *commandFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports errors and usage itself
	return &commandFlags{FlagSet: fs, synopsis: synopsis, about: about}
}

// parse parses args. Asked for help, it prints the usage to stdout and
// returns errHelpShown; on a mistake it returns the mistake and the usage.
func (c *commandFlags) parse(args []string, stdout io.Writer) error {
	err := c.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		c.printUsage(stdout)
		return errHelpShown
	}
	if err == nil && c.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q", c.Arg(0))
	}
	if err != nil {
		return c.mistake(err)
	}
	return nil
}

// mistake is err, made on this command's line, followed by the usage.
func (c *commandFlags) mistake(err error) error {
	var b strings.Builder
	c.printUsage(&b)
	return fmt.Errorf("%s: %w\n\n%s", c.Name(), err, strings.TrimRight(b.String(), "\n"))
}

func (c *commandFlags) printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", c.synopsis, c.about)
	hasFlags := false
	c.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintln(w, "\nflags:")
		c.SetOutput(w)
		c.PrintDefaults()
		c.SetOutput(io.Discard)
	}
}
