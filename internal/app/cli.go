package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/config"
	"github.com/contactbook/contactbook/internal/postgres"
)

const usage = `usage: contactbook [command]

commands:
  serve                                   run the service (default)
  migrate                                 apply pending database migrations
  addon set --team ID --status STATUS     set a team's Campaigns add-on
                                          (none, trial, active, canceled)

Configuration comes from environment variables; see README.md.`

// Main runs the command line. It returns instead of exiting so main can
// exit once, and tests can call it.
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := config.Load(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := NewLogger(cfg, stderr)
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, cfg, log, args)
	case "migrate":
		applied, err := postgres.Migrate(ctx, cfg.DatabaseURL)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "applied %d migration(s)\n", len(applied))
		for _, f := range applied {
			fmt.Fprintln(stdout, " ", f)
		}
		return nil
	case "addon":
		return addon(ctx, cfg, log, args, stdout)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

func serve(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", cfg.HTTPAddr, "listen address (HTTP_ADDR)")
	noMigrate := fs.Bool("no-migrate", !cfg.AutoMigrate, "do not apply migrations at start-up")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.HTTPAddr, cfg.AutoMigrate = *addr, !*noMigrate
	if cfg.JWTSecretGenerated {
		log.Warn("JWT_SECRET is not set: using a random secret; tokens stop working when the process restarts")
	}
	if cfg.SystemMailerAPIKey == "" {
		log.Warn("SYSTEM_MAILER_API_KEY is not set: invitation and password reset emails are not sent; their links are logged at warn instead")
	}
	a, err := Build(ctx, cfg, log, Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	if cfg.PprofAddr != "" {
		go servePprof(log, cfg.PprofAddr)
	}
	return a.Serve(ctx, ln)
}

func addon(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "set" {
		return errors.New("usage: contactbook addon set --team ID --status none|trial|active|canceled")
	}
	fs := flag.NewFlagSet("addon set", flag.ContinueOnError)
	team := fs.String("team", "", "team id")
	status := fs.String("status", "", "none, trial, active or canceled")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	teamID, err := uuid.Parse(*team)
	if err != nil {
		return fmt.Errorf("--team must be a team id (UUID): %w", err)
	}
	cfg.AutoMigrate = false
	a, err := Build(ctx, cfg, log, Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	t, err := a.Accounts.SetAddon(ctx, teamID, *status)
	if err != nil {
		return err
	}
	log.Info("add-on set", "team_id", t.ID, "campaign_addon", t.CampaignAddon)
	fmt.Fprintf(stdout, "team %s: campaign add-on %s\n", t.ID, t.CampaignAddon)
	return nil
}
