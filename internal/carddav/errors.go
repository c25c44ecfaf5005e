package carddav

import (
	"encoding/xml"
	"errors"
	"net/http"

	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/carddav"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/contacts"
)

var (
	errTooLarge   = errors.New("the request body is too large")
	errBadRequest = errors.New("the request is malformed")
	errNotFound   = apperr.NotFoundf("No such card.")
)

func isUnauthorized(err error) bool { return apperr.Is(err, apperr.Unauthorized) }

// statusFor is the HTTP status of a service error; 500 for one the
// service did not classify (the caller logs it).
func statusFor(err error) int {
	switch {
	case errors.Is(err, contacts.ErrCardVersion):
		return http.StatusPreconditionFailed
	case errors.Is(err, errTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errBadRequest):
		return http.StatusBadRequest
	}
	switch apperr.CodeOf(err) {
	case apperr.NotFound:
		return http.StatusNotFound
	case apperr.Forbidden, apperr.TwoFactorRequired:
		return http.StatusForbidden
	case apperr.Validation, apperr.InvalidInput:
		return http.StatusBadRequest
	case apperr.DuplicateEmail, apperr.Conflict:
		return http.StatusConflict
	case apperr.Unauthorized:
		return http.StatusUnauthorized
	case apperr.PayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusInternalServerError
}

// messageFor is what a client is told of an error: the service's
// sentence, never an unclassified error's text.
func messageFor(err error) string {
	switch {
	case errors.Is(err, errTooLarge), errors.Is(err, errBadRequest):
		return err.Error()
	case statusFor(err) == http.StatusInternalServerError:
		return "The server failed; try again later."
	}
	return apperr.MessageOf(err)
}

// davError turns a backend's service error into the library's HTTP
// error. A card the service refuses is RFC 6352's valid-address-data
// precondition.
func (b *backend) davError(err error, writing bool) error {
	status := statusFor(err)
	if status == http.StatusInternalServerError {
		b.h.d.Log.Error("carddav: backend failed", "err", err)
	}
	if writing && status == http.StatusBadRequest {
		return webdav.NewHTTPError(status, carddav.NewPreconditionError(carddav.PreconditionValidAddressData))
	}
	return webdav.NewHTTPError(status, errors.New(messageFor(err)))
}

// serveError answers an error of this package's own handlers.
func (h *Handler) serveError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, contacts.ErrSyncToken) {
		writePrecondition(w, http.StatusForbidden, nsDAV, "valid-sync-token")
		return
	}
	status := statusFor(err)
	if status == http.StatusInternalServerError {
		h.d.Log.ErrorContext(r.Context(), "carddav: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	http.Error(w, messageFor(err), status)
}

// writePrecondition answers a failed precondition of WebDAV (RFC 4918
// 16): the status and <error><name/></error>.
func writePrecondition(w http.ResponseWriter, status int, ns, name string) {
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(xml.Header + `<d:error xmlns:d="DAV:"><` + name + ` xmlns="` + ns + `"/></d:error>`))
}
