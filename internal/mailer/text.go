package mailer

import (
	"regexp"
	"strings"

	"golang.org/x/net/html"
)

// PlainText is the text/plain alternative of an HTML body: the visible
// text, one line per block element, links followed by their address in
// brackets, list items with a dash, no scripts or styles. A reader whose
// client shows no HTML still gets the message and its unsubscribe link.
func PlainText(body string) string {
	z := html.NewTokenizer(strings.NewReader(body))
	var b strings.Builder
	var skip int      // inside <script>, <style>, <head> or <title>
	var href []string // the open links' addresses
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return tidy(b.String())
		case html.TextToken:
			if skip == 0 {
				b.WriteString(collapse(string(z.Text())))
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			end := tt == html.EndTagToken
			switch tag {
			case "script", "style", "head", "title":
				if tt == html.StartTagToken {
					skip++
				} else if end && skip > 0 {
					skip--
				}
			case "br":
				b.WriteString("\n")
			case "li":
				if !end {
					b.WriteString("\n- ")
				}
			case "p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "ul", "ol", "blockquote", "section", "header", "footer", "hr":
				b.WriteString("\n\n")
			case "td", "th":
				if end {
					b.WriteString(" ")
				}
			case "a":
				if end {
					if n := len(href); n > 0 {
						if u := href[n-1]; u != "" && !strings.HasPrefix(u, "#") {
							b.WriteString(" [" + u + "]")
						}
						href = href[:n-1]
					}
					continue
				}
				u := ""
				for hasAttr {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					if string(k) == "href" {
						u = strings.TrimSpace(string(v))
					}
				}
				if tt == html.StartTagToken {
					href = append(href, u)
				}
			case "img":
				for hasAttr {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					if string(k) == "alt" && len(v) > 0 && skip == 0 {
						b.WriteString(collapse(string(v)))
					}
				}
			}
		}
	}
}

var spaces = regexp.MustCompile(`[ \t\r\n\f\v]+`)

func collapse(s string) string { return spaces.ReplaceAllString(s, " ") }

// tidy trims every line and keeps at most one empty line in a row.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	blank := true
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			if !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		out = append(out, l)
		blank = false
	}
	return strings.TrimSpace(strings.Join(out, "\n")) + "\n"
}
