package auth

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func TestPasswordsOfEveryAllowedLength(t *testing.T) {
	t.Parallel()
	for name, pw := range map[string]string{
		"ascii 8":       "abcdefgh",
		"72 accented":   strings.Repeat("é", 72),          // 144 bytes
		"72 emoji":      strings.Repeat("\U0001F600", 72), // 288 bytes
		"40 accented":   strings.Repeat("à", 40),          // 80 bytes
		"ascii 72":      strings.Repeat("x", 72),
		"trailing NULs": "password\x00\x00",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h, err := HashPassword(pw, bcrypt.MinCost)
			if err != nil {
				t.Fatalf("hash: %v", err)
			}
			if !CheckPassword(h, pw) {
				t.Fatal("the password does not verify against its own hash")
			}
			// Every byte counts, also past bcrypt's 72.
			r := []rune(pw)
			r[len(r)-1]++
			if CheckPassword(h, string(r)) {
				t.Fatal("a password differing in its last character verifies")
			}
			if CheckPassword(h, pw[:len(pw)-1]) || CheckPassword(h, "") {
				t.Fatal("a shorter password verifies")
			}
		})
	}
}

func TestPlainBcryptHashesKeepVerifying(t *testing.T) {
	t.Parallel()
	// A hash stored before the pre-hash: bcrypt of the password itself.
	old, err := bcrypt.GenerateFromPassword([]byte("correct horse battery"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if !CheckPassword(string(old), "correct horse battery") {
		t.Fatal("an old-format hash no longer verifies")
	}
	if CheckPassword(string(old), "correct horse batterY") {
		t.Fatal("a wrong password verifies against an old-format hash")
	}
	// The new format never reads as the old one, nor the other way round.
	h, _ := HashPassword("correct horse battery", bcrypt.MinCost)
	if !strings.HasPrefix(h, prehashPrefix+"$2a$04$") {
		t.Fatalf("new hash %q lacks its scheme prefix", h)
	}
	if CheckPassword(strings.TrimPrefix(h, prehashPrefix), "correct horse battery") {
		t.Fatal("a pre-hashed bcrypt hash verifies as plain bcrypt")
	}
}

func TestUnknownAccountNeverVerifies(t *testing.T) {
	t.Parallel()
	for _, pw := range []string{"", "x", strings.Repeat("é", 72)} {
		if CheckPassword("", pw) {
			t.Fatalf("an empty hash verified %q", pw)
		}
	}
	// The unknown account's hash is one of the current scheme at the
	// configured cost, so an unknown account costs a full comparison as
	// long as a real one's; a cost out of range gives bcrypt's default.
	for cost, want := range map[int]int{5: 5, 11: 11, 99: bcrypt.DefaultCost} {
		h := UnknownAccountHash(cost)
		got, err := bcrypt.Cost([]byte(strings.TrimPrefix(h, prehashPrefix)))
		if err != nil || got != want || !strings.HasPrefix(h, prehashPrefix) {
			t.Fatalf("UnknownAccountHash(%d) = %q: cost %d (want %d), %v", cost, h, got, want, err)
		}
		if h == UnknownAccountHash(cost) {
			t.Fatal("two unknown-account hashes are the same: the password is not random")
		}
	}
}
