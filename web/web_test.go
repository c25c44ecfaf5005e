package web_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/web"
)

const confirmURL = "https://app.example.com/api/unsubscribe/confirm"

func unsubscribeData() web.UnsubscribeData {
	return web.UnsubscribeData{
		Token:       "tok_abc",
		ContactName: "Ann Lee",
		Email:       "a***@example.com",
		Campaigns: []web.Campaign{
			{ID: "11111111-1111-1111-1111-111111111111", Name: "Spring newsletter"},
			{ID: "22222222-2222-2222-2222-222222222222", Name: "Onboarding"},
		},
		CurrentCampaignID: "22222222-2222-2222-2222-222222222222",
		ConfirmURL:        confirmURL,
	}
}

func render(t *testing.T, fn func(*strings.Builder) error) string {
	t.Helper()
	var b strings.Builder
	if err := fn(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	formRe = regexp.MustCompile(`(?s)<form method="post" action="([^"]*)">(.*?)</form>`)
	hidden = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)
	tagRe  = regexp.MustCompile(`<[a-zA-Z][^>]*>`)
	urlRe  = regexp.MustCompile(`(?i)\s(src|href|action|srcset|poster|data|formaction)\s*=\s*["']?([^"' >]*)`)
)

type form struct {
	action string
	fields map[string]string
	button string
}

func forms(page string) []form {
	var out []form
	for _, m := range formRe.FindAllStringSubmatch(page, -1) {
		f := form{action: m[1], fields: map[string]string{}}
		for _, h := range hidden.FindAllStringSubmatch(m[2], -1) {
			f.fields[h[1]] = h[2]
		}
		if i := strings.Index(m[2], "<button"); i >= 0 {
			f.button = strings.TrimSpace(m[2][i:])
		}
		out = append(out, f)
	}
	return out
}

