package billing_test

import (
	"os/exec"
	"syscall"
)

// killWithParent makes the kernel stop stripe-mock when the test binary
// dies without running its deferred cleanup (a test timeout panics).
func killWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
