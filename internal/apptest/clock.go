package apptest

import "github.com/contactbook/contactbook/internal/testclock"

// Clock is a settable clock for rules that depend on time.
type Clock = testclock.Clock
