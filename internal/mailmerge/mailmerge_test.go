package mailmerge_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/contactbook/contactbook/internal/mailmerge"
)

var footer = mailmerge.Footer{
	CompanyName:  "Acme & Sons",
	AddressLine1: "1 Main St",
	AddressLine2: "Suite 4",
	City:         "Springfield",
	State:        "IL",
	PostalCode:   "62701",
	Country:      "United States",
}

// bookKeys are the custom fields the book of these tests defines.
var bookKeys = []string{"plan", "tier_2", "note", "none", "nothing", "x", "a", "b", "c"}

func ann() mailmerge.Values {
	return mailmerge.Values{
		Fields: map[string]string{
			"first_name": "Ann", "last_name": "Lee", "full_name": "Ann Lee",
			"company": "Globex", "job_title": "CTO", "email": "ann@example.com",
			"phone": "+1 555 0100", "website": "https://globex.example", "birthday": "1990-04-01",
			"book_name": "Customers",
		},
		Custom:         map[string]string{"plan": "Gold", "tier_2": "B"},
		UnsubscribeURL: "https://app.example/api/unsubscribe?token=abc&campaign_id=c1",
	}
}

// substitute applies substitutions the way the provider does: every
// occurrence of every placeholder, in one pass.
func substitute(shared string, subs map[string]string) string {
	pairs := make([]string, 0, 2*len(subs))
	for k, v := range subs {
		pairs = append(pairs, k, v)
	}
	return strings.NewReplacer(pairs...).Replace(shared)
}

// bodyOf cuts the footer off a rendered body.
func bodyOf(t *testing.T, html string) string {
	t.Helper()
	i := strings.Index(html, "\n<div style=")
	if i < 0 {
		t.Fatalf("no footer in %q", html)
	}
	return html[:i]
}

func TestRenderEveryField(t *testing.T) {
	t.Parallel()
	names := []string{"first_name", "last_name", "full_name", "company", "job_title", "email", "phone", "website", "birthday", "book_name", "unsubscribe_url", "custom.plan", "custom.tier_2"}
	var src strings.Builder
	for _, n := range names {
		fmt.Fprintf(&src, "[%s={{%s}}]", n, n)
	}
	tpl := mailmerge.Compile(src.String(), src.String(), bookKeys)
	subject, html := tpl.Render(ann(), footer)
	want := "[first_name=Ann][last_name=Lee][full_name=Ann Lee][company=Globex][job_title=CTO]" +
		"[email=ann@example.com][phone=+1 555 0100][website=https://globex.example][birthday=1990-04-01]" +
		"[book_name=Customers][unsubscribe_url=https://app.example/api/unsubscribe?token=abc&campaign_id=c1]" +
		"[custom.plan=Gold][custom.tier_2=B]"
	if subject != want {
		t.Errorf("subject\n got %q\nwant %q", subject, want)
	}
	wantBody := strings.Replace(want, "abc&campaign_id", "abc&amp;campaign_id", 1)
	if got := bodyOf(t, html); got != wantBody {
		t.Errorf("body\n got %q\nwant %q", got, wantBody)
	}
}

