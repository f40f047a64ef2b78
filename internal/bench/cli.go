package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/agentchat/agentchat/internal/devserver"
	"github.com/agentchat/agentchat/internal/logx"
)

// cliOptions are the command's flags.
type cliOptions struct {
	address, namespace string
	short, strict      bool
	profileDir, out    string
	rows               string
	timeout            time.Duration
	longMessages       int
	dynamicConfig      keyValues
}

// keyValues is a repeatable key=value flag.
type keyValues map[string]string

func (kv keyValues) String() string { return fmt.Sprint(map[string]string(kv)) }

func (kv keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	kv[k] = v
	return nil
}

// Command is `go run ./bench`: it parses args (without the program name), starts a dev
// server unless --address names one, runs the benchmark and prints the table on stdout
// (progress on stderr). It returns the exit status: 0, or 1 when the run failed or,
// with --strict in a full run, when a target was missed; 2 for bad flags.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o := cliOptions{dynamicConfig: keyValues{}}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.address, "address", "", "Temporal frontend to use (host:port); default: start a dev server on a free port and stop it at the end")
	fs.StringVar(&o.namespace, "namespace", "default", "Temporal namespace")
	fs.BoolVar(&o.short, "short", false, "a few iterations of every row: checks that each runs (for CI); no row passes or fails")
	fs.StringVar(&o.profileDir, "profile", "", "write CPU and heap profiles of this process during the turn, throughput, memory, long, export and import rows to `DIR`")
	fs.StringVar(&o.rows, "rows", "", "comma-separated subset of: "+strings.Join(Groups, ","))
	fs.StringVar(&o.out, "out", "", "also write the table as Markdown to `FILE`")
	fs.BoolVar(&o.strict, "strict", false, "exit 1 when a target is missed (full runs only)")
	fs.DurationVar(&o.timeout, "timeout", 20*time.Minute, "give up after this long")
	fs.IntVar(&o.longMessages, "long-messages", 0, "messages of the long row's chat (default 1000000; 2000 with --short); the row compares it with a chat of a tenth of them")
	fs.Var(o.dynamicConfig, "dynamic-config", "`key=value` server setting for the dev server this run starts, over devserver.DefaultDynamicConfig (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if err := o.run(ctx, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// memProfileRate is the memory row's heap sampling rate with --profile, in bytes: fine
// enough to tell what one idle chat of about 50 KB holds (the default samples every
// 512 KB). The other rows keep the default: sampling every 4 KB costs a stack walk
// per few allocations, which made allocating code look several times dearer in
// their CPU profiles.
const memProfileRate = 4 << 10

// errMissed is returned by run with --strict when a target was missed.
var errMissed = errors.New("bench: targets missed")

func (o cliOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	var rows []string
	if o.rows != "" {
		rows = strings.Split(o.rows, ",")
	}
	if _, err := selectGroups(rows); err != nil {
		return err
	}
	envOpts := EnvOptions{Address: o.address, Namespace: o.namespace,
		Logger: slog.New(logx.MinLevel(slog.NewTextHandler(stderr, nil), slog.LevelError))}
	server := "Temporal at " + o.address
	if len(o.dynamicConfig) > 0 && o.address != "" {
		return errors.New("bench: --dynamic-config applies only to the dev server this run starts")
	}
	if o.address == "" {
		s, err := devserver.Start(ctx, devserver.Options{Address: "127.0.0.1:0", UIPort: devserver.Headless,
			DynamicConfig: o.dynamicConfig, Progress: stderr})
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		defer func() { _ = s.Stop() }()
		envOpts.Address, envOpts.ServerPID = s.Address, s.PID
		envOpts.KeepWorkflows = true // the server goes with them
		server = fmt.Sprintf("dev server started by this run (Temporal CLI %s, in memory, devserver.DefaultDynamicConfig", devserver.CLIVersion)
		if len(o.dynamicConfig) > 0 {
			server += fmt.Sprintf(" with %v", map[string]string(o.dynamicConfig))
		}
		server += ")"
	}
	env, err := NewEnv(ctx, envOpts)
	if err != nil {
		return err
	}
	defer env.Close()
	table, err := Run(ctx, env, Config{Short: o.short, LongMessages: o.longMessages, Rows: rows, ProfileDir: o.profileDir, Progress: stderr, Server: server})
	if table != nil {
		if werr := o.write(table, stdout); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return err
	}
	if missed := table.Missed(); o.strict && len(missed) > 0 {
		names := make([]string, len(missed))
		for i, r := range missed {
			names[i] = r.Name
		}
		return fmt.Errorf("%w: %s", errMissed, strings.Join(names, "; "))
	}
	return nil
}

// write prints the table and writes the Markdown file if asked for.
func (o cliOptions) write(t *Table, stdout io.Writer) error {
	if err := t.WriteText(stdout); err != nil {
		return err
	}
	if o.out == "" {
		return nil
	}
	f, err := os.Create(o.out)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := t.WriteMarkdown(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("bench: %s: %w", o.out, err)
	}
	return f.Close()
}
