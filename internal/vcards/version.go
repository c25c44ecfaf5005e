package vcards

import (
	"strings"

	"github.com/emersion/go-vcard"
)

// The vCard versions a card is answered in.
const (
	Version3 = "3.0"
	Version4 = "4.0"
)

// binaryProps carry inline data (a data: URI in vCard 4.0, ENCODING=b in
// 3.0), with the media type family of their data.
var binaryProps = map[string]string{vcard.FieldPhoto: "image", vcard.FieldLogo: "image", vcard.FieldSound: "audio", vcard.FieldKey: "application"}

// ForVersion returns the card in vCard version (Version3 or Version4):
// preference (PREF=1 or TYPE=pref), a company card's kind (KIND:org or
// Apple's X-ABShowAs:COMPANY), inline photos and the N that 3.0 requires.
// The card given is not changed.
func ForVersion(card vcard.Card, version string) vcard.Card {
	out := make(vcard.Card, len(card))
	for k, fs := range card {
		cp := make([]*vcard.Field, len(fs))
		for i, f := range fs {
			params := make(vcard.Params, len(f.Params))
			for pk, pv := range f.Params {
				params[pk] = append([]string(nil), pv...)
			}
			cp[i] = &vcard.Field{Value: f.Value, Params: params, Group: f.Group}
		}
		out[k] = cp
	}
	out.SetValue(vcard.FieldVersion, version)
	for k, fs := range out {
		if k == vcard.FieldVersion {
			continue
		}
		for _, f := range fs {
			pref := f.Params.Get(vcard.ParamPreferred) != "" || f.Params.HasType("pref")
			delete(f.Params, vcard.ParamPreferred)
			removeType(f, "pref")
			if pref && version == Version3 {
				f.Params.Add(vcard.ParamType, "pref")
			} else if pref {
				f.Params.Set(vcard.ParamPreferred, "1")
			}
		}
	}
	for k, kind := range binaryProps {
		for _, f := range out[k] {
			inline(f, kind, version)
		}
	}
	if version == Version3 {
		if strings.EqualFold(out.Value(vcard.FieldKind), "org") && out.Get("X-ABSHOWAS") == nil {
			out.SetValue("X-ABSHOWAS", "COMPANY")
		}
		delete(out, vcard.FieldKind)
		if out.Get(vcard.FieldName) == nil {
			out.SetValue(vcard.FieldName, ";;;;")
		}
	} else if out.Get(vcard.FieldKind) == nil && strings.EqualFold(out.Value("X-ABSHOWAS"), "COMPANY") {
		out.SetValue(vcard.FieldKind, "org")
	}
	return out
}

func removeType(f *vcard.Field, t string) {
	types := f.Params[vcard.ParamType]
	var keep []string
	for _, v := range types {
		var parts []string
		for _, p := range strings.Split(v, ",") {
			if !strings.EqualFold(strings.TrimSpace(p), t) {
				parts = append(parts, p)
			}
		}
		if len(parts) > 0 {
			keep = append(keep, strings.Join(parts, ","))
		}
	}
	if len(keep) == 0 {
		delete(f.Params, vcard.ParamType)
	} else {
		f.Params[vcard.ParamType] = keep
	}
}

// inline writes inline data the way version does; kind is the media type
// family a 3.0 TYPE (JPEG, PNG, ...) names a subtype of.
func inline(f *vcard.Field, kind, version string) {
	enc := strings.ToLower(f.Params.Get("ENCODING"))
	switch {
	case version == Version3 && strings.HasPrefix(f.Value, "data:"):
		meta, data, ok := strings.Cut(strings.TrimPrefix(f.Value, "data:"), ",")
		if !ok || !strings.HasSuffix(meta, ";base64") {
			return
		}
		media := strings.TrimSuffix(meta, ";base64")
		f.Value = data
		f.Params.Set("ENCODING", "b")
		if _, sub, ok := strings.Cut(media, "/"); ok && sub != "" {
			f.Params.Set(vcard.ParamType, strings.ToUpper(sub))
		}
		delete(f.Params, vcard.ParamValue)
	case version == Version4 && (enc == "b" || enc == "base64"):
		sub := strings.ToLower(f.Params.Get(vcard.ParamType))
		if sub == "" {
			sub = "jpeg"
		}
		f.Value = "data:" + kind + "/" + sub + ";base64," + f.Value
		delete(f.Params, "ENCODING")
		delete(f.Params, vcard.ParamType)
		delete(f.Params, vcard.ParamValue)
	}
}
