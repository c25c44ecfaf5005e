package auth_test

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

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

func TestSecretBoxSealing(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{7}, 32)
	book := uuid.New()
	box := auth.NewSecretBox(key)
	a, err := box.Seal([]byte("SG.secret"), book[:])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := box.Seal([]byte("SG.secret"), book[:])
	if bytes.Equal(a, b) || bytes.Contains(a, []byte("SG.secret")) {
		t.Fatal("sealing must be randomised and hide the value")
	}
	if got, err := box.Open(a, book[:]); err != nil || string(got) != "SG.secret" {
		t.Fatalf("open: %q %v", got, err)
	}
	other := uuid.New()
	if _, err := box.Open(a, other[:]); err == nil {
		t.Fatal("a sealed value must not open for another row")
	}
	if _, err := auth.NewSecretBox(bytes.Repeat([]byte{8}, 32)).Open(a, book[:]); err == nil {
		t.Fatal("a sealed value must not open with another settings key")
	}
	a[len(a)-1] ^= 1
	if _, err := box.Open(a, book[:]); err == nil {
		t.Fatal("a tampered value must not open")
	}
	if _, err := box.Open([]byte{1, 2}, book[:]); err == nil {
		t.Fatal("short input")
	}
	if _, err := auth.NewSecretBox([]byte("short")).Seal([]byte("x"), book[:]); err == nil {
		t.Fatal("the settings key must be 32 bytes")
	}
}

// A book's mailer key sealed before the mailer keys and the TOTP secrets
// shared one box (by campaigns' own AES-256-GCM sealing, nonce first, the
// book id as additional data) still opens.
func TestSecretBoxOpensMailerKeysSealedBefore(t *testing.T) {
	t.Parallel()
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	book := uuid.MustParse("0190a5e2-7b3c-7d4e-8f10-112233445566")
	sealed, err := hex.DecodeString("fa679b116fa4d4bfd3fbaf90d3b6d6659ac1b326bef5c326768acad5c771cca1e72fdb12e595122adc45297333cb82f74ce2b0694a1b3f2563a76d5b4a248c0234d0b5cf")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := auth.NewSecretBox(key).Open(sealed, book[:])
	if err != nil || string(plain) != "SG.mailer-key-sealed-by-campaigns.KeyBox" {
		t.Fatalf("open: %q %v", plain, err)
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
