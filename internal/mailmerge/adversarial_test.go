package mailmerge_test

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/mailmerge"
)

// adversarial returns templates of about n bytes shaped to hit every
// place where compiling or rendering could rescan what it has already
// seen: placeholder-like text, merge expressions by the thousand (valid,
// invalid, distinct), braces that never close, and body tags.
func adversarial(n int) []struct{ name, body string } {
	fill := func(unit string) string { return strings.Repeat(unit, n/len(unit)+1)[:n] }
	var distinct, markers strings.Builder
	for i := 0; distinct.Len() < n; i++ {
		fmt.Fprintf(&distinct, `{{first_name | default: "%d"}}`, i)
	}
	// Every "&cbm" followed by a different short suffix: placeholders must
	// still be found without trying the suffixes one by one.
	for i := 0; markers.Len() < n; i++ {
		markers.WriteString("&cbm" + strconv.FormatInt(int64(i), 26) + ";")
	}
	return []struct{ name, body string }{
		{"marker-then-x", "&cbm" + fill("x")},
		{"markers", markers.String()},
		{"invalid-expressions", fill("{{x}}")},
		{"valid-expressions", fill("{{first_name}}")},
		{"distinct-expressions", distinct.String()},
		{"unclosed-braces", fill("{{")},
		{"nested-open", fill("{{ ") + "}}"},
		{"closing-braces", fill("}}")},
		{"body-tags", fill("</body>")},
		{"plain", fill("<p>Hello world</p>")},
	}
}

var adversarialSizes = []int{10_000, 100_000, 1_000_000}

func BenchmarkAdversarialCompile(b *testing.B) {
	for _, size := range adversarialSizes {
		for _, c := range adversarial(size) {
			b.Run(fmt.Sprintf("%s/%dKB", c.name, size/1000), func(b *testing.B) {
				b.SetBytes(int64(len(c.body)))
				for b.Loop() {
					mailmerge.Compile(c.body[:min(len(c.body), 1000)], c.body, bookKeys)
				}
			})
		}
	}
}

// BenchmarkAdversarialRender is one recipient's direct rendering plus the
// batch form (shared body and substitutions) of the same template.
func BenchmarkAdversarialRender(b *testing.B) {
	v := ann()
	for _, size := range adversarialSizes {
		for _, c := range adversarial(size) {
			b.Run(fmt.Sprintf("%s/%dKB", c.name, size/1000), func(b *testing.B) {
				tpl := mailmerge.Compile(c.body[:min(len(c.body), 1000)], c.body, bookKeys)
				b.SetBytes(int64(len(c.body)))
				for b.Loop() {
					tpl.Render(v, footer)
					tpl.SharedHTML(footer)
					tpl.Personalize(v)
				}
			})
		}
	}
}

// TestAdversarialTemplatesAreLinear counts the bytes compiling and
// rendering allocate, which grows with the work done and does not depend
// on the machine: rescanning or re-copying what was already seen shows as
// allocations far beyond the template's size. Each shape is checked at
// 64 KB (where quadratic work already costs gigabytes) and at 1 MB, the
// largest body a template may have.
func TestAdversarialTemplatesAreLinear(t *testing.T) {
	// Not parallel: the heap counters are process-wide.
	v := ann()
	for _, size := range []int{64_000, 1_000_000} {
		for _, c := range adversarial(size) {
			subject := c.body[:min(len(c.body), 1000)]
			var tpl *mailmerge.Template
			compiled := allocated(func() { tpl = mailmerge.Compile(subject, c.body, bookKeys) })
			rendered := allocated(func() {
				tpl.Render(v, footer)
				tpl.SharedHTML(footer)
				tpl.Personalize(v)
			})
			// Generous: a linear pass allocates a small multiple of the
			// input; quadratic work allocates thousands of times more.
			limit := uint64(40*len(c.body) + 1<<20)
			if compiled > limit || rendered > limit {
				t.Fatalf("%s, %d bytes: compile allocated %d bytes, render %d; want at most %d each",
					c.name, len(c.body), compiled, rendered, limit)
			}
		}
	}
}

// allocated is how many heap bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
