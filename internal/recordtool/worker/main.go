// Command worker is the agentchat worker with one more tool, "record"
// (package recordtool), for crash and deploy tests: it takes the worker command's
// flags that testenv.StartWorkerProcess gives, plus --ledger and --hold, and with
// --strategy-functions registers the selection function "last-candidate" (the last
// participant speaks) and the termination function "never-done" (false), which the
// worker command lacks.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/internal/recordtool"
	"github.com/agentchat/agentchat/internal/serve"
	"github.com/agentchat/agentchat/wire"
)

func main() {
	var (
		opts   serve.Options
		dial   agentchat.DialOptions
		ledger string
		hold   time.Duration
		funcs  bool
	)
	flag.StringVar(&opts.AgentsPath, "agents", "", "agent config file")
	flag.StringVar(&opts.TaskQueue, "task-queue", "", "task queue to poll")
	flag.StringVar(&dial.Address, "address", "", "Temporal frontend host:port")
	flag.StringVar(&dial.Namespace, "namespace", "", "Temporal namespace")
	flag.StringVar(&opts.StoreDir, "store", "", "folder for exported documents")
	flag.StringVar(&ledger, "ledger", "", "the record tool's ledger file (required)")
	flag.DurationVar(&hold, "hold", 0, "how long the record tool waits after its side effect")
	flag.StringVar(&opts.Identity, "identity", "", "worker identity (default Temporal's)")
	flag.DurationVar(&opts.UnknownAgentWait, "unknown-agent-wait", 0, "as the worker command's flag")
	flag.BoolVar(&funcs, "strategy-functions", false, `register the selection function "last-candidate" and the termination function "never-done"`)
	flag.Parse()
	if funcs {
		opts.Selectors = map[string]activities.SelectFunc{"last-candidate": lastCandidate}
		opts.Judges = map[string]activities.JudgeFunc{"never-done": neverDone}
	}
	if err := run(opts, dial, ledger, hold); err != nil {
		fmt.Fprintln(os.Stderr, "record worker:", err)
		os.Exit(1)
	}
}

func run(opts serve.Options, dial agentchat.DialOptions, ledger string, hold time.Duration) error {
	if ledger == "" {
		return fmt.Errorf("--ledger is required")
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	opts.Logger, dial.Logger = logger, logger
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := agentchat.Dial(ctx, dial)
	if err != nil {
		return err
	}
	defer c.Close()
	opts.Namespace = c.Namespace()
	opts.Tools = map[string]activities.ToolFunc{"record": recordtool.Tool(ledger, hold)}
	w, err := serve.Start(c.Temporal(), opts)
	if err != nil {
		return err
	}
	logger.Info("record worker started", "taskQueue", w.TaskQueue, "ledger", ledger)
	<-ctx.Done()
	w.Stop()
	return nil
}

// lastCandidate is a selection function: the last participant speaks.
func lastCandidate(_ context.Context, cs []wire.Candidate, _ []chat.Message) (string, error) {
	if len(cs) == 0 {
		return "", nil
	}
	return cs[len(cs)-1].ID, nil
}

// neverDone is a termination function that never ends the chat.
func neverDone(context.Context, []chat.Message) (bool, error) { return false, nil }
