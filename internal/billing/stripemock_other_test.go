//go:build !linux

package billing_test

import "os/exec"

// killWithParent: only Linux can tie a child's life to its parent's; other
// systems rely on TestMain's cleanup.
func killWithParent(*exec.Cmd) {}
