package vcards

import (
	"strings"
	"testing"

	"github.com/emersion/go-vcard"

	"github.com/contactbook/contactbook/internal/contacts"
)

func decodeCard(t *testing.T, text string) vcard.Card {
	t.Helper()
	c, err := vcard.NewDecoder(strings.NewReader(text)).Decode()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMergeKeepsWhatIsUnchanged(t *testing.T) {
	stored := decodeCard(t, "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Dr. Grace Hopper\r\nN:Hopper;Grace;Brewster;Dr.;\r\n"+
		"item1.EMAIL;TYPE=INTERNET,HOME:grace@example.com\r\nitem1.X-ABLabel:Navy\r\nEMAIL;TYPE=WORK:old@example.com\r\n"+
		"TEL;TYPE=CELL;X-CUSTOM=1:+1 555 0100\r\nNICKNAME:Amazing Grace\r\nORG:Navy;\r\nEND:VCARD\r\n")
	c := Decode(stored, func(string) bool { return true }).Contact
	// Changed elsewhere: the work email, and the company.
	c.Emails[1].Address = "new@example.com"
	c.Company = "US Navy"
	out := Merge(stored, c, nil)

	if n := out.Name(); n.AdditionalName != "Brewster" || n.HonorificPrefix != "Dr." {
		t.Errorf("N lost its other parts: %+v", n)
	}
	if fn := out.Value(vcard.FieldFormattedName); fn != "Grace Hopper" {
		// The company changed, so FN is the mapping's again.
		t.Errorf("FN = %q", fn)
	}
	emails := out[vcard.FieldEmail]
	if len(emails) != 2 || emails[0].Group != "item1" || !emails[0].Params.HasType("INTERNET") || emails[1].Value != "new@example.com" {
		t.Errorf("emails: %+v %+v", emails[0], emails[1])
	}
	if out.Value("X-ABLABEL") != "Navy" || out.Value(vcard.FieldNickname) != "Amazing Grace" {
		t.Errorf("unmapped properties lost: %v", out)
	}
	if tel := out.Get(vcard.FieldTelephone); tel.Params.Get("X-CUSTOM") != "1" {
		t.Errorf("the unchanged phone lost its parameter: %+v", tel)
	}
	if org := out.Value(vcard.FieldOrganization); org != "US Navy" {
		t.Errorf("ORG = %q", org)
	}
	// Merge reads the card back into the same contact.
	back := Decode(ForVersion(out, Version3), func(string) bool { return true }).Contact
	if back.Company != c.Company || back.FirstName != "Grace" || len(back.Emails) != 2 || back.Emails[1].Address != "new@example.com" {
		t.Errorf("decoded again: %+v", back)
	}
}

func TestMergeWithoutStoredCardIsEncode(t *testing.T) {
	c := contacts.Contact{FirstName: "Ada", Emails: []contacts.Email{{Address: "ada@example.com", Label: "work", Primary: true}}}
	out := Merge(nil, c, nil)
	if out.Value(vcard.FieldFormattedName) != "Ada" || out.Get(vcard.FieldEmail).Params.Get(vcard.ParamPreferred) != "1" {
		t.Errorf("merge of no card: %v", out)
	}
	v3 := ForVersion(out, Version3)
	if v3.Get(vcard.FieldEmail).Params.Get(vcard.ParamPreferred) != "" || !v3.Get(vcard.FieldEmail).Params.HasType("pref") {
		t.Errorf("3.0 preference: %+v", v3.Get(vcard.FieldEmail))
	}
	// The card given is not changed.
	if out.Get(vcard.FieldEmail).Params.Get(vcard.ParamPreferred) != "1" || out.Value(vcard.FieldVersion) != Version4 {
		t.Errorf("ForVersion changed its input: %v", out)
	}
}
