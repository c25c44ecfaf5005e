package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/campaigns"
)

// Handlers of campaign images: upload and serve.

// maxImageRequest bounds the whole multipart request: the image plus room
// for the part headers and other small fields.
const maxImageRequest = campaigns.MaxImageBytes + 1<<20

func (s *Server) uploadCampaignImage(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	url, err := s.campaigns.SaveImage(r.Context(), sc, func() (io.Reader, error) {
		r.Body = http.MaxBytesReader(w, r.Body, maxImageRequest)
		mr, err := r.MultipartReader()
		if err != nil {
			return nil, apperr.New(apperr.UnsupportedMediaType, "Send the image as multipart/form-data with a file part named image.")
		}
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil, apperr.Invalidf("The form has no file part named image.")
			}
			if err != nil {
				return nil, imageReadError(err)
			}
			if part.FormName() == "image" {
				return imageReader{part}, nil
			}
		}
	})
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, map[string]string{"url": url})
}

// imageReader turns the request size limit and broken multipart bodies
// into the API's errors.
type imageReader struct{ r io.Reader }

func (ir imageReader) Read(p []byte) (int, error) {
	n, err := ir.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, imageReadError(err)
	}
	return n, err
}

func imageReadError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return apperr.New(apperr.PayloadTooLarge, "The image is larger than 5 MB.")
	}
	return apperr.Wrap(err, apperr.InvalidInput, "The multipart body could not be read.")
}

func (s *Server) serveCampaignImage(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	img, err := s.campaigns.OpenImage(r.Context(), chi.URLParam(r, "name"))
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", img.ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	// Names are random and never reused, so the content never changes.
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	http.ServeContent(w, r, "", img.ModTime, bytes.NewReader(img.Data))
	return nil
}
