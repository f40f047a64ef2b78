// Command bench measures agentchat against a Temporal floor measured in the same run
// and prints a table: turn latency, throughput, start cost, group chats, export and
// import, and worker memory (package internal/bench says what each row is).
//
//	go run ./bench                      # full run on a dev server of its own (3 to 4 minutes on 2 cores)
//	go run ./bench --short              # a few iterations of every row, for CI
//	go run ./bench --profile prof --out bench.md --rows turn,throughput
//	go run ./bench --address localhost:7233 --strict
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/agentchat/agentchat/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := bench.Command(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
