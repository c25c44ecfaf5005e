// Package migrations holds the database schema as goose SQL files, embedded
// so the binary can migrate the database it serves.
package migrations

import "embed"

// FS holds every migration, applied in file-name order.
//
//go:embed *.sql
var FS embed.FS
