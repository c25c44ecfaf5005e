package campaigns

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/contactbook/contactbook/internal/postgres"
)

// ImageImport counts what ImportImageFiles did.
type ImageImport struct {
	// Found is how many files in the directory have a stored image's name.
	Found int
	// Imported were copied into the database now; AlreadyStored were there
	// before (an earlier import, another instance's).
	Imported, AlreadyStored int
	// Skipped are named like images but are not JPG, PNG, GIF or WebP, or
	// larger than 5 MB: they were never served either.
	Skipped []string
}

// ImportImageFiles copies the images stored as files in dir (by earlier
// versions, which kept them on the local disk) into the database, under
// their names, so the URLs in emails already sent keep working on every
// instance. It is idempotent: names already stored are left as they are
// and their files not read, so running it at every start-up costs one
// directory listing and one query. The files are left in place; a missing
// directory is nothing to import. Files are read and inserted one at a
// time (up to 5 MB each), which bounds the memory it takes.
func ImportImageFiles(ctx context.Context, db postgres.DB, dir string) (ImageImport, error) {
	var res ImageImport
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("read the images directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && imageName.MatchString(e.Name()) {
			names = append(names, e.Name())
		}
	}
	res.Found = len(names)
	if len(names) == 0 {
		return res, nil
	}
	stored, err := storedImageNames(ctx, db, names)
	if err != nil {
		return res, err
	}
	for _, name := range names {
		if stored[name] {
			res.AlreadyStored++
			continue
		}
		path := filepath.Join(dir, name)
		st, err := os.Stat(path)
		if err != nil {
			return res, fmt.Errorf("import image %s: %w", name, err)
		}
		if st.Size() == 0 || st.Size() > MaxImageBytes {
			res.Skipped = append(res.Skipped, name)
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return res, fmt.Errorf("import image %s: %w", name, err)
		}
		ct := SniffImage(data)
		if ext, ok := imageTypes[ct]; !ok || filepath.Ext(name) != ext {
			res.Skipped = append(res.Skipped, name)
			continue
		}
		img := storedImage{Name: name, ContentType: ct, Data: data, CreatedAt: st.ModTime().UTC().Truncate(time.Microsecond)}
		if err := insertImage(ctx, db, img); err != nil {
			return res, fmt.Errorf("import image %s: %w", name, err)
		}
		res.Imported++
	}
	return res, nil
}
