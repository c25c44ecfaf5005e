package mailmerge

import "strings"

// writeFooter writes the compliance footer: company name, postal address on
// one line, and a visible unsubscribe link. href is already escaped for an
// attribute value (or is a placeholder). Inline styles only: email clients
// drop <style> blocks and external stylesheets.
func writeFooter(b *strings.Builder, f Footer, href string) {
	b.WriteString("\n" + `<div style="margin:32px 0 0;padding:16px 0 0;border-top:1px solid #dddddd;` +
		`font-family:Arial,Helvetica,sans-serif;font-size:12px;line-height:18px;color:#555555;text-align:center">`)
	if company := strings.TrimSpace(f.CompanyName); company != "" {
		b.WriteString(`<p style="margin:0">`)
		b.WriteString(escapeHTML(company))
		b.WriteString(`</p>`)
	}
	if address := f.Address(); address != "" {
		b.WriteString(`<p style="margin:0">`)
		b.WriteString(escapeHTML(address))
		b.WriteString(`</p>`)
	}
	b.WriteString(`<p style="margin:8px 0 0"><a href="`)
	b.WriteString(href)
	b.WriteString(`" style="color:#555555;text-decoration:underline">Unsubscribe</a></p></div>` + "\n")
}

// Address is the postal address on one line, empty parts left out:
// "1 Main St, Suite 4, Springfield, IL 62701, United States" or
// "Hauptstr. 1, Berlin 10115, Germany".
func (f Footer) Address() string {
	city := joinNonEmpty(", ", f.City, f.State)
	city = joinNonEmpty(" ", city, f.PostalCode)
	return joinNonEmpty(", ", f.AddressLine1, f.AddressLine2, city, f.Country)
}

func joinNonEmpty(sep string, parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(p)
	}
	return b.String()
}
