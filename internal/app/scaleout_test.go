package app_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// onePixelPNG is a real 1x1 PNG.
const onePixelPNG = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
	"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82"

// TestImagesImportCommand: `images import` copies the image files of a
// directory into the database and says what it did; a second run finds
// them there.
func TestImagesImportCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	name := "0123456789abcdef0123456789abcdef.png"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(onePixelPNG), 0o644); err != nil {
		t.Fatal(err)
	}
	db := pgtest.Setup(t)
	env := map[string]string{"DATABASE_URL": db.URL, "LOG_FORMAT": "text"}
	for _, want := range []string{"1 imported, 0 already", "0 imported, 1 already"} {
		stdout, stderr, err := run(t, ctx, env, "images", "import", "--dir", dir)
		if err != nil || !strings.Contains(stdout, want) {
			t.Fatalf("images import: %v, stdout %q (want %q)\n%s", err, stdout, want, stderr)
		}
	}
	var data []byte
	if err := db.Pool.QueryRow(ctx, `SELECT data FROM campaign_images WHERE name = $1`, name).Scan(&data); err != nil || string(data) != onePixelPNG {
		t.Fatalf("stored image: %v", err)
	}
}

// TestServeImportsImagesAndDrains: serve copies IMAGES_DIR's images into
// the database at start-up, and after a stop signal keeps answering for
// SHUTDOWN_DRAIN while /readyz says 503, then exits 0.
func TestServeImportsImagesAndDrains(t *testing.T) {
	t.Parallel()
	addr, dir := apptest.FreeAddr(t), t.TempDir()
	name := "fedcba9876543210fedcba9876543210.png"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(onePixelPNG), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"DATABASE_URL": pgtest.Setup(t).URL, "AUTO_MIGRATE": "false", "LOG_FORMAT": "text",
		"HTTP_ADDR": addr, "IMAGES_DIR": dir, "SHUTDOWN_DRAIN": "2s",
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() {
		_, stderr, err := run(t, ctx, env, "serve")
		if err != nil {
			t.Logf("serve's log:\n%s", stderr)
		}
		done <- err
	}()
	status := func(path string) int {
		res, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}
	deadline := time.Now().Add(30 * time.Second)
	for status("/readyz") != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("serve not ready within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := status("/images/" + name); got != http.StatusOK {
		t.Fatalf("the imported image: %d, want 200", got)
	}
	stopped := time.Now()
	stop()
	for status("/readyz") != http.StatusServiceUnavailable {
		if time.Since(stopped) > time.Second {
			t.Fatal("/readyz still 200 a second after the stop signal")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := status("/images/" + name); got != http.StatusOK {
		t.Fatalf("a request while draining: %d, want 200", got)
	}
	if err := <-done; err != nil {
		t.Fatalf("serve after a stop: %v", err)
	}
	if d := time.Since(stopped); d < 2*time.Second {
		t.Fatalf("serve stopped %s after the signal, before SHUTDOWN_DRAIN (2s) was over", d)
	}
}
