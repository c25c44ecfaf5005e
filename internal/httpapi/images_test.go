package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/campaigns"
)

// uploadImage posts data as the multipart file part field.
func uploadImage(t testing.TB, cl *apptest.Client, field, filename string, data []byte) *apptest.Response {
	t.Helper()
	form := apptest.Multipart(t, map[string]string{"note": "ignored"}, apptest.File{Field: field, Name: filename, Data: data})
	return cl.Post("/api/campaign-images", form)
}

// getImage fetches an image from the service at base.
func getImage(t *testing.T, base, path string) (*http.Response, []byte) {
	t.Helper()
	res, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, body
}

func TestImageUploadAndServe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newCampEnv(t, "trial", apptest.Options{Env: map[string]string{"IMAGES_DIR": dir}})
	// A second instance on the same database, with a disk of its own.
	other := apptest.Setup(t, apptest.Options{Bare: true, DatabaseURL: c.Env.DBURL}).Env
	formats := map[string]struct {
		data []byte
		ext  string
		ct   string
	}{
		// The names lie on purpose: the content decides.
		"photo.txt": {apptest.PNG(), ".png", "image/png"},
		"x.png":     {append([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F', 0}, make([]byte, 64)...), ".jpg", "image/jpeg"},
		"x.jpg":     {append([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), make([]byte, 8)...), ".gif", "image/gif"},
		"x.gif":     {append([]byte("RIFF\x24\x00\x00\x00WEBPVP8 "), make([]byte, 40)...), ".webp", "image/webp"},
	}
	name := regexp.MustCompile(`^https://contacts\.example\.com/images/([0-9a-f]{32})(\.[a-z]+)$`)
	for filename, f := range formats {
		r := uploadImage(t, c.O, "image", filename, f.data).Expect(http.StatusOK)
		m := name.FindStringSubmatch(r.String("data.url"))
		if m == nil || m[2] != f.ext {
			t.Fatalf("%s: url %q, want extension %s", filename, r.String("data.url"), f.ext)
		}
		if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_images WHERE name = $1 AND book_id = $2 AND content_type = $3`, m[1]+m[2], c.Book, f.ct); n != 1 {
			t.Fatalf("%s: %d rows stored for it", filename, n)
		}
		for _, base := range []string{c.Env.URL, other.URL} {
			res, body := getImage(t, base, "/images/"+m[1]+m[2])
			if res.StatusCode != http.StatusOK || !bytes.Equal(body, f.data) || res.Header.Get("Content-Type") != f.ct ||
				res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
				t.Fatalf("%s from %s: served %d %v", filename, base, res.StatusCode, res.Header)
			}
		}
	}
	// Served without authentication; nothing but stored names.
	for _, path := range []string{"/images/", "/images/..%2f..%2fetc%2fpasswd", "/images/../../etc/passwd", "/images/%2e%2e",
		"/images/0123456789abcdef0123456789abcdef.png", "/images/.upload-1", "/images/" + strings.Repeat("a", 32) + ".exe"} {
		if res, _ := getImage(t, c.Env.URL, path); res.StatusCode != http.StatusNotFound {
			t.Fatalf("%s: %d, want 404", path, res.StatusCode)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("%d files in the images dir; images live in the database", len(entries))
	}
}

// Images that earlier versions stored as files under IMAGES_DIR are copied
// into the database under their names, once however often it runs, and
// are then served by every instance.
func TestImageFilesImport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	png, jpg := "0123456789abcdef0123456789abcdef.png", "fedcba9876543210fedcba9876543210.jpg"
	files := map[string][]byte{
		png:                                    apptest.PNG(),
		jpg:                                    append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, make([]byte, 32)...),
		"abababababababababababababababab.gif": []byte("<html>not a gif</html>"), // skipped: not an image
		"notes.txt":                            []byte("not named like an image"),
		".upload-123":                          apptest.PNG(), // an interrupted upload's temporary file
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	for round, want := range []campaigns.ImageImport{
		{Found: 3, Imported: 2, Skipped: []string{"abababababababababababababababab.gif"}},
		{Found: 3, AlreadyStored: 2, Skipped: []string{"abababababababababababababababab.gif"}},
	} {
		got, err := campaigns.ImportImageFiles(context.Background(), env.App.DB, dir)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: %+v, want %+v", round+1, got, want)
		}
	}
	if n := env.QueryInt(`SELECT count(*) FROM campaign_images WHERE book_id IS NULL`); n != 2 {
		t.Fatalf("%d images stored, want 2", n)
	}
	other := apptest.Setup(t, apptest.Options{Bare: true, DatabaseURL: env.DBURL}).Env
	for name, ct := range map[string]string{png: "image/png", jpg: "image/jpeg"} {
		res, body := getImage(t, other.URL, "/images/"+name)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != ct || !bytes.Equal(body, files[name]) {
			t.Fatalf("%s: %d %s", name, res.StatusCode, res.Header.Get("Content-Type"))
		}
	}
	// A missing directory is nothing to import.
	if got, err := campaigns.ImportImageFiles(context.Background(), env.App.DB, filepath.Join(dir, "missing")); err != nil || got.Found != 0 {
		t.Fatalf("missing directory: %+v, %v", got, err)
	}
}

func TestImageUploadErrors(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	uploadImage(t, c.O, "image", "a.png", []byte("<html>not an image</html>")).ExpectError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
	uploadImage(t, c.O, "image", "a.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`)).ExpectError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
	uploadImage(t, c.O, "image", "a.png", nil).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	uploadImage(t, c.O, "file", "a.png", apptest.PNG()).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	big := append(apptest.PNG(), make([]byte, 5<<20)...)
	uploadImage(t, c.O, "image", "big.png", big).ExpectError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	huge := append(apptest.PNG(), make([]byte, 8<<20)...)
	uploadImage(t, c.O, "image", "huge.png", huge).ExpectError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	exact := append(apptest.PNG(), make([]byte, 5<<20-len(apptest.PNG()))...)
	uploadImage(t, c.O, "image", "exact.png", exact).Expect(http.StatusOK)
	c.O.Post("/api/campaign-images", map[string]any{"image": "x"}).ExpectError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
	uploadImage(t, c.Owner.Client, "image", "a.png", apptest.PNG()).ExpectError(http.StatusBadRequest, "MISSING_BOOK")
	viewer := c.Env.Join(c.Owner, "viewer", "viewer").InBook(c.Book)
	uploadImage(t, viewer, "image", "a.png", apptest.PNG()).ExpectError(http.StatusForbidden, "FORBIDDEN")
	c.Owner.SetAddon("none")
	uploadImage(t, c.O, "image", "a.png", apptest.PNG()).ExpectError(http.StatusForbidden, "ADDON_REQUIRED")
}
