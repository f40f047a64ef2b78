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
	// SIGTERM ends the command; Ctrl-C goes to the command line, whose chat takes one
	// while a reply is written to stop that turn only (cli.Streams.Interrupts).
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	code := cli.Execute(ctx, os.Args[1:], cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Interrupts: interrupts})
	stop()
	os.Exit(code)
}