func TestSyntax(t *testing.T) {
	t.Parallel()
	v := ann()
	v.Fields["last_name"] = ""
	v.Fields["company"] = "   "
	cases := []struct{ name, src, want, body string }{
		{"no spaces", "Hi {{first_name}}!", "Hi Ann!", ""},
		{"spaces", "Hi {{ first_name }}!", "Hi Ann!", ""},
		{"tabs and newlines", "Hi {{\tfirst_name\n}}!", "Hi Ann!", ""},
		{"fallback unused when value set", `Hi {{first_name | default: "there"}}!`, "Hi Ann!", ""},
		{"fallback on empty value", `Hi {{last_name | default: "there"}}!`, "Hi there!", ""},
		{"fallback on blank value", `At {{ company|default:"your company" }}.`, "At your company.", ""},
		{"fallback on missing field", `{{job_title | default: "x"}}{{custom.none | default: "y"}}`, "CTOy", ""},
		{"single quotes", `Hi {{last_name | default: 'friend'}}!`, "Hi friend!", ""},
		{"quote of the other kind inside", `{{last_name | default: "it's you"}}`, "it's you", "it&#39;s you"},
		{"empty value without fallback", "[{{last_name}}]", "[]", ""},
		{"custom field", "Plan {{ custom.plan }}", "Plan Gold", ""},
		{"custom field without a value", "[{{custom.nothing}}]", "[]", ""},
		{"undefined custom field", "[{{custom.nickname}}]", "[{{custom.nickname}}]", ""},
		{"undefined custom field with fallback", `[{{ custom.nickname | default: "x" }}]`, `[{{ custom.nickname | default: "x" }}]`, ""},
		{"repeated field", "{{first_name}} {{ first_name }}", "Ann Ann", ""},
		{"triple braces", "{{{first_name}}}", "{Ann}", ""},
		{"nested open", "{{ x {{first_name}}", "{{ x Ann", ""},
		{"unknown field", "Hi {{nickname}}", "Hi {{nickname}}", ""},
		{"unknown field with spaces", "Hi {{ nickname | default: \"x\" }}", "Hi {{ nickname | default: \"x\" }}", ""},
		{"wrong case", "Hi {{First_Name}}", "Hi {{First_Name}}", ""},
		{"bad custom key", "{{custom.Plan}} {{custom.}} {{custom.1a}}", "{{custom.Plan}} {{custom.}} {{custom.1a}}", ""},
		{"unknown filter", "{{first_name | upper}}", "{{first_name | upper}}", ""},
		{"unquoted fallback", "{{last_name | default: there}}", "{{last_name | default: there}}", ""},
		{"unterminated fallback", `{{last_name | default: "there}}`, `{{last_name | default: "there}}`, ""},
		{"two strings", `{{last_name | default: "a" "b"}}`, `{{last_name | default: "a" "b"}}`, ""},
		{"empty pipe", "{{first_name |}}", "{{first_name |}}", ""},
		{"empty braces", "{{}} {{ }}", "{{}} {{ }}", ""},
		{"unclosed", "Hi {{first_name", "Hi {{first_name", ""},
		{"single braces", "{first_name} }}{{", "{first_name} }}{{", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl := mailmerge.Compile(c.src, c.src, bookKeys)
			subject, html := tpl.Render(v, footer)
			if subject != c.want {
				t.Errorf("subject %q, want %q", subject, c.want)
			}
			wantBody := c.want
			if c.body != "" {
				wantBody = c.body // the fallback is text, escaped like a value
			}
			if got := bodyOf(t, html); got != wantBody {
				t.Errorf("body %q, want %q", got, wantBody)
			}
			assertInvariant(t, tpl, v, footer)
		})
	}
}

func TestEscaping(t *testing.T) {
	t.Parallel()
	v := ann()
	v.Fields["first_name"] = `<script>alert("x")</script>`
	v.Fields["company"] = `Tom & Jerry's`
	v.Custom["note"] = `<b>bold</b>`
	tpl := mailmerge.Compile(
		`Hello {{first_name}} from {{company}}`,
		`<p title="{{company}}">Hello {{first_name}}, {{custom.note}} {{last_name | default: "<you>"}}</p>`, bookKeys)
	v.Fields["last_name"] = ""
	subject, html := tpl.Render(v, footer)
	if want := `Hello <script>alert("x")</script> from Tom & Jerry's`; subject != want {
		t.Errorf("subject is not escaped: got %q, want %q", subject, want)
	}
	want := `<p title="Tom &amp; Jerry&#39;s">Hello &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;, &lt;b&gt;bold&lt;/b&gt; &lt;you&gt;</p>`
	if got := bodyOf(t, html); got != want {
		t.Errorf("body\n got %q\nwant %q", got, want)
	}
	if strings.Contains(html, "<script>") {
		t.Error("a value injected a script element")
	}
	assertInvariant(t, tpl, v, footer)
}

func TestSubjectIsOneLine(t *testing.T) {
	t.Parallel()
	tpl := mailmerge.Compile("Hi\r\n{{first_name}}!\n", "x", bookKeys)
	v := mailmerge.Values{Fields: map[string]string{"first_name": "Ann\nBcc: x@y.z"}}
	if got, _ := tpl.Render(v, footer); got != "Hi Ann Bcc: x@y.z!" {
		t.Errorf("subject %q", got)
	}
	assertInvariant(t, tpl, v, footer)
}

