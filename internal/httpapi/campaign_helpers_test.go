package httpapi_test

import (
	"fmt"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
)

// campEnv is apptest's team reduced to its owner, with the Campaigns
// add-on in a given state: what the campaign tests start from.
type campEnv struct {
	*apptest.Team
	t *testing.T
}

// newCampEnv starts the service with the add-on in state addon.
func newCampEnv(t *testing.T, addon string, opts ...apptest.Options) *campEnv {
	t.Helper()
	var o apptest.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Addon, o.OwnerOnly = addon, true
	return &campEnv{Team: apptest.Setup(t, o), t: t}
}

// contact creates a contact named first Tester, at Acme, through the
// public API.
func (c *campEnv) contact(first, email string) string {
	c.t.Helper()
	return c.Key.NewContactWith(map[string]any{"first_name": first, "last_name": "Tester", "company": "Acme"}, email)
}

// contacts creates n contacts named c0..c(n-1) with addresses cN@example.com.
func (c *campEnv) contacts(n int) []string {
	c.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = c.contact(fmt.Sprint("c", i), fmt.Sprintf("c%d@example.com", i))
	}
	return ids
}
