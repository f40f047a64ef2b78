// Package cli is the starter command line: every subcommand of `go run ./starter`
// (demo, start, send, chat, state, history, list, approve, export, import, participants,
// migrate, server, model, mcp). starter/main.go only calls Execute, so everything here can be
// tested.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/idspill"
	"github.com/agentchat/agentchat/internal/serve"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/telemetry"
	"github.com/agentchat/agentchat/wire"
)

// Streams are where the commands read and write.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
	// Interrupts, when set, delivers the user's Ctrl-C, one value each (starter/main.go
	// wires os.Interrupt to it). One while chat waits for a turn's reply stops that
	// turn only (CancelTurn) and the session goes on; any other ends the command, as a
	// cancelled context does. Nil: only the context Execute is given ends a command.
	Interrupts <-chan os.Signal
}

// globals are the flags every command takes.
type globals struct {
	dial    agentchat.DialOptions
	timeout time.Duration
	cancel  context.CancelFunc // of the --timeout context
	// timed is the --timeout context, nil when the command has none.
	timed context.Context
	// tel is the OpenTelemetry set up from the environment by the first connect; nil
	// before it.
	tel *telemetry.Telemetry
	// intr takes Streams.Interrupts.
	intr *interrupter
	// verbose: the Temporal SDK's warnings are printed too, not only its errors.
	verbose bool
	// errOut is Streams.Err, where the SDK's log goes.
	errOut io.Writer
	// stores are the --message-store URLs; opened are the stores connect opened.
	stores []string
	opened map[string]msgstore.Store
}

// Execute runs the command line with args and returns the exit code: 0, or 1 after
// printing a one-line error to Err (with the starter command that goes on, for an
// error that asks for one: errorHint), followed, for an unknown command, by the
// commands it may have meant, one a line.
func Execute(ctx context.Context, args []string, s Streams) int {
	ctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(context.Canceled) }
	defer cancel()
	root, g := newRoot(s)
	g.intr = &interrupter{command: func() { cancelCause(errInterrupted) }}
	if s.Interrupts != nil {
		go g.intr.watch(ctx, s.Interrupts)
	}
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	// The server cuts a long poll off a little before the command's deadline (gRPC
	// passes it on): an error within a moment of the deadline is the deadline's too.
	timedOut := false
	if g.timed != nil && err != nil {
		dl, _ := g.timed.Deadline()
		timedOut = errors.Is(g.timed.Err(), context.DeadlineExceeded) || time.Until(dl) < time.Second
	}
	if g.cancel != nil {
		g.cancel()
	}
	for _, st := range g.opened {
		_ = st.Close()
	}
	if g.tel != nil { // flush the command's spans
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = g.tel.Shutdown(sctx)
		cancel()
	}
	if err != nil {
		msg, suggestions := splitSuggestions(err.Error())
		msg += flagSuggestion(root, args, msg)
		if timedOut {
			msg = strings.Replace(msg, sdkCutOff, context.DeadlineExceeded.Error(), 1)
			msg += fmt.Sprintf(" (the command ran for its --timeout of %s; give a longer one, or --timeout 0 for none)", g.timeout)
		}
		fmt.Fprintln(s.Err, "starter:", oneLine(msg)+errorHint(err, g.dial.TaskQueue))
		if len(suggestions) > 0 {
			fmt.Fprintln(s.Err, "Did you mean this?")
			for _, sg := range suggestions {
				fmt.Fprintln(s.Err, "  "+sg)
			}
		}
		return 1
	}
	return 0
}

// sdkCutOff is the Temporal SDK's words for an update the server cut off at the caller's
// deadline.
const sdkCutOff = "Timeout or cancellation waiting for update: stream terminated by RST_STREAM with error code: CANCEL"

// flagSuggestion is ` (did you mean "--chat"?)` for cobra's "unknown flag: --caht" when a
// flag of the command (or a global one) is close to it; "" otherwise. Cobra suggests
// commands, not flags.
func flagSuggestion(root *cobra.Command, args []string, msg string) string {
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return ""
	}
	cmd, _, err := root.Find(args)
	if err != nil {
		cmd = root
	}
	var names []string
	add := func(f *pflag.Flag) { names = append(names, f.Name) }
	cmd.Flags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	hint := wire.DidYouMean([]string{name}, names)
	return strings.Replace(hint, `"`, `"--`, 1)
}

// didYouMean is how cobra introduces the commands it suggests for an unknown one,
// each then on a line of its own after a tab.
const didYouMean = "\n\nDid you mean this?\n"