func TestFullNameDerived(t *testing.T) {
	t.Parallel()
	tpl := mailmerge.Compile("{{full_name}}", "", bookKeys)
	v := mailmerge.Values{Fields: map[string]string{"first_name": "Ann", "last_name": "Lee"}}
	if got, _ := tpl.Render(v, footer); got != "Ann Lee" {
		t.Errorf("full_name = %q, want derived %q", got, "Ann Lee")
	}
	v.Fields["last_name"] = ""
	if got, _ := tpl.Render(v, footer); got != "Ann" {
		t.Errorf("full_name = %q, want %q", got, "Ann")
	}
	v.Fields["full_name"] = "Dr. Ann"
	if got, _ := tpl.Render(v, footer); got != "Dr. Ann" {
		t.Errorf("full_name = %q, want the given %q", got, "Dr. Ann")
	}
}

func TestUnsubscribeURL(t *testing.T) {
	t.Parallel()
	tpl := mailmerge.Compile("s", `<a href="{{ unsubscribe_url }}">Leave</a>`, bookKeys)
	_, html := tpl.Render(ann(), footer)
	link := `href="https://app.example/api/unsubscribe?token=abc&amp;campaign_id=c1"`
	if got := strings.Count(html, link); got != 2 {
		t.Errorf("want the escaped URL in the body link and the footer link, found %d in %q", got, html)
	}
	// One placeholder serves both the body and the footer.
	shared := tpl.SharedHTML(footer)
	_, subs := tpl.Personalize(ann())
	if len(subs) != 1 {
		t.Fatalf("want 1 substitution, got %v", subs)
	}
	for k, v := range subs {
		if strings.Count(shared, k) != 2 {
			t.Errorf("placeholder %q should occur twice in %q", k, shared)
		}
		if v != "https://app.example/api/unsubscribe?token=abc&amp;campaign_id=c1" {
			t.Errorf("substitution = %q", v)
		}
	}
}

