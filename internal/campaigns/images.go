package campaigns

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"regexp"
	"time"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
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
func (s *Service) SaveImage(ctx context.Context, sc access.Scope, open func() (io.Reader, error)) (string, error) {
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
	ct := SniffImage(data)
	ext, ok := imageTypes[ct]
	if !ok {
		return "", apperr.New(apperr.UnsupportedMediaType, "The file is not a JPG, PNG, GIF or WebP image.")
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", apperr.Wrap(err, apperr.Internal, "store image")
	}
	name := hex.EncodeToString(rnd[:]) + ext
	if err := insertImage(ctx, s.db, storedImage{Name: name, BookID: &sc.Book.ID, ContentType: ct, Data: data, CreatedAt: s.now()}); err != nil {
		return "", err
	}
	return s.links.base + "/images/" + name, nil
}

// Image is a stored image, for serving.
type Image struct {
	Data        []byte
	ContentType string
	ModTime     time.Time
}

// OpenImage reads a stored image by name; NOT_FOUND for anything that is
// not the name of a stored image. Any instance serves any image: they
// live in the database.
func (s *Service) OpenImage(ctx context.Context, name string) (Image, error) {
	if !imageName.MatchString(name) {
		return Image{}, errImageNotFound
	}
	return readImage(ctx, s.db, name)
}

var errImageNotFound = apperr.NotFoundf("No image with this name.")
