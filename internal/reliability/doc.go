// Package reliability holds the reliability suite: tests that build and
// run the real contactbook binary (one or two instances on one database)
// and prove its behaviour under faults and load — kill -9 during a
// webhook burst and during a campaign run, a PostgreSQL restart while
// requests flow, sustained mixed load, and a cross-tenant sweep of every
// documented route. The tests carry the build tag "reliability", so the
// normal `go test ./...` skips them; run them with `make reliability`.
// Figures go to the test log and, when RELIABILITY_REPORT names a file,
// one line per figure is appended to it.
package reliability
