package webhooks

import (
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apperr"
)

func TestURLPasswordMasking(t *testing.T) {
	for _, tc := range []struct{ raw, shown string }{
		{"https://alice:pw@h.example.com/x?q=1", "https://alice:xxxxx@h.example.com/x?q=1"},
		{"https://alice@h.example.com/x", "https://alice@h.example.com/x"},
		{"https://h.example.com/a%20b", "https://h.example.com/a%20b"},
		{"https://a:b@h.example.com/%zz", "(an unparseable URL)"},
	} {
		if got := redactedURL(tc.raw); got != tc.shown {
			t.Errorf("redactedURL(%q) = %q, want %q", tc.raw, got, tc.shown)
		}
	}
	stored := "https://alice:p%40ss@h.example.com/x"
	for _, tc := range []struct{ next, want string }{
		{"https://alice:xxxxx@h.example.com/y", "https://alice:p%40ss@h.example.com/y"},         // shown value sent back
		{"https://alice:xxxxx@H.example.com:443/y", "https://alice:p%40ss@H.example.com:443/y"}, // the same receiver spelled otherwise
		{"https://alice:new@h.example.com/x", "https://alice:new@h.example.com/x"},              // a new password
		{"https://h.example.com/x", "https://h.example.com/x"},                                  // none
	} {
		if got, err := keepPassword(tc.next, stored); err != nil || got != tc.want {
			t.Errorf("keepPassword(%q) = %q, %v, want %q", tc.next, got, err, tc.want)
		}
	}
	// The masked password never follows the URL to another receiver or user.
	for _, next := range []string{
		"https://bob:xxxxx@h.example.com/x",        // another user
		"https://alice:xxxxx@evil.example.com/x",   // another host
		"https://alice:xxxxx@h.example.com:8443/x", // another port
		"http://alice:xxxxx@h.example.com/x",       // another scheme
		"https://alice:xxxxx@h.example.com.evil/x", // a lookalike host
	} {
		if got, err := keepPassword(next, stored); !apperr.Is(err, apperr.InvalidInput) || !strings.HasPrefix(apperr.MessageOf(err), "`url`") {
			t.Errorf("keepPassword(%q) = %q, %v, want INVALID_INPUT naming url", next, got, err)
		}
	}
	if _, err := keepPassword("https://alice:xxxxx@h.example.com/", "https://alice@h.example.com/"); !apperr.Is(err, apperr.InvalidInput) {
		t.Errorf("no stored password: %v", err)
	}
	if got := redactIn(`parse "https://a:s3cret@h/%zz": bad; a:s3cret@h`, "https://a:s3cret@h/%zz"); got != `parse "(an unparseable URL)": bad; a:xxxxx@h` {
		t.Errorf("redactIn: %q", got)
	}
}
