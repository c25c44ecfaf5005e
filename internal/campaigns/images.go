package campaigns

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
)

// MaxImageBytes bounds an uploaded campaign image.
const MaxImageBytes = 5 << 20

// imageTypes are the accepted formats by content type, with the extension
// a stored file gets.
var imageTypes = map[string]string{
	"image/jpeg": ".jpg",
	"image/png":  ".png",
	"image/gif":  ".gif",
	"image/webp": ".webp",
}

// imageName is the only shape a stored image name has: 128 random bits in
// hex and a known extension. Anything else (a path, "..") is not an image.
var imageName = regexp.MustCompile(`^[0-9a-f]{32}\.(jpg|png|gif|webp)$`)

// SniffImage tells the image format from the first bytes of a file, by
// the formats' magic numbers; "" when it is none of JPEG, PNG, GIF, WebP.
// The file name and the client's content type are never trusted.
func SniffImage(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && bytes.Equal(head[:4], []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WEBP")):
		return "image/webp"
	}
	return ""
}

// SaveImage stores an uploaded image (member) and returns its absolute
// public URL. open is called only once the caller may upload, and yields
// the file's content.
func (s *Service) SaveImage(ctx context.Context, sc books.Scope, open func() (io.Reader, error)) (string, error) {
	if err := s.bookFor(ctx, sc, auth.RoleMember); err != nil {
		return "", err
	}
	src, err := open()
	if err != nil {
		return "", err
	}
	data, err := io.ReadAll(io.LimitReader(src, MaxImageBytes+1))
	if err != nil {
		return "", err
	}
	if len(data) > MaxImageBytes {
		return "", apperr.New(apperr.PayloadTooLarge, "The image is larger than 5 MB.")
	}
	if len(data) == 0 {
		return "", apperr.Invalidf("The image file is empty.")
	}
	ext, ok := imageTypes[SniffImage(data)]
	if !ok {
		return "", apperr.New(apperr.UnsupportedMediaType, "The file is not a JPG, PNG, GIF or WebP image.")
	}
	name, err := s.images.write(data, ext)
	if err != nil {
		return "", apperr.Wrap(err, apperr.Internal, "store image")
	}
	return s.images.url(name), nil
}

// OpenImage opens a stored image by name for serving.
func (s *Service) OpenImage(name string) (Image, error) { return s.images.Open(name) }

// ImageStore keeps uploaded campaign images as files in one directory,
// served at {PUBLIC_BASE_URL}/images/{name}.
type ImageStore struct {
	dir     string
	baseURL string
}

func (is ImageStore) url(name string) string { return is.baseURL + "/images/" + name }

// writeImage writes the file under a fresh random name: first to a
// temporary file, then renamed, so a reader never sees half an image.
func (is ImageStore) write(data []byte, ext string) (string, error) {
	if err := os.MkdirAll(is.dir, 0o755); err != nil {
		return "", err
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	name := hex.EncodeToString(rnd[:]) + ext
	tmp, err := os.CreateTemp(is.dir, ".upload-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return name, os.Rename(tmp.Name(), filepath.Join(is.dir, name))
}

// Image is a stored image opened for serving.
type Image struct {
	File        *os.File
	ContentType string
	ModTime     time.Time
}

// Open opens a stored image by name; NOT_FOUND for anything that is
// not the name of a stored image. The content type is detected from the
// content again, not taken from the extension.
func (is ImageStore) Open(name string) (Image, error) {
	notFound := apperr.NotFoundf("No image with this name.")
	if !imageName.MatchString(name) {
		return Image{}, notFound
	}
	f, err := os.Open(filepath.Join(is.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return Image{}, notFound
	}
	if err != nil {
		return Image{}, apperr.Wrap(err, apperr.Internal, "open image")
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return Image{}, notFound
	}
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	ct := SniffImage(head[:n])
	if _, err := f.Seek(0, io.SeekStart); err != nil || ct == "" {
		f.Close()
		return Image{}, apperr.Wrap(fmt.Errorf("image %s: unknown content", name), apperr.Internal, "serve image")
	}
	return Image{File: f, ContentType: ct, ModTime: st.ModTime()}, nil
}
