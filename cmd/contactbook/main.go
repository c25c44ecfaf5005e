// Command contactbook runs the contact book service: `contactbook serve`
// (the default), `contactbook migrate`, `contactbook addon set`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	// The zone database inside the binary: contacts' time zones and send
	// windows work on a host or image without /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/contactbook/contactbook/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.Main(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "contactbook:", err)
		os.Exit(1)
	}
}