// splitSuggestions splits an error message of cobra's into the message and the
// commands it suggests (none when it suggests none).
func splitSuggestions(msg string) (string, []string) {
	head, tail, found := strings.Cut(msg, didYouMean)
	if !found {
		return msg, nil
	}
	var out []string
	for l := range strings.SplitSeq(tail, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return head, out
}

// nonEmptyFlags are the flags that name something (a chat, a message, a call, a place):
// given explicitly empty, as "--chat $CHAT" with CHAT unset gives them, they are
// refused, never taken as left out (which would make a temporary thread, or a new id).
var nonEmptyFlags = []string{"chat", "id", "call", "agent", "to-chat", "to-namespace", "to-cluster", "to-address",
	"task-queue", "namespace", "address", "file", "in", "out", "initial-agent", "agents"}

// refuseEmpty returns an error naming the first of nonEmptyFlags that cmd was given
// with an empty value.
func refuseEmpty(cmd *cobra.Command) error {
	// A list flag's items lose the spaces around them ("helper, writer"), and an empty
	// item is refused below with the flag.
	var empty string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		sv, ok := f.Value.(pflag.SliceValue)
		if !ok {
			return
		}
		items := sv.GetSlice()
		for i := range items {
			if items[i] = strings.TrimSpace(items[i]); items[i] == "" && empty == "" {
				empty = f.Name
			}
		}
		_ = sv.Replace(items)
	})
	if empty != "" {
		return fmt.Errorf("--%s has an empty item: give comma-separated values without empty ones", empty)
	}
	for _, name := range nonEmptyFlags {
		f := cmd.Flags().Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		if v := f.Value.String(); v == "" || v == "[]" {
			usage, required := strings.CutSuffix(f.Usage, " (required)")
			if required {
				return fmt.Errorf("--%s is empty, and it is required: %s", name, usage)
			}
			return fmt.Errorf("--%s is empty: give it a value, or leave the flag out (%s)", name, usage)
		}
	}
	return nil
}

