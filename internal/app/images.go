package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/config"
	"github.com/contactbook/contactbook/internal/postgres"
)

// importImageFiles copies the campaign images earlier versions kept as
// files under IMAGES_DIR into the database (see campaigns.ImportImageFiles)
// and logs what it did.
func importImageFiles(ctx context.Context, db postgres.DB, dir string, log *slog.Logger) (campaigns.ImageImport, error) {
	res, err := campaigns.ImportImageFiles(ctx, db, dir)
	if err != nil {
		return res, fmt.Errorf("import the images under IMAGES_DIR (%s): %w", dir, err)
	}
	if res.Imported > 0 {
		log.Info("imported campaign images from IMAGES_DIR into the database", "dir", dir, "imported", res.Imported, "already_stored", res.AlreadyStored)
	}
	if len(res.Skipped) > 0 {
		log.Warn("files under IMAGES_DIR named like images are not JPG, PNG, GIF or WebP images of at most 5 MB; not imported", "dir", dir, "files", res.Skipped)
	}
	return res, nil
}

func imagesCommand(ctx context.Context, args []string, stdout io.Writer) (runFunc, error) {
	const synopsis = "contactbook images import [--dir DIR]"
	const about = "Copy the campaign images stored as files under IMAGES_DIR (where versions before\n" +
		"images moved into the database kept them) into the database, so every instance\n" +
		"serves them. Idempotent: images already in the database are skipped. The files\n" +
		"are left in place. serve does the same at every start-up."
	if len(args) == 0 || args[0] != "import" {
		fs := newCommandFlags("images", synopsis, about)
		if err := fs.parse(args, stdout); err != nil {
			return nil, err
		}
		return nil, fs.mistake(fmt.Errorf("the subcommand is missing"))
	}
	fs := newCommandFlags("images import", synopsis, about)
	dir := fs.String("dir", "", "the directory to import (default: IMAGES_DIR)")
	if err := fs.parse(args[1:], stdout); err != nil {
		return nil, err
	}
	return func(cfg config.Config, log *slog.Logger) error {
		if *dir != "" {
			cfg.ImagesDir = *dir
		}
		pool, err := postgres.ConnectMode(ctx, cfg.DatabaseURL, 2, cfg.DatabasePoolMode)
		if err != nil {
			return err
		}
		defer pool.Close()
		res, err := importImageFiles(ctx, postgres.Wrap(pool), cfg.ImagesDir, log)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %d image file(s): %d imported, %d already in the database, %d skipped (not an image)\n",
			cfg.ImagesDir, res.Found, res.Imported, res.AlreadyStored, len(res.Skipped))
		return nil
	}, nil
}
