package webhooks

import "testing"

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
		{"https://alice:xxxxx@h.example.com/y", "https://alice:p%40ss@h.example.com/y"}, // shown value sent back
		{"https://bob:xxxxx@h.example.com/x", "https://bob:xxxxx@h.example.com/x"},      // another user: as given
		{"https://alice:new@h.example.com/x", "https://alice:new@h.example.com/x"},      // a new password
		{"https://h.example.com/x", "https://h.example.com/x"},                          // none
	} {
		if got := keepPassword(tc.next, stored); got != tc.want {
			t.Errorf("keepPassword(%q) = %q, want %q", tc.next, got, tc.want)
		}
	}
	if got := keepPassword("https://alice:xxxxx@h.example.com/", "https://alice@h.example.com/"); got != "https://alice:xxxxx@h.example.com/" {
		t.Errorf("no stored password: %q", got)
	}
	if got := redactIn(`parse "https://a:s3cret@h/%zz": bad; a:s3cret@h`, "https://a:s3cret@h/%zz"); got != `parse "(an unparseable URL)": bad; a:xxxxx@h` {
		t.Errorf("redactIn: %q", got)
	}
}
