package accounts

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/contactbook/contactbook/internal/apperr"
)

// Login and reset throttles (docs/accounts.md, "Throttling"), counted in
// auth_throttles so that they hold across instances. A window opens with
// the first attempt of a key and lasts its full length; the counter is
// taken before the password is checked (so concurrent guesses cannot slip
// past the limit), and a successful login gives the attempt back.
const (
	loginWindow      = 15 * time.Minute
	loginPerEmail    = 5
	loginPerClientIP = 30
	resetWindow      = time.Hour
	resetPerEmail    = 3
)

func loginEmailKey(email string) string { return "login:email:" + strings.ToLower(email) }
func loginIPKey(ip string) string       { return "login:ip:" + ip }
func resetEmailKey(email string) string { return "reset:email:" + strings.ToLower(email) }

// ThrottledError is a RATE_LIMITED answer that says when to come back.
type ThrottledError struct {
	err   *apperr.Error
	After time.Duration
}

func (e *ThrottledError) Error() string { return e.err.Error() }

// RetryAfter is how long the client should wait (the Retry-After header).
func (e *ThrottledError) RetryAfter() time.Duration { return e.After }

func (e *ThrottledError) Unwrap() error { return e.err }

// throttleKey is a counter and its limit.
type throttleKey struct {
	key   string
	limit int
}

// take counts one attempt against every key in window and reports how long
// to wait when any key is over its limit (0: go ahead).
func (s *Service) take(ctx context.Context, window time.Duration, keys ...throttleKey) (time.Duration, error) {
	// A fixed order keeps two instances counting the same keys from
	// deadlocking on each other's rows.
	slices.SortFunc(keys, func(a, b throttleKey) int { return strings.Compare(a.key, b.key) })
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.key
	}
	now := s.now()
	counts, err := s.st.countAttempts(ctx, s.db, names, now, window)
	if err != nil {
		return 0, err
	}
	var wait time.Duration
	for _, k := range keys {
		c := counts[k.key]
		if c.n > k.limit {
			wait = max(wait, c.windowStart.Add(window).Sub(now))
		}
	}
	return wait, nil
}

// throttled is the RATE_LIMITED error for a wait, in whole seconds.
func throttled(wait time.Duration, msg string) error {
	secs := max(1, math.Ceil(wait.Seconds()))
	return &ThrottledError{err: apperr.New(apperr.RateLimited, "%s", msg), After: time.Duration(secs) * time.Second}
}
