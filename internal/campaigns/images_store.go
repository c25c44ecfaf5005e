package campaigns

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
)

// storedImage is a row of campaign_images.
type storedImage struct {
	Name        string
	BookID      *uuid.UUID // nil for files imported from IMAGES_DIR
	ContentType string
	Data        []byte
	CreatedAt   time.Time
}

// insertImage stores img; a name already stored keeps its row (names are
// random, so only an import of the same file meets one).
func insertImage(ctx context.Context, db postgres.DB, img storedImage) error {
	_, err := db.Exec(ctx, `
		INSERT INTO campaign_images (name, book_id, content_type, data, created_at)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (name) DO NOTHING`, img.Name, img.BookID, img.ContentType, img.Data, img.CreatedAt)
	return err
}

func readImage(ctx context.Context, db postgres.DB, name string) (Image, error) {
	var img Image
	err := db.QueryRow(ctx, `SELECT content_type, data, created_at FROM campaign_images WHERE name = $1`, name).
		Scan(&img.ContentType, &img.Data, &img.ModTime)
	if errors.Is(err, pgx.ErrNoRows) {
		return Image{}, errImageNotFound
	}
	return img, err
}

// storedImageNames returns which of names are stored already.
func storedImageNames(ctx context.Context, db postgres.DB, names []string) (map[string]bool, error) {
	rows, err := db.Query(ctx, `SELECT name FROM campaign_images WHERE name = ANY($1)`, names)
	if err != nil {
		return nil, err
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	stored := make(map[string]bool, len(found))
	for _, n := range found {
		stored[n] = true
	}
	return stored, nil
}
