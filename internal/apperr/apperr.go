// Package apperr is the service's one error model. Domain packages return
// *Error values carrying a Code and a message a person can act on; the HTTP
// layer maps each Code to a status and the API's error envelope in one place.
// Nothing here knows about HTTP.
package apperr

import (
	"errors"
	"fmt"
	"strings"
)

// Code classifies an error. The values are the API's error codes, as the
// OpenAPI document lists them.
type Code string

const (
	MissingBook          Code = "MISSING_BOOK"
	InvalidInput         Code = "INVALID_INPUT"
	InvalidStatus        Code = "INVALID_STATUS"
	Validation           Code = "VALIDATION_ERROR"
	Unauthorized         Code = "UNAUTHORIZED"
	Forbidden            Code = "FORBIDDEN"
	TwoFactorRequired    Code = "TWO_FACTOR_REQUIRED"
	SSORequired          Code = "SSO_REQUIRED"
	AddonRequired        Code = "ADDON_REQUIRED"
	NotFound             Code = "NOT_FOUND"
	MethodNotAllowed     Code = "METHOD_NOT_ALLOWED"
	Conflict             Code = "CONFLICT"
	IdempotencyMismatch  Code = "IDEMPOTENCY_MISMATCH"
	DuplicateEmail       Code = "DUPLICATE_EMAIL"
	PayloadTooLarge      Code = "PAYLOAD_TOO_LARGE"
	UnsupportedMediaType Code = "UNSUPPORTED_MEDIA_TYPE"
	RateLimited          Code = "RATE_LIMITED"
	Unavailable          Code = "SERVICE_UNAVAILABLE"
	Internal             Code = "SERVER_ERROR"
)

// Codes is every code, in the order the API document lists them.
var Codes = []Code{
	MissingBook, InvalidInput, InvalidStatus, Validation, Unauthorized, Forbidden, AddonRequired, TwoFactorRequired, SSORequired,
	NotFound, MethodNotAllowed, Conflict, DuplicateEmail, PayloadTooLarge, UnsupportedMediaType, IdempotencyMismatch,
	RateLimited, Unavailable, Internal,
}

// Error is a classified error. Message is safe to show to a client; Cause is
// for logs only. Details name the fields at fault, so that a form can mark
// each one and an import can point at a row's column.
type Error struct {
	Code    Code
	Message string
	Details []FieldError
	Cause   error
}

// FieldError is one field at fault: its JSON path in the request body
// (`emails[1].address`) or the name of a query parameter or form field,
// and what is wrong with it.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// New returns an error with the code and a client-facing message. By the
// service's convention a message about one field starts with that field's
// path in backticks ("`emails[0].address` must be ..."); such an error
// names the field in its Details too, so every rule that follows the
// convention is field-scoped without saying so twice.
func New(code Code, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Code: code, Message: msg, Details: leadingField(msg)}
}

// Wrap classifies cause; the cause is kept for logs, never shown.
func Wrap(cause error, code Code, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Code: code, Message: msg, Details: leadingField(msg), Cause: cause}
}

// leadingField is the detail of a message that starts with a field in
// backticks, or nil.
func leadingField(msg string) []FieldError {
	if !strings.HasPrefix(msg, "`") {
		return nil
	}
	field, _, ok := strings.Cut(msg[1:], "`")
	if !ok || field == "" || strings.ContainsAny(field, " \t\n") {
		return nil
	}
	return []FieldError{{Field: field, Message: msg}}
}

// WithDetails returns a copy of e whose Details are fields.
func (e *Error) WithDetails(fields ...FieldError) *Error {
	c := *e
	c.Details = fields
	return &c
}

// DetailsOf returns the fields at fault named by the first *Error in
// err's chain (none for server errors).
func DetailsOf(err error) []FieldError {
	var e *Error
	if errors.As(err, &e) && e.Code != Internal {
		return e.Details
	}
	return nil
}

// CodeOf returns the code of the first *Error in err's chain, or Internal
// when there is none: an unclassified error is a bug or an outage.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// Is reports whether err carries code.
func Is(err error, code Code) bool { return err != nil && CodeOf(err) == code }

// MessageOf returns the client-facing message of err.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != Internal {
		return e.Message
	}
	return "An internal error occurred. Try again later; if it persists, contact support with the request id."
}

// Shorthands for the most common cases keep call sites readable.

func NotFoundf(format string, args ...any) *Error  { return New(NotFound, format, args...) }
func Invalidf(format string, args ...any) *Error   { return New(InvalidInput, format, args...) }
func Forbiddenf(format string, args ...any) *Error { return New(Forbidden, format, args...) }
