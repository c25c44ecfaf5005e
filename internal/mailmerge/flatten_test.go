package mailmerge_test

import (
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/mailmerge"
)

func TestDataAndEventMergeBesideContactFields(t *testing.T) {
	t.Parallel()
	tpl := mailmerge.Compile("Order {{data.order.id}} for {{first_name}}",
		`<p>Hi {{ first_name | default: "there" }}, total {{data.order.total}} {{data.currency}}; plan {{event.plan}}; `+
			`missing [{{data.nope}}] [{{data.order.nope | default: "n/a"}}]; items {{data.items}}; {{data.bad key}}</p>`, nil)
	v := mailmerge.Values{
		Fields: map[string]string{"first_name": "Ada"},
		Data:   mailmerge.Flatten([]byte(`{"order":{"id":"A-1","total":12.50},"currency":"<EUR>","items":[1,2],"flag":true,"none":null}`)),
		Event:  mailmerge.Flatten([]byte(`{"plan":"pro"}`)),
	}
	subject, html := tpl.RenderPlain(v)
	if subject != "Order A-1 for Ada" {
		t.Errorf("subject = %q", subject)
	}
	want := `<p>Hi Ada, total 12.50 &lt;EUR&gt;; plan pro; missing [] [n/a]; items [1,2]; {{data.bad key}}</p>`
	if html != want {
		t.Errorf("html =\n%s\nwant\n%s", html, want)
	}
	if strings.Contains(html, "Unsubscribe") {
		t.Errorf("RenderPlain added the footer: %s", html)
	}
	// The batch form agrees with the direct one for the event values.
	_, full := tpl.Render(v, mailmerge.Footer{})
	shared := tpl.SharedHTML(mailmerge.Footer{})
	_, subs := tpl.Personalize(v)
	for k, s := range subs {
		shared = strings.ReplaceAll(shared, k, s)
	}
	if shared != full {
		t.Errorf("shared form differs:\n%s\n%s", shared, full)
	}
}

func TestFlatten(t *testing.T) {
	t.Parallel()
	got := mailmerge.Flatten([]byte(`{"a":{"b":{"c":"deep"}},"n":-1e3,"t":false,"z":null}`))
	for k, want := range map[string]string{"a.b.c": "deep", "a.b": `{"c":"deep"}`, "n": "-1e3", "t": "false", "z": ""} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	if len(mailmerge.Flatten([]byte(`[1]`))) != 0 || len(mailmerge.Flatten(nil)) != 0 {
		t.Errorf("a non-object flattened to values")
	}
}
