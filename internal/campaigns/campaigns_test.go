package campaigns

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/optional"
)

func TestSettingsMaskKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "", "abc": "****", "abcd": "****", "SG.abcdefWXYZ": "****WXYZ", "ключ-ключ": "****ключ"} {
		if got := MaskKey(in); got != want {
			t.Errorf("MaskKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnsubscribeMaskEmail(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"ann@example.com": "a***@example.com", "a@b.c": "a***@b.c", "": "", "nope": "", "@x.y": ""} {
		if got := MaskEmail(in); got != want {
			t.Errorf("MaskEmail(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestImageSniff(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		head []byte
		want string
	}{
		"jpeg":       {[]byte{0xFF, 0xD8, 0xFF, 0xDB, 0}, "image/jpeg"},
		"png":        {[]byte("\x89PNG\r\n\x1a\n\x00"), "image/png"},
		"gif87":      {[]byte("GIF87a..."), "image/gif"},
		"gif89":      {[]byte("GIF89a..."), "image/gif"},
		"webp":       {[]byte("RIFF\x00\x00\x00\x00WEBPVP8L"), "image/webp"},
		"riff wave":  {[]byte("RIFF\x00\x00\x00\x00WAVEfmt "), ""},
		"short riff": {[]byte("RIFF"), ""},
		"html":       {[]byte("<html>"), ""},
		"svg":        {[]byte("<svg xmlns"), ""},
		"pdf":        {[]byte("%PDF-1.7"), ""},
		"empty":      {nil, ""},
	} {
		if got := SniffImage(c.head); got != c.want {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}

func TestStepNormalize(t *testing.T) {
	t.Parallel()
	campaign, tpl, other := uuid.New(), uuid.New(), uuid.New()
	days := 3
	date := "2026-05-01"
	st, err := stepFromInput(campaign, StepInput{
		StepType: StepEmail, Name: " Hi ", ScheduleType: ScheduleImmediate, DelayDays: &days, FixedDate: &date,
		EmailTemplateID: &tpl, TriggerCampaignID: &other,
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Name != "Hi" || st.DelayDays != 0 || st.FixedDate != nil || st.TriggerCampaignID != nil || !st.Active {
		t.Fatalf("immediate email step keeps unused fields: %+v", st)
	}
	st, err = stepFromInput(campaign, StepInput{
		StepType: StepTrigger, Name: "T", ScheduleType: ScheduleFixedDate, FixedDate: &date, DelayDays: &days,
		EmailTemplateID: &tpl, TriggerCampaignID: &other, SenderEmail: "x@y.z",
	})
	if err != nil || st.EmailTemplateID != nil || st.SenderEmail != "" || st.DelayDays != 0 || *st.FixedDate != date {
		t.Fatalf("trigger step: %+v %v", st, err)
	}
	// A patch is applied, then the whole step is checked again.
	if err := applyStepPatch(&st, StepPatch{TriggerCampaignID: optional.Value[uuid.UUID]{Set: true, Null: true}}); !apperr.Is(err, apperr.InvalidInput) {
		t.Fatalf("trigger without target: %v", err)
	}
	st.TriggerCampaignID = &other
	if err := applyStepPatch(&st, StepPatch{TriggerCampaignID: optional.Some(campaign)}); !apperr.Is(err, apperr.InvalidInput) {
		t.Fatalf("self trigger: %v", err)
	}
	if err := applyStepPatch(&st, StepPatch{}); !apperr.Is(err, apperr.InvalidInput) {
		t.Fatalf("empty patch: %v", err)
	}
	if start, ok := fixedDateStart("2026-05-01"); !ok || start.Hour() != 0 || start.Location().String() != "UTC" {
		t.Fatalf("fixed date start %v", start)
	}
	if !sameSet([]uuid.UUID{tpl, other}, []uuid.UUID{other, tpl}) || sameSet([]uuid.UUID{tpl, other}, []uuid.UUID{tpl, tpl}) ||
		sameSet([]uuid.UUID{tpl}, []uuid.UUID{tpl, other}) {
		t.Fatal("sameSet")
	}
}

func TestCampaignTokens(t *testing.T) {
	t.Parallel()
	secrets, hashes := newSecrets(500)
	step, participant := uuid.New(), uuid.New()
	seen := map[string]bool{}
	for i, secret := range secrets {
		sum := sha256.Sum256(secret)
		if len(secret) != 32 || !bytes.Equal(hashes[i], sum[:]) {
			t.Fatal("secret hash")
		}
		tok := makeToken(step, participant, secret)
		if len(tok) != 86 || strings.ContainsAny(tok, "+/=") || seen[tok] {
			t.Fatalf("token %q", tok)
		}
		seen[tok] = true
		s, p, h, ok := parseToken(tok)
		if !ok || s != step || p != participant || !bytes.Equal(h, hashes[i]) {
			t.Fatal("parse")
		}
	}
	for _, bad := range []string{"", "x", strings.Repeat("A", 85), strings.Repeat("A", 87), strings.Repeat("*", 86)} {
		if _, _, _, ok := parseToken(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestCampaignAddressCheck(t *testing.T) {
	t.Parallel()
	for addr, ok := range map[string]bool{
		"ann@example.com": true, "a.b+c@sub.example.co": true,
		"ann@example": false, "ann example@x.com": false, "@x.com": false, "a@b@c.com": false, "ann@x.com.": false,
		"<ann@x.com>": false, "ann@x.com,bob@y.com": false,
	} {
		if deliverableAddress(addr) != ok {
			t.Errorf("%q: want %v", addr, ok)
		}
	}
	small := map[string]string{"a": "b"}
	many := map[string]string{}
	for i := range 101 {
		many[strings.Repeat("k", i+1)] = "v"
	}
	if !fitsBatch(small) || fitsBatch(many) || fitsBatch(map[string]string{"k": strings.Repeat("v", 10000)}) {
		t.Fatal("fitsBatch")
	}
}

func TestCampaignContactRanges(t *testing.T) {
	t.Parallel()
	for _, after := range []uuid.UUID{uuid.Nil, uuid.MustParse("7fffffff-0000-4000-8000-000000000000"), uuid.MustParse("ffffffff-ffff-ffff-ffff-fffffffffff0")} {
		for _, n := range []int{1, 2, 3, 16} {
			rs := splitAfter(after, n)
			if len(rs) != n || rs[0].after != after || rs[n-1].upto != nil {
				t.Fatalf("after %s n %d: ends", after, n)
			}
			for i := 1; i < n; i++ {
				if rs[i-1].upto == nil || *rs[i-1].upto != rs[i].after || bytes.Compare(rs[i].after[:], rs[i-1].after[:]) < 0 {
					t.Fatalf("after %s n %d: range %d does not follow range %d", after, n, i, i-1)
				}
			}
		}
	}
}

func TestProcessClaimSize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		chunk   int
		solo    bool
		bodyLen int
		want    int
	}{
		{1000, false, 1 << 20, 1000}, // batched: one shared body per chunk
		{1000, true, 4 << 10, 1000},  // small bodies: the whole chunk
		{1000, true, 100 << 10, 81},  // 8 MB of 100 KB bodies
		{1000, true, 1 << 20, 8},
		{1000, true, 64 << 20, 1}, // never less than one
		{5, true, 1 << 20, 5},
		{1000, true, 0, 1000},
	} {
		if got := claimSize(c.chunk, c.solo, c.bodyLen); got != c.want {
			t.Errorf("claimSize(%d, %v, %d) = %d, want %d", c.chunk, c.solo, c.bodyLen, got, c.want)
		}
	}
}