func TestFooter(t *testing.T) {
	t.Parallel()
	v := ann()
	_, html := mailmerge.Compile("s", "<p>Body</p>", bookKeys).Render(v, footer)
	for _, want := range []string{
		`<p>Body</p>` + "\n<div ",
		`>Acme &amp; Sons</p>`,
		`>1 Main St, Suite 4, Springfield, IL 62701, United States</p>`,
		`<a href="https://app.example/api/unsubscribe?token=abc&amp;campaign_id=c1" style="color:#555555;text-decoration:underline">Unsubscribe</a>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("footer lacks %q:\n%s", want, html)
		}
	}

	// Before </body>, whatever its case; empty address parts are left out.
	f := mailmerge.Footer{CompanyName: "<Acme>", City: "Berlin", PostalCode: "10115", Country: "Germany"}
	_, html = mailmerge.Compile("s", "<html><BODY><p>Hi {{first_name}}</p></BODY>\n</html>", bookKeys).Render(v, f)
	if !strings.HasPrefix(html, "<html><BODY><p>Hi Ann</p>\n<div ") || !strings.HasSuffix(html, "</div>\n</BODY>\n</html>") {
		t.Errorf("footer not placed before </body>:\n%s", html)
	}
	for _, want := range []string{`>&lt;Acme&gt;</p>`, `>Berlin 10115, Germany</p>`} {
		if !strings.Contains(html, want) {
			t.Errorf("footer lacks %q:\n%s", want, html)
		}
	}

	// Without company and address there is still the unsubscribe link.
	_, html = mailmerge.Compile("s", "x", bookKeys).Render(v, mailmerge.Footer{})
	if strings.Contains(html, "<p style=\"margin:0\">") || !strings.Contains(html, ">Unsubscribe</a>") {
		t.Errorf("empty footer: %s", html)
	}
}

func TestFooterAddress(t *testing.T) {
	t.Parallel()
	cases := []struct {
		f    mailmerge.Footer
		want string
	}{
		{footer, "1 Main St, Suite 4, Springfield, IL 62701, United States"},
		{mailmerge.Footer{AddressLine1: " 5 Rue X ", PostalCode: "75001", City: "Paris", Country: "France"}, "5 Rue X, Paris 75001, France"},
		{mailmerge.Footer{State: "CA"}, "CA"},
		{mailmerge.Footer{PostalCode: "12345"}, "12345"},
		{mailmerge.Footer{}, ""},
	}
	for _, c := range cases {
		if got := c.f.Address(); got != c.want {
			t.Errorf("Address(%+v) = %q, want %q", c.f, got, c.want)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	t.Parallel()
	tpl := mailmerge.Compile("{{company}}",
		`{{first_name}} {{ first_name }} {{first_name | default: "there"}} {{first_name|default:'there'}} {{custom.plan}}`, bookKeys)
	shared := tpl.SharedHTML(footer)
	_, subs := tpl.Personalize(ann())
	// first_name, first_name|there, custom.plan, unsubscribe_url; company is
	// only in the subject, which is rendered per recipient.
	if len(subs) != 4 || tpl.Placeholders() != 4 {
		t.Fatalf("want 4 substitutions, got %d (Placeholders %d): %v", len(subs), tpl.Placeholders(), subs)
	}
	var keys []string
	for k := range subs {
		keys = append(keys, k)
		if strings.Contains(subs[k], "&cbm") {
			t.Errorf("value %q contains a placeholder prefix", subs[k])
		}
	}
	sort.Strings(keys)
	counts := map[string]int{}
	for _, k := range keys {
		counts[subs[k]] += strings.Count(shared, k)
	}
	want := map[string]int{"Ann": 4, "Gold": 1, "https://app.example/api/unsubscribe?token=abc&amp;campaign_id=c1": 1}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("placeholder occurrences by value = %v, want %v (shared %q)", counts, want, shared)
	}
	if strings.Contains(shared, "{{") || strings.Contains(shared, "Ann") {
		t.Errorf("shared HTML still has merge fields or data: %q", shared)
	}
}

// A template whose own text contains the placeholder shape gets other
// placeholders, so no literal text is ever substituted.
func TestPlaceholderCollision(t *testing.T) {
	t.Parallel()
	body := `&cbm0; &cbm1; &cbmx0; {{first_name}} &cbm`
	tpl := mailmerge.Compile("&cbmxx1;", body, bookKeys)
	v := ann()
	v.Fields["first_name"] = "&cbm0; &cbmxxx0;"
	assertInvariant(t, tpl, v, footer)
	_, html := tpl.Render(v, footer)
	if !strings.HasPrefix(html, `&cbm0; &cbm1; &cbmx0; &amp;cbm0; &amp;cbmxxx0; &cbm`) {
		t.Errorf("got %q", html)
	}
}

// Many "&cbm" with different letters after them: the placeholders found
// are still in none of them.
func TestPlaceholderCollisionMany(t *testing.T) {
	t.Parallel()
	var body strings.Builder
	for _, a := range "xyzabcdefghijklmnopqrstuvw" {
		for _, b := range "xyzabcdefghijklmnopqrstuvw" {
			fmt.Fprintf(&body, "&cbm%c%c0; ", a, b)
		}
		fmt.Fprintf(&body, "&cbm%c0; ", a)
	}
	body.WriteString("{{first_name}} {{custom.plan}}")
	tpl := mailmerge.Compile("s", body.String(), bookKeys)
	assertInvariant(t, tpl, ann(), footer)
	_, subs := tpl.Personalize(ann())
	for k := range subs {
		if strings.Contains(body.String(), k) {
			t.Errorf("placeholder %q occurs in the template's text", k)
		}
	}
}

func TestCustomKeys(t *testing.T) {
	t.Parallel()
	tpl := mailmerge.Compile("{{custom.a}} {{ custom.b | default: 'x' }}", "{{custom.b}} {{custom.c}} {{custom.a}} {{custom.Bad}} {{custom.zz}}", bookKeys)
	if got := fmt.Sprint(tpl.CustomKeys()); got != "[a b b c]" && got != "[a b c]" {
		t.Errorf("CustomKeys = %s", got)
	}
}

func TestPlaceholderURL(t *testing.T) {
	t.Parallel()
	if got := mailmerge.PlaceholderURL("plan"); got != "https://example.com/placeholder/custom.plan" {
		t.Errorf("PlaceholderURL = %q", got)
	}
}

func TestInvariant(t *testing.T) {
	t.Parallel()
	bodies := []string{
		"",
		"plain",
		"<html><body><h1>Hi {{first_name | default: \"there\"}}</h1><p>{{company}} / {{custom.plan}}</p><a href=\"{{unsubscribe_url}}\">x</a></body></html>",
		"{{first_name}}{{first_name}}{{last_name}}</body>{{email}}</body>tail {{phone}}",
		"{{unknown}} {{ custom.plan|default:'none' }} &cbm0; &amp;",
	}
	values := []mailmerge.Values{
		ann(),
		{},
		{Fields: map[string]string{"first_name": `"'<>&`, "last_name": "&cbm0;"}, Custom: map[string]string{"plan": "&cbm1;"}, UnsubscribeURL: `javascript:"x"`},
	}
	footers := []mailmerge.Footer{footer, {}, {CompanyName: "&cbm0; <b>"}}
	for _, b := range bodies {
		tpl := mailmerge.Compile("{{first_name}}", b, bookKeys)
		for _, v := range values {
			for _, f := range footers {
				assertInvariant(t, tpl, v, f)
			}
		}
	}
}

