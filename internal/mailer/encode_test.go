package mailer

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sendgrid/sendgrid-go/helpers/mail"
)

// encodeMail is a faster equivalent of building a mail.SGMailV3 and calling
// mail.GetRequestBody: both must decode to the same document.
func TestEncodeMailMatchesHelpers(t *testing.T) {
	t.Parallel()
	for _, b := range []Batch{
		{APIKey: "k", FromEmail: "a@x.example", HTML: "<p>\"hi\"\n\t\\ é \u2028 \x01</p>",
			Personalizations: []Personalization{{To: "b@y.example", Subject: "S"}}},
		{APIKey: "k", FromEmail: "a@x.example", FromName: "A \"Co\"", ReplyTo: "r@x.example", HTML: "&cbm0;",
			Personalizations: []Personalization{
				{To: "b@y.example", ToName: "B", Subject: "Ünïcode \xff", Substitutions: map[string]string{"&cbm0;": "<v>", "&cbm1;": ""},
					Headers:    map[string]string{"List-Unsubscribe": "<https://x/?a=1&b=2>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
					CustomArgs: map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6", "g": "7", "h": "8", "i": "9"}},
				{To: "c@y.example", Subject: "T", Substitutions: map[string]string{}},
			}},
		{APIKey: "k", FromEmail: "a@x.example", HTML: "<p>link</p>", Text: "link:\n\"https://x/?token=a&b\"",
			Personalizations: []Personalization{{To: "b@y.example", Subject: "S"}}},
		{APIKey: "k", FromEmail: "a@x.example", HTML: "<p>x</p>", Tracking: &Tracking{Opens: true},
			Personalizations: []Personalization{{To: "b@y.example", Subject: "S"}}},
		{APIKey: "k", FromEmail: "a@x.example", HTML: "<p>x</p>", Tracking: &Tracking{Clicks: true},
			Personalizations: []Personalization{{To: "b@y.example", Subject: "S"}}},
	} {
		m := mail.NewV3Mail()
		m.SetFrom(mail.NewEmail(b.FromName, b.FromEmail))
		if b.ReplyTo != "" {
			m.SetReplyTo(mail.NewEmail("", b.ReplyTo))
		}
		if b.Text != "" {
			m.AddContent(mail.NewContent("text/plain", b.Text))
		}
		m.AddContent(mail.NewContent("text/html", b.HTML))
		if t := b.Tracking; t != nil {
			m.SetTrackingSettings(mail.NewTrackingSettings().
				SetClickTracking(mail.NewClickTrackingSetting().SetEnable(t.Clicks).SetEnableText(t.Clicks)).
				SetOpenTracking(mail.NewOpenTrackingSetting().SetEnable(t.Opens)))
		}
		for _, p := range b.Personalizations {
			m.AddPersonalizations(&mail.Personalization{
				To: []*mail.Email{mail.NewEmail(p.ToName, p.To)}, Subject: p.Subject,
				Substitutions: p.Substitutions, Headers: p.Headers, CustomArgs: p.CustomArgs,
			})
		}
		var want, got any
		if err := json.Unmarshal(mail.GetRequestBody(m), &want); err != nil {
			t.Fatal(err)
		}
		body := encodeMail(b)
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("invalid JSON %s: %v", body, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got  %v\nwant %v", got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\/\b\f\n\r\t", "\x00\x1f\x7f", "é\u2028\u2029😀", "\xff\xfe", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := appendString(nil, s)
		var got string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("appendString(%q) = %s: %v", s, enc, err)
		}
		want, _ := json.Marshal(s)
		var wantS string
		_ = json.Unmarshal(want, &wantS)
		if got != wantS || !utf8.ValidString(got) {
			t.Errorf("round trip of %q: got %q want %q", s, got, wantS)
		}
	})
}

func BenchmarkEncodeMail1000(b *testing.B) {
	bt := Batch{APIKey: "k", FromEmail: "a@x.example", HTML: "<p>&cbm0;</p>"}
	for i := range 1000 {
		bt.Personalizations = append(bt.Personalizations, Personalization{
			To: fmt.Sprintf("r%d@example.com", i), ToName: "R", Subject: "Hello",
			Substitutions: map[string]string{"&cbm0;": "Ann", "&cbm1;": "https://u.example/?t=abcdefghijklmnop&amp;c=1"},
			Headers:       map[string]string{"List-Unsubscribe": "<https://u.example/?t=abcdefghijklmnop&c=1>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
			CustomArgs:    map[string]string{"participant_id": "0b6d4f0e-8f0e-4c59-9b43-3d0f2a7f5f11", "step_id": "1f0e8f0e"},
		})
	}
	b.ReportAllocs()
	for b.Loop() {
		encodeMail(bt)
	}
}

func FuzzHeaderText(f *testing.F) {
	for _, s := range []string{"", "Ann Lee", "Ann\r\nBcc: x@y", " \t a \n\n b \x00", "é – ’ € \u0085 \u2028\u2029 \u00a0", "\xc2", "\xe2\x80", "\xc2\x41"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := headerText(s)
		if strings.ContainsFunc(got, foldedInHeader) {
			t.Fatalf("headerText(%q) = %q still holds a line break or control character", s, got)
		}
		if !utf8.ValidString(s) {
			return // invalid bytes may become U+FFFD, as the JSON encoding makes them anyway
		}
		if !strings.ContainsFunc(s, foldedInHeader) && got != s {
			t.Fatalf("headerText(%q) = %q changed a clean value", s, got)
		}
		if needsFolding(s) != strings.ContainsFunc(s, foldedInHeader) {
			t.Fatalf("needsFolding(%q) = %v", s, needsFolding(s))
		}
	})
}
