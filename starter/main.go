// Command starter is agentchat's command line: run the demo, start chats, send turns,
// talk interactively, read state and history, and manage the local dev server.
// Run `go run ./starter --help` for the commands; the code is in internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentchat/agentchat/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, os.Args[1:], cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