// assertSelfContained: a valid document in English for phones, and nothing
// loaded from elsewhere; the only URL is the confirm form's action.
func assertSelfContained(t *testing.T, page string, wantActions int) {
	t.Helper()
	for _, want := range []string{"<!doctype html>", `<html lang="en">`, `<meta charset="utf-8">`,
		`<meta name="viewport" content="width=device-width, initial-scale=1">`, "<title>", "<h1>", "<style>", ":focus-visible"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	lower := strings.ToLower(page)
	for _, banned := range []string{"<script", "<link", "<img", "<iframe", "<object", "<embed", "@import", "url(", "@font-face", " style=\"", "onclick", "onload"} {
		if strings.Contains(lower, banned) {
			t.Errorf("page contains %q", banned)
		}
	}
	actions := 0
	// Escaped text holds no '<', so every match of tagRe is a real tag.
	for _, m := range urlRe.FindAllStringSubmatch(strings.Join(tagRe.FindAllString(page, -1), " "), -1) {
		if strings.ToLower(m[1]) != "action" || m[2] != confirmURL {
			t.Errorf("external reference %s=%q", m[1], m[2])
			continue
		}
		actions++
	}
	if actions != wantActions {
		t.Errorf("%d form actions, want %d", actions, wantActions)
	}
	if got := strings.Count(lower, "http"); got != wantActions {
		t.Errorf(`"http" occurs %d times, want only the %d form actions`, got, wantActions)
	}
}

func TestUnsubscribePage(t *testing.T) {
	t.Parallel()
	page := render(t, func(b *strings.Builder) error { return web.RenderUnsubscribe(b, unsubscribeData()) })

	for _, want := range []string{
		"<title>Unsubscribe</title>",
		"<h1>Unsubscribe</h1>",
		"<p>Hi Ann Lee,</p>",
		`<strong class="address">a***@example.com</strong>`,
		"<strong>Nothing has changed yet.</strong>",
		"Campaigns you receive",
		"Unsubscribe from all emails",
		"The email you came from is part of this campaign.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	fs := forms(page)
	if len(fs) != 3 {
		t.Fatalf("want 3 forms (2 campaigns + all), got %d", len(fs))
	}
	// The campaign the email came from comes first and is the primary action.
	wantForms := []struct {
		fields map[string]string
		button string
	}{
		{map[string]string{"token": "tok_abc", "scope": "campaign", "campaign_id": "22222222-2222-2222-2222-222222222222"},
			`<button type="submit" class="primary">Leave this campaign<span class="visually-hidden">: Onboarding</span></button>`},
		{map[string]string{"token": "tok_abc", "scope": "campaign", "campaign_id": "11111111-1111-1111-1111-111111111111"},
			`<button type="submit">Leave this campaign<span class="visually-hidden">: Spring newsletter</span></button>`},
		{map[string]string{"token": "tok_abc", "scope": "all"},
			`<button type="submit" class="danger">Unsubscribe from all emails</button>`},
	}
	for i, w := range wantForms {
		f := fs[i]
		if f.action != confirmURL {
			t.Errorf("form %d posts to %q", i, f.action)
		}
		if len(f.fields) != len(w.fields) {
			t.Errorf("form %d fields %v, want %v", i, f.fields, w.fields)
		}
		for k, v := range w.fields {
			if f.fields[k] != v {
				t.Errorf("form %d field %s = %q, want %q", i, k, f.fields[k], v)
			}
		}
		if f.button != w.button {
			t.Errorf("form %d button %q, want %q", i, f.button, w.button)
		}
	}
	if strings.Index(page, "Onboarding") > strings.Index(page, "Spring newsletter") {
		t.Error("the current campaign is not listed first")
	}
	assertSelfContained(t, page, 3)
}

func TestUnsubscribePageWithoutCampaigns(t *testing.T) {
	t.Parallel()
	d := unsubscribeData()
	d.Campaigns, d.CurrentCampaignID, d.ContactName, d.Email = nil, "", "", ""
	page := render(t, func(b *strings.Builder) error { return web.RenderUnsubscribe(b, d) })
	for _, want := range []string{"You are not in any active campaign right now.", "Choose which emails you should stop receiving."} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "Hi ,") || strings.Contains(page, "<ul") {
		t.Error("empty greeting or list rendered")
	}
	fs := forms(page)
	if len(fs) != 1 || fs[0].fields["scope"] != "all" || fs[0].fields["token"] != "tok_abc" {
		t.Errorf("forms %+v", fs)
	}
	assertSelfContained(t, page, 1)
}

func TestUnsubscribePageEscapes(t *testing.T) {
	t.Parallel()
	d := unsubscribeData()
	d.ContactName = `<script>alert("x")</script>`
	d.Email = `"><img src=x>@example.com`
	d.Token = `t"><script>`
	d.Campaigns = []web.Campaign{{ID: `c"1`, Name: `Tom & Jerry's <b>deals</b>`}}
	d.CurrentCampaignID = `c"1`
	page := render(t, func(b *strings.Builder) error { return web.RenderUnsubscribe(b, d) })
	for _, want := range []string{
		`<p>Hi &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;,</p>`,
		`&#34;&gt;&lt;img src=x&gt;@example.com`,
		`<span class="campaign-name">Tom &amp; Jerry&#39;s &lt;b&gt;deals&lt;/b&gt;</span>`,
		`value="t&#34;&gt;&lt;script&gt;"`,
		`value="c&#34;1"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks escaped %q", want)
		}
	}
	assertSelfContained(t, page, 2)

	// A ConfirmURL that is not http(s) never becomes a script URL.
	d.ConfirmURL = "javascript:alert(1)"
	page = render(t, func(b *strings.Builder) error { return web.RenderUnsubscribe(b, d) })
	if strings.Contains(page, "javascript:") {
		t.Error("unsafe action URL rendered")
	}
}

func TestConfirmedPage(t *testing.T) {
	t.Parallel()
	page := render(t, func(b *strings.Builder) error {
		return web.RenderConfirmed(b, web.ConfirmData{Scope: "campaign", CampaignName: "Spring <newsletter>"})
	})
	for _, want := range []string{"<h1>You left Spring &lt;newsletter&gt;</h1>", "Other campaigns you are in are not affected."} {
		if !strings.Contains(page, want) {
			t.Errorf("campaign page lacks %q", want)
		}
	}
	assertSelfContained(t, page, 0)

	page = render(t, func(b *strings.Builder) error { return web.RenderConfirmed(b, web.ConfirmData{Scope: "campaign"}) })
	if !strings.Contains(page, "<h1>You left the campaign</h1>") {
		t.Error("campaign page without a name")
	}

	page = render(t, func(b *strings.Builder) error { return web.RenderConfirmed(b, web.ConfirmData{Scope: "all"}) })
	for _, want := range []string{"<title>Unsubscribed from all emails</title>", "<h1>You will receive no more campaign emails</h1>"} {
		if !strings.Contains(page, want) {
			t.Errorf("all page lacks %q", want)
		}
	}
	assertSelfContained(t, page, 0)

	var b strings.Builder
	if err := web.RenderConfirmed(&b, web.ConfirmData{Scope: "everything"}); err == nil || b.Len() != 0 {
		t.Errorf("unknown scope: err %v, wrote %d bytes", err, b.Len())
	}
}

func TestInvalidLinkPage(t *testing.T) {
	t.Parallel()
	page := render(t, func(b *strings.Builder) error { return web.RenderInvalidLink(b) })
	for _, want := range []string{"<title>Invalid unsubscribe link</title>", "<h1>This unsubscribe link is not valid</h1>", "copy the whole link"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	assertSelfContained(t, page, 0)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("gone") }

func TestWriteError(t *testing.T) {
	t.Parallel()
	if err := web.RenderInvalidLink(failingWriter{}); err == nil {
		t.Error("a failing writer's error was lost")
	}
}

func BenchmarkRenderUnsubscribe(b *testing.B) {
	d := unsubscribeData()
	for b.Loop() {
		var sb strings.Builder
		if err := web.RenderUnsubscribe(&sb, d); err != nil {
			b.Fatal(err)
		}
	}
}

func TestRenderBillingReturn(t *testing.T) {
	for success, want := range map[bool]string{true: "payment received", false: "Checkout cancelled"} {
		var b strings.Builder
		if err := web.RenderBillingReturn(&b, success); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), want) || strings.Contains(b.String(), "src=") {
			t.Errorf("success=%v page: %s", success, b.String())
		}
	}
}
