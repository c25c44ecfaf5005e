package books

import "testing"

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"Top Clients":         "top-clients",
		"  Café   Crème!! ":   "cafe-creme",
		"Ünïcödé / 2026":      "unicode-2026",
		"!!!":                 "book",
		"":                    "book",
		"日本語":                 "book",
		"a--b__c":             "a-b-c",
		"ﬁne ligatures":       "fine-ligatures",
		"Already-slugged-123": "already-slugged-123",
	} {
		if got := Slugify(in); got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
	}
	long := Slugify(string(make([]byte, 0)) + "x" + string(repeat('y', 200)))
	if len(long) > 81 {
		t.Errorf("slug too long: %d", len(long))
	}
}

func repeat(r rune, n int) []rune {
	out := make([]rune, n)
	for i := range out {
		out[i] = r
	}
	return out
}
