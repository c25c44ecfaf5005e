package httpapi_test

import (
	"testing"
)

func TestCampaignSmoke(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.configure()
	ids := c.contacts(3)
	tpl := c.template("Welcome", "Hi {{first_name}}", "<p>Hello {{first_name | default: \"there\"}}</p>")
	cid := c.campaign("Onboarding", "active")
	c.emailStep(cid, tpl, nil)
	if n := c.enroll(cid, ids...); n != 3 {
		t.Fatalf("enrolled %d", n)
	}
	res := c.process(cid)
	t.Logf("%+v", res)
	for _, r := range c.mail.Recipients() {
		t.Logf("%s %s %v %v", r.Email, r.Subject, r.Headers, r.Substitutions)
		t.Log(r.HTML())
	}
}
