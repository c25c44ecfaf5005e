package httpapi_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
)

// pngBytes is a real 1x1 PNG.
func pngBytes() []byte {
	return []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
		"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
}

// uploadImage posts data as the multipart file part field.
func uploadImage(cl *apptest.Client, field, filename string, data []byte) *apptest.Response {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("note", "ignored")
	fw, _ := mw.CreateFormFile(field, filename)
	_, _ = fw.Write(data)
	_ = mw.Close()
	return cl.Post("/api/campaign-images", apptest.Raw{ContentType: mw.FormDataContentType(), Body: buf.Bytes()})
}

func TestImageUploadAndServe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newCampEnv(t, "trial", apptest.Options{Env: map[string]string{"IMAGES_DIR": dir}})
	formats := map[string]struct {
		data []byte
		ext  string
		ct   string
	}{
		// The names lie on purpose: the content decides.
		"photo.txt": {pngBytes(), ".png", "image/png"},
		"x.png":     {append([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F', 0}, make([]byte, 64)...), ".jpg", "image/jpeg"},
		"x.jpg":     {append([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), make([]byte, 8)...), ".gif", "image/gif"},
		"x.gif":     {append([]byte("RIFF\x24\x00\x00\x00WEBPVP8 "), make([]byte, 40)...), ".webp", "image/webp"},
	}
	name := regexp.MustCompile(`^https://contacts\.example\.com/images/([0-9a-f]{32})(\.[a-z]+)$`)
	for filename, f := range formats {
		r := uploadImage(c.ob, "image", filename, f.data).Expect(http.StatusOK)
		m := name.FindStringSubmatch(r.String("data.url"))
		if m == nil || m[2] != f.ext {
			t.Fatalf("%s: url %q, want extension %s", filename, r.String("data.url"), f.ext)
		}
		stored, err := os.ReadFile(filepath.Join(dir, m[1]+m[2]))
		if err != nil || !bytes.Equal(stored, f.data) {
			t.Fatalf("%s: stored file: %v", filename, err)
		}
		res, err := http.Get(c.env.URL + "/images/" + m[1] + m[2])
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !bytes.Equal(body, f.data) || res.Header.Get("Content-Type") != f.ct ||
			res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Fatalf("%s: served %d %v", filename, res.StatusCode, res.Header)
		}
	}
	// Served without authentication; nothing but stored names.
	for _, path := range []string{"/images/", "/images/..%2f..%2fetc%2fpasswd", "/images/../../etc/passwd", "/images/%2e%2e",
		"/images/0123456789abcdef0123456789abcdef.png", "/images/.upload-1", "/images/" + strings.Repeat("a", 32) + ".exe"} {
		res, err := http.Get(c.env.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Fatalf("%s: %d, want 404", path, res.StatusCode)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(formats) {
		t.Fatalf("%d files in the images dir, want %d (no temporary leftovers)", len(entries), len(formats))
	}
}

func TestImageUploadErrors(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	uploadImage(c.ob, "image", "a.png", []byte("<html>not an image</html>")).ExpectError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
	uploadImage(c.ob, "image", "a.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`)).ExpectError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
	uploadImage(c.ob, "image", "a.png", nil).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	uploadImage(c.ob, "file", "a.png", pngBytes()).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	big := append(pngBytes(), make([]byte, 5<<20)...)
	uploadImage(c.ob, "image", "big.png", big).ExpectError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	huge := append(pngBytes(), make([]byte, 8<<20)...)
	uploadImage(c.ob, "image", "huge.png", huge).ExpectError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	exact := append(pngBytes(), make([]byte, 5<<20-len(pngBytes()))...)
	uploadImage(c.ob, "image", "exact.png", exact).Expect(http.StatusOK)
	c.ob.Post("/api/campaign-images", map[string]any{"image": "x"}).ExpectError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
	uploadImage(c.owner.Client, "image", "a.png", pngBytes()).ExpectError(http.StatusBadRequest, "MISSING_BOOK")
	viewer := c.env.Join(c.owner, "viewer", "viewer").InBook(c.book)
	uploadImage(viewer, "image", "a.png", pngBytes()).ExpectError(http.StatusForbidden, "FORBIDDEN")
	c.owner.SetAddon("none")
	uploadImage(c.ob, "image", "a.png", pngBytes()).ExpectError(http.StatusForbidden, "ADDON_REQUIRED")
}
