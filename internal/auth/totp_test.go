package auth_test

import (
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/auth"
)

func TestMatchTOTPAcceptsOneStepOfDrift(t *testing.T) {
	t.Parallel()
	key, err := auth.NewTOTPKey("contactbook", "ann@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key.URL, "otpauth://totp/contactbook:ann@example.com?") || !strings.HasPrefix(key.QRCode, "data:image/png;base64,") || len(key.Secret) != 32 {
		t.Fatalf("key: %+v", key)
	}
	now := time.Date(2026, 3, 2, 9, 0, 15, 0, time.UTC)
	step := now.Unix() / 30
	for off, want := range map[time.Duration]int64{-30 * time.Second: step - 1, 0: step, 30 * time.Second: step + 1, -60 * time.Second: 0, 60 * time.Second: 0} {
		code, err := auth.TOTPCode(key.Secret, now.Add(off))
		if err != nil {
			t.Fatal(err)
		}
		if got := auth.MatchTOTP(key.Secret, code, now); got != want {
			t.Errorf("code of now%+v: step %d, want %d", off, got, want)
		}
	}
	for _, bad := range []string{"", "12345", "1234567", "abcdef"} {
		if auth.MatchTOTP(key.Secret, bad, now) != 0 {
			t.Errorf("%q matched", bad)
		}
	}
}

func TestRecoveryCodes(t *testing.T) {
	t.Parallel()
	codes, hashes, err := auth.NewRecoveryCodes(10)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, c := range codes {
		if len(c) != 19 || seen[c] {
			t.Fatalf("code %q", c)
		}
		seen[c] = true
		typed := strings.ToUpper(strings.ReplaceAll(c, "-", " "))
		if string(auth.HashRecoveryCode(typed)) != string(hashes[i]) {
			t.Fatalf("%q typed as %q hashes differently", c, typed)
		}
	}
}

func TestSecretBoxBindsToItsRow(t *testing.T) {
	t.Parallel()
	box := auth.NewSecretBox(make([]byte, 32))
	sealed, err := box.Seal([]byte("JBSWY3DPEHPK3PXP"), []byte("user-1"))
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := box.Open(sealed, []byte("user-1")); err != nil || string(plain) != "JBSWY3DPEHPK3PXP" {
		t.Fatalf("open: %q %v", plain, err)
	}
	if _, err := box.Open(sealed, []byte("user-2")); err == nil {
		t.Fatal("a secret sealed for one user opened for another")
	}
}