// newRoot builds the command tree and the globals its flags fill.
func newRoot(s Streams) (*cobra.Command, *globals) {
	g := &globals{errOut: s.Err}
	root := &cobra.Command{
		Use:   "starter",
		Short: "Start, drive and inspect agentchat chats on Temporal",
		Long: `starter drives agentchat chats: durable multi-agent conversations, one Temporal
workflow per chat. A worker must be running for chats to make progress
(go run ./worker --offline), except for "demo", which runs its own.

Temporal is reached through its standard environment configuration
(TEMPORAL_ADDRESS, default localhost:7233; TEMPORAL_NAMESPACE, default "default";
TEMPORAL_API_KEY, TLS settings, profiles), or --address and --namespace.

OpenTelemetry is off unless its standard environment turns it on
(OTEL_TRACES_EXPORTER=otlp|console, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, …):
a command's Temporal calls are then traced, and the trace continues on the worker.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := refuseEmpty(cmd); err != nil {
			return err
		}
		if g.timeout > 0 && cmd.Name() != "demo" && cmd.Name() != "chat" && cmd.Name() != "model" && cmd.Name() != "codec-server" && cmd.Name() != "mcp" {
			ctx, cancel := context.WithTimeout(cmd.Context(), g.timeout)
			g.cancel, g.timed = cancel, ctx
			cmd.SetContext(ctx)
		}
		return nil
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	pf := root.PersistentFlags()
	pf.StringVar(&g.dial.Address, "address", "", "Temporal frontend host:port (default $TEMPORAL_ADDRESS or localhost:7233)")
	pf.StringVar(&g.dial.Namespace, "namespace", "", "Temporal namespace (default $TEMPORAL_NAMESPACE or \"default\")")
	pf.StringVar(&g.dial.KeysPath, "keys", "", "key ring file that turns encryption at rest on (default $AGENTCHAT_KEYS; none: off)")
	pf.StringVar(&g.dial.TaskQueue, "task-queue", wire.TaskQueue, "task queue of the worker that runs new chats")
	pf.DurationVar(&g.timeout, "timeout", 10*time.Minute, "give up on a command after this long (0: never)")
	pf.BoolVarP(&g.verbose, "verbose", "v", false, "print the Temporal SDK's warnings on stderr too (such as TMPRL1103, a payload over 512 KiB); without it only its errors")
	pf.StringArrayVar(&g.stores, "message-store", nil, "message store URL the worker keeps long chats' older messages in, read by history and export: sqlite:///path.db or postgres://... (repeatable; default the worker's default, sqlite in $AGENTCHAT_DATA_DIR/messages.db, when that file exists). Only read: a sqlite file that does not exist is an error, never created")
	pf.DurationVar(&g.dial.WorkerWait, "worker-wait", agentchat.WorkerWait, "how long a command waits for a worker to poll the task queue before it says none does (a restarted server lists its workers again within about 10 s)")
	root.AddCommand(demoCmd(g, s), startCmd(g, s), sendCmd(g, s), chatCmd(g, s), followCmd(g, s), stopCmd(g, s),
		stateCmd(g, s), historyCmd(g, s), listCmd(g, s), approveCmd(g, s), exportCmd(g, s), importCmd(g, s), participantsCmd(g, s), migrateCmd(g, s), serverCmd(g, s), modelCmd(s),
		codecServerCmd(g, s), reencryptCmd(g, s), keysCmd(s), mcpCmd(g))
	return root, g
}

// chatFlag adds the required --chat flag to cmd: the id of an existing chat.
func chatFlag(cmd *cobra.Command, chatID *string) {
	cmd.Flags().StringVar(chatID, "chat", "", "chat id (required)")
	_ = cmd.MarkFlagRequired("chat")
}

// jsonFlag adds --json (default false) to cmd; usage says what it prints.
func jsonFlag(cmd *cobra.Command, asJSON *bool, usage string) {
	cmd.Flags().BoolVar(asJSON, "json", false, usage)
}

// connect dials Temporal with the global flags, traced and measured as the
// OpenTelemetry environment says (telemetry.Setup; off when unset).
func (g *globals) connect(ctx context.Context) (*agentchat.Client, error) {
	if g.tel == nil {
		tel, err := telemetry.Setup(ctx, telemetry.Options{ServiceName: "agentchat-starter"})
		if err != nil {
			return nil, err
		}
		g.tel = tel
		if g.dial.Interceptors, err = tel.Interceptors(); err != nil {
			return nil, err
		}
		g.dial.MetricsHandler = tel.TemporalMetricsHandler()
	}
	g.dial.ImportSpill = idspill.Opener("") // a document of any length is checked with a flat heap
	if g.dial.Logger == nil {
		g.dial.Logger = sdkLogger(g.errOut, g.verbose)
	}
	if g.opened == nil {
		stores, err := serve.ReaderStores(g.stores)
		if err != nil {
			return nil, err
		}
		g.opened, g.dial.MessageStores = stores, stores
	}
	return agentchat.Dial(ctx, g.dial)
}

// connectChat dials Temporal and checks that a worker serves the chat (or, with an
// empty id, the task queue of new chats), so no command waits silently for nobody.
func (g *globals) connectChat(ctx context.Context, chatID string) (*agentchat.Client, error) {
	c, err := g.connect(ctx)
	if err != nil {
		return nil, err
	}
	if chatID == "" {
		err = c.CheckWorker(ctx, "")
	} else {
		err = c.CheckChatWorker(ctx, chatID)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// sdkLogger is where the Temporal SDK's log goes: w (the command's stderr, never
// its output), errors only, or warnings too when verbose.
func sdkLogger(w io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelError
	if verbose {
		level = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// errorHint is what the starter adds to an error it prints: for a chat's
// AwaitingApproval error the command that decides a call, " (run: go run ./starter approve --chat ID --call ID
// [--reject --reason TEXT])". The chat's own error says what to
// do in wire terms (the Approve update), as clients in any language read it. For a
// payload the SDK cannot decode (an encrypted chat read without its ring): where the
// ring goes. "" for any other error.
func errorHint(err error, taskQueue string) string {
	if err != nil && strings.Contains(err.Error(), "no poller seen for task queue") {
		// The server's words for a query no worker could answer: a closed chat is read
		// by queries, which its worker answers.
		return fmt.Sprintf(" (no worker serves the chat's task queue: start one, e.g. go run ./worker --offline --task-queue %s)", shellQuote(taskQueue))
	}
	if err != nil && strings.Contains(err.Error(), wire.OverChatLimit) {
		// The chat's words for a message over its limit (wire.SendMessageInput.Message).
		return " (start a chat with --max-message-bytes N to take longer messages)"
	}
	if err != nil && strings.Contains(err.Error(), "payload encoding is not supported") {
		// The SDK's words for a payload it cannot decode: an encrypted chat read
		// without its key ring.
		return " (the chat's payloads are encrypted: give the key ring with --keys or $" + keyring.Env + ")"
	}
	var ce *agentchat.Error
	if !errors.As(err, &ce) || ce.Type != wire.ErrTypeAwaitingApproval {
		return ""
	}
	return fmt.Sprintf(" (run: go run ./starter approve --chat %s --call ID [--reject --reason TEXT])", shellQuote(ce.ChatID))
}

// oneLine folds an error message onto one line.
func oneLine(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == '\n' || r == '\r' {
			r = ' '
		}
		out = append(out, r)
	}
	return string(out)
}

// stdinIsTerminal reports whether In is an interactive terminal.
func stdinIsTerminal(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
