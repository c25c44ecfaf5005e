package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/contactbook/contactbook/internal/apperr"
)

// statusOf is the one place that turns an error code into an HTTP status.
func statusOf(code apperr.Code) int {
	switch code {
	case apperr.MissingBook, apperr.InvalidInput, apperr.InvalidStatus:
		return http.StatusBadRequest
	case apperr.Validation, apperr.IdempotencyMismatch:
		return http.StatusUnprocessableEntity
	case apperr.Unauthorized:
		return http.StatusUnauthorized
	case apperr.Forbidden, apperr.AddonRequired, apperr.TwoFactorRequired, apperr.SSORequired:
		return http.StatusForbidden
	case apperr.NotFound:
		return http.StatusNotFound
	case apperr.MethodNotAllowed:
		return http.StatusMethodNotAllowed
	case apperr.Conflict, apperr.DuplicateEmail:
		return http.StatusConflict
	case apperr.PayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case apperr.UnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case apperr.RateLimited:
		return http.StatusTooManyRequests
	case apperr.Unavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// statusClientClosedRequest is recorded for a request whose client left
// before its answer was ready.
const statusClientClosedRequest = 499

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    apperr.Code         `json:"code"`
	Message string              `json:"message"`
	Details []apperr.FieldError `json:"details,omitempty"`
}

// writeError answers err as the API's error envelope. Server errors are logged
// with their cause and the request id; the client sees neither the cause
// nor any SQL.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		// The client went away (a closed tab, a search superseded by the
		// next keystroke): nothing failed, and nobody reads the answer.
		// 499 is the access log's name for it, as in nginx.
		w.WriteHeader(statusClientClosedRequest)
		return
	}
	code := apperr.CodeOf(err)
	status := statusOf(code)
	if status >= 500 {
		log.ErrorContext(r.Context(), "request failed", "request_id", RequestID(r.Context()),
			"method", r.Method, "path", loggedPath(r), "status", status, "err", err)
	}
	var wait interface{ RetryAfter() time.Duration }
	if errors.As(err, &wait) {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.RetryAfter().Round(time.Second)/time.Second)))
	}
	writeJSON(w, status, errorBody{Error: errorDetail{Code: code, Message: apperr.MessageOf(err), Details: apperr.DetailsOf(err)}})
}
