// Package validate checks domain structs against their `validate` tags with
// go-playground/validator and turns the first failure into an INVALID_INPUT
// error whose message names the JSON field and says what to fix.
package validate

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/go-playground/validator/v10"

	"github.com/contactbook/contactbook/internal/apperr"
)

var (
	hexColor = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)
	fieldKey = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
)

// instance is built once; a validator caches struct metadata and is safe
// for concurrent use, so sharing it holds no mutable domain state.
var instance = sync.OnceValue(func() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		if name == "" {
			return f.Name
		}
		return name
	})
	must(v.RegisterValidation("hexcolor6", func(fl validator.FieldLevel) bool {
		return hexColor.MatchString(fl.Field().String())
	}))
	must(v.RegisterValidation("fieldkey", func(fl validator.FieldLevel) bool {
		return fieldKey.MatchString(fl.Field().String())
	}))
	must(v.RegisterValidation("headertext", func(fl validator.FieldLevel) bool {
		return HeaderText(fl.Field().String())
	}))
	must(v.RegisterValidation("timezone", func(fl validator.FieldLevel) bool {
		return TimeZone(fl.Field().String())
	}))
	must(v.RegisterValidation("enum", func(fl validator.FieldLevel) bool {
		set, ok := fl.Field().Interface().(Closed)
		return ok && slices.Contains(set.OneOf(), fl.Field().String())
	}))
	must(v.RegisterValidation("date", func(fl validator.FieldLevel) bool {
		s := fl.Field().String()
		return s == "" || Date(s)
	}))
	return v
})

// Closed is a string type whose values form a closed set, listed once in
// the type's package. The `enum` tag accepts exactly the values OneOf
// returns and its message lists them, so no tag spells the set again (a
// `oneof=` tag would be a second copy that could drift).
type Closed interface {
	OneOf() []string
}

// HeaderText reports whether s may become (part of) an email or HTTP
// header: no line breaks (CR, LF, NEL, U+2028, U+2029) and no other control
// characters, which could end the header early or start another.
func HeaderText(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
	})
}

// Date reports whether s is a calendar date of the form YYYY-MM-DD that
// exists, from year 0001 on: year 0000 parses in Go, but no calendar has
// it and PostgreSQL's date type refuses it.
func Date(s string) bool {
	t, err := time.Parse(time.DateOnly, s)
	return err == nil && t.Year() >= 1
}

// FieldKey reports whether s may be the key of a custom field: a lower-case
// letter, then up to 63 lower-case letters, digits and underscores.
func FieldKey(s string) bool {
	return fieldKey.MatchString(s)
}

// TimeZone reports whether name is an IANA time zone name ("UTC"
// included; "" and "Local", which name no zone, are not).
func TimeZone(name string) bool {
	if name == "" || name == "Local" || strings.TrimSpace(name) != name {
		return false
	}
	_, err := time.LoadLocation(name)
	return err == nil
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// Struct validates v and returns nil or an INVALID_INPUT *apperr.Error.
func Struct(v any) error {
	return StructAs(v, apperr.InvalidInput)
}

// StructAs is Struct with another error code (the API answers
// VALIDATION_ERROR for some contact rules).
func StructAs(v any, code apperr.Code) error {
	err := instance().Struct(v)
	if err == nil {
		return nil
	}
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) || len(verrs) == 0 {
		return apperr.Wrap(err, apperr.Internal, "validation failed")
	}
	// The message is the first failure's; the details list every field
	// that failed, so a form can mark them all at once.
	details := make([]apperr.FieldError, len(verrs))
	for i, fe := range verrs {
		details[i] = apperr.FieldError{Field: fieldName(fe), Message: Message(fe)}
	}
	return apperr.New(code, "%s", Message(verrs[0])).WithDetails(details...)
}

// Message says in words what is wrong with one field.
func Message(fe validator.FieldError) string {
	field := fieldPath(fe)
	switch fe.Tag() {
	case "required", "required_without_all":
		return fmt.Sprintf("%s is required.", field)
	case "max":
		if fe.Kind() == reflect.Slice || fe.Kind() == reflect.Map {
			return fmt.Sprintf("%s may hold at most %s items.", field, fe.Param())
		}
		return fmt.Sprintf("%s must be at most %s characters long.", field, fe.Param())
	case "min":
		if fe.Kind() == reflect.Slice || fe.Kind() == reflect.Map {
			return fmt.Sprintf("%s must hold at least %s item(s).", field, fe.Param())
		}
		if fe.Kind() == reflect.String {
			return fmt.Sprintf("%s must be at least %s characters long.", field, fe.Param())
		}
		return fmt.Sprintf("%s must be at least %s.", field, fe.Param())
	case "gte":
		return fmt.Sprintf("%s must be %s or more.", field, fe.Param())
	case "lte":
		return fmt.Sprintf("%s must be %s or less.", field, fe.Param())
	case "oneof":
		return fmt.Sprintf("%s must be one of: %s.", field, strings.ReplaceAll(fe.Param(), " ", ", "))
	case "enum":
		var set []string
		if c, ok := fe.Value().(Closed); ok {
			set = c.OneOf()
		}
		return fmt.Sprintf("%s must be one of: %s.", field, strings.Join(set, ", "))
	case "email":
		return fmt.Sprintf("%s must be a valid email address.", field)
	case "http_url", "url":
		return fmt.Sprintf("%s must be a valid http(s) URL.", field)
	case "hexcolor6":
		return fmt.Sprintf("%s must be a colour of the form #RRGGBB.", field)
	case "date":
		return fmt.Sprintf("%s must be a date of the form YYYY-MM-DD that exists, from year 0001 on.", field)
	case "fieldkey":
		return fmt.Sprintf("%s must start with a lower-case letter and hold only a-z, 0-9 and _ (at most 64 characters).", field)
	case "timezone":
		return fmt.Sprintf("%s must be an IANA time zone name such as Europe/Berlin or America/New_York.", field)
	case "uuid":
		return fmt.Sprintf("%s must be a UUID.", field)
	case "headertext":
		return fmt.Sprintf("%s may not hold line breaks or other control characters: it is sent as a header.", field)
	case "excludesall", "printascii":
		return fmt.Sprintf("%s holds characters that are not allowed.", field)
	}
	return fmt.Sprintf("%s is not valid (%s).", field, fe.Tag())
}

// fieldName turns "Input.emails[0].address" into "emails[0].address".
func fieldName(fe validator.FieldError) string {
	ns := fe.Namespace()
	if i := strings.IndexByte(ns, '.'); i >= 0 {
		ns = ns[i+1:]
	}
	return ns
}

// fieldPath is the field's name as messages quote it.
func fieldPath(fe validator.FieldError) string { return "`" + fieldName(fe) + "`" }
