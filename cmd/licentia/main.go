// Command licentia runs the Licentia licensing service and its operator
// commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/licentia/licentia/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