func FuzzInvariant(f *testing.F) {
	f.Add("Hi {{first_name}}", "<p>{{ first_name | default: \"there\" }} {{custom.x}}</p></body>", "Ann", "<b>", "Acme")
	f.Add("", "&cbm0;{{last_name}}", "&cbm0;", "&cbm1;", "&cbm2;")
	f.Add("{{ email }}", "{{{email}}}{{unsubscribe_url}}", "a&b", "'", "\"")
	f.Fuzz(func(t *testing.T, subject, body, first, custom, company string) {
		tpl := mailmerge.Compile(subject, body, bookKeys)
		v := mailmerge.Values{
			Fields:         map[string]string{"first_name": first, "email": first + "@x"},
			Custom:         map[string]string{"x": custom},
			UnsubscribeURL: custom,
		}
		assertInvariant(t, tpl, v, mailmerge.Footer{CompanyName: company})
	})
}

func assertInvariant(t *testing.T, tpl *mailmerge.Template, v mailmerge.Values, f mailmerge.Footer) {
	t.Helper()
	wantSubject, wantHTML := tpl.Render(v, f)
	subject, subs := tpl.Personalize(v)
	if subject != wantSubject {
		t.Errorf("Personalize subject %q != Render subject %q", subject, wantSubject)
	}
	if got := substitute(tpl.SharedHTML(f), subs); got != wantHTML {
		t.Errorf("substituted shared HTML differs from Render\n got %q\nwant %q", got, wantHTML)
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	tpl := mailmerge.Compile("Hi {{first_name}}", "<p>{{first_name}} {{custom.plan}}</p>", bookKeys)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				v := mailmerge.Values{Fields: map[string]string{"first_name": fmt.Sprint(g, i)}}
				subject, subs := tpl.Personalize(v)
				if subject != "Hi "+fmt.Sprint(g, i) {
					t.Errorf("subject %q", subject)
				}
				_, html := tpl.Render(v, footer)
				if substitute(tpl.SharedHTML(footer), subs) != html {
					t.Error("invariant broken under concurrency")
				}
			}
		})
	}
	wg.Wait()
}

// benchBody is a typical marketing email: a few KB of HTML, five merge
// expressions.
var benchBody = `<html><body><table width="100%"><tr><td>
<h1>Hi {{first_name | default: "there"}},</h1>
<p>` + strings.Repeat("Our spring update brings faster sync, better search and a new mobile app. ", 30) + `</p>
<p>As {{job_title}} at {{company}} you can try it today on the {{custom.plan}} plan.</p>
<p><a href="https://example.com/spring">Read more</a> · <a href="{{unsubscribe_url}}">Unsubscribe</a></p>
</td></tr></table></body></html>`

func BenchmarkPersonalize(b *testing.B) {
	tpl := mailmerge.Compile("{{first_name | default: \"Hello\"}}, news for {{company}}", benchBody, bookKeys)
	v := ann()
	b.ReportAllocs()
	for b.Loop() {
		tpl.Personalize(v)
	}
}

func BenchmarkRender(b *testing.B) {
	tpl := mailmerge.Compile("{{first_name | default: \"Hello\"}}, news for {{company}}", benchBody, bookKeys)
	v := ann()
	b.ReportAllocs()
	for b.Loop() {
		tpl.Render(v, footer)
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		mailmerge.Compile("{{first_name | default: \"Hello\"}}, news for {{company}}", benchBody, bookKeys)
	}
}
