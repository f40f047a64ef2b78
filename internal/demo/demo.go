// Package demo is the main job of `go run ./starter demo`: it makes sure a Temporal
// server answers (starting the dev server when none does), runs a worker in-process,
// and plays a scripted conversation that shows a thread, a temporary thread, a group
// chat with selection and termination strategies, the State query and the Temporal UI
// link of every chat.
package demo

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/internal/devserver"
	"github.com/agentchat/agentchat/internal/logx"
	"github.com/agentchat/agentchat/internal/serve"
	"github.com/agentchat/agentchat/strategies"
)

// TaskQueue is the demo's own task queue, so that a worker you run on the default
// queue with other settings never answers the demo's chats.
const TaskQueue = "agentchat-demo"

// SecondNamespace is where the demo migrates its thread to.
const SecondNamespace = "agentchat-demo-b"

// Options configure Run.
type Options struct {
	Out io.Writer
	// Dial says where Temporal is; empty fields follow Temporal's environment
	// configuration. TaskQueue is ignored: the demo uses its own.
	Dial agentchat.DialOptions
	// DataDir holds the dev server's files if the demo starts one, the exported
	// documents and the message store; "" means DataDir().
	DataDir string
	// Offline forces the offline model even when OPENAI_API_KEY is set.
	Offline bool
	// StopServer stops the dev server at the end if the demo started it.
	StopServer bool
	// AgentsPath is the agent config; "" means the built-in example.
	AgentsPath string
}

// Run plays the demo. It returns the first error, after which nothing of the demo
// is left running except a dev server it started (stopped too with StopServer).
func Run(ctx context.Context, opts Options) error {
	if opts.DataDir == "" {
		opts.DataDir = DataDir()
	}
	p := &printer{w: opts.Out}
	offline := opts.Offline || os.Getenv("OPENAI_API_KEY") == ""
	p.title("agentchat demo")

	srv, err := EnsureServer(ctx, opts.Dial.Address, opts.DataDir, opts.Out)
	if err != nil {
		return err
	}
	if srv.Started {
		p.kv("temporal", "started the dev server at %s (SQLite %s, log %s)", srv.Address, srv.DBFile, srv.LogFile)
	} else {
		p.kv("temporal", "using the server at %s", srv.Address)
	}
	if opts.StopServer && srv.Started {
		defer func() { _ = stopServer(srv, opts.Out) }()
	}
	quiet := slog.New(logx.MinLevel(slog.NewTextHandler(opts.Out, nil), slog.LevelError))
	opts.Dial.Address, opts.Dial.TaskQueue, opts.Dial.Logger = srv.Address, TaskQueue, quiet
	c, err := agentchat.Dial(ctx, opts.Dial)
	if err != nil {
		return err
	}
	defer c.Close()
	// The workers keep exports and message bodies in the demo's data folder, not in
	// the working directory's.
	messages, err := filepath.Abs(filepath.Join(opts.DataDir, "messages.db"))
	if err != nil {
		return err
	}
	exportDir := filepath.Join(opts.DataDir, "exports")
	if opts.AgentsPath == "" {
		if opts.AgentsPath, err = writeDemoAgents(opts.DataDir); err != nil {
			return err
		}
	}
	w, err := serve.Start(c.Temporal(), serve.Options{AgentsPath: opts.AgentsPath, Offline: offline, Namespace: c.Namespace(),
		TaskQueue: TaskQueue, Logger: quiet, StoreDir: exportDir, MessageStores: []string{"sqlite://" + messages}, Keys: c.Keys()})
	if err != nil {
		return err
	}
	defer w.Stop()
	if c.Keys() != nil {
		p.kv("encryption", "on: payloads, stored bodies and exported files sealed with key %q (AGENTCHAT_KEYS)", c.Keys().Current())
	}
	model := w.ModelInfo
	if offline {
		model += "; set OPENAI_API_KEY (and OPENAI_BASE_URL for Ollama or vLLM) to use a real model"
	}
	p.kv("model", "%s", model)
	p.kv("worker", "in-process, namespace %q, task queue %q, agents %s (%s)", c.Namespace(), TaskQueue,
		strings.Join(w.Registry.IDs(), ", "), w.AgentsSource)

	// A second worker serves the namespace the thread migrates to.
	nsCtx, cancel := context.WithTimeout(ctx, time.Minute)
	err = devserver.EnsureNamespace(nsCtx, srv.Address, SecondNamespace, 72*time.Hour)
	cancel()
	if err != nil {
		return err
	}
	dialB := opts.Dial
	dialB.Namespace = SecondNamespace
	cb, err := agentchat.Dial(ctx, dialB)
	if err != nil {
		return err
	}
	defer cb.Close()
	wb, err := serve.Start(cb.Temporal(), serve.Options{AgentsPath: opts.AgentsPath, Offline: offline, Namespace: SecondNamespace,
		TaskQueue: TaskQueue, Logger: quiet, StoreDir: exportDir, MessageStores: []string{"sqlite://" + messages}, Keys: cb.Keys()})
	if err != nil {
		return err
	}
	defer wb.Stop()
	p.kv("worker", "in-process, namespace %q, task queue %q (the migration's target)", SecondNamespace, TaskQueue)
	if err := waitForWorker(ctx, cb); err != nil {
		return err
	}

	d := &run{c: c, cb: cb, p: p, suffix: uuid.NewString()[:8], exportDir: exportDir}
	_, d.storyteller = w.Registry.Get("storyteller")
	steps := []func(context.Context) error{d.thread, d.temporary, d.streamed, d.groupChat, d.saveAndRestore, d.migrate, d.state}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	if opts.StopServer && srv.Started {
		d.p.title("7. The chats in the Temporal UI")
		d.p.note("no links: the demo stops the dev server it started (--stop-server), and its UI with it")
	} else {
		d.links(ctx, srv.UIURL)
	}
	p.title("done")
	if srv.Started && !opts.StopServer {
		p.line("The Temporal dev server keeps running (pid %d) so the links above work.", srv.PID)
		named := "" // the data folder, when it is not the one server stop finds by itself
		if opts.DataDir != DataDir() {
			named = opts.DataDir
		}
		p.line("Stop it with:  %s", srv.StopCommand(named))
	}
	if !opts.StopServer {
		d.keepTalking(srv.Address, workerFlags{offline: offline, agents: opts.AgentsPath,
			messages: "sqlite://" + messages, keys: opts.Dial.KeysPath})
	}
	return nil
}

// workerFlags are the demo worker's settings that a worker which goes on with the
// demo's chats needs too.
type workerFlags struct {
	offline  bool
	agents   string // the agent config: the demo's storyteller is in no other
	messages string // the message store URL, which holds the chats' older bodies
	keys     string // the key ring file given to the demo; "" for none or $AGENTCHAT_KEYS
}

// keepTalking prints the commands that go on with the demo's chats: a worker with the
// demo's task queue, agents and message store, then a turn for each chat that takes
// one (each command runs as printed, from the folder the demo ran in).
func (d *run) keepTalking(address string, w workerFlags) {
	env := "" // the commands below reach the default address unless told otherwise
	if address != devserver.DefaultAddress && address != "localhost:7233" {
		env = "TEMPORAL_ADDRESS=" + address + " "
	}
	worker := env + "go run ./worker"
	if w.offline {
		worker += " --offline"
	}
	worker += " --task-queue " + shellQuote(TaskQueue) + " --agents " + shellQuote(w.agents) +
		" --message-store " + shellQuote(w.messages)
	starter := env + "go run ./starter"
	if w.keys != "" {
		worker += " --keys " + shellQuote(w.keys)
		starter += " --keys " + shellQuote(w.keys)
	}
	d.p.line("To keep talking to these chats, run a worker on the demo's task queue, with its agents and message store:")
	d.p.line("  %s", worker)
	d.p.line("  %s send --chat %s %s", starter, shellQuote(d.restoredID), shellQuote("What did we talk about?"))
	if d.storyID != "" {
		d.p.line("  %s send --chat %s %s", starter, shellQuote(d.storyID), shellQuote("One more story, please"))
	}
	d.p.line("List the demo's chats (they are on its task queue, not the default one):")
	d.p.line("  %s list --task-queue %s", starter, shellQuote(TaskQueue))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// run is one play of the demo: the chats it made and where to print.
type run struct {
	c, cb      *agentchat.Client // the default namespace, and the migration's target
	p          *printer
	suffix     string
	exportDir  string
	threadID   string
	restoredID string
	storyID    string // the streaming step's chat; "" when it did not run
	chats      []link // in order, for the links
	// storyteller: the registry has the streaming step's agent.
	storyteller bool
}

// link is a chat to print a UI link for.
type link struct {
	c  *agentchat.Client
	id string
}

func (d *run) thread(ctx context.Context) error {
	d.threadID = "demo-thread-" + d.suffix
	d.p.title("1. A thread: one agent, three turns in one chat (" + d.threadID + ")")
	if _, err := d.c.Start(ctx, agentchat.StartOptions{ChatID: d.threadID, Participants: []string{"helper"}}); err != nil {
		return err
	}
	d.chats = append(d.chats, link{d.c, d.threadID})
	for _, text := range []string{"Hello, how are you?", "My name is Alice", "What's my name?"} {
		d.p.message(chat.TextMessage("", chat.RoleUser, "Alice", text))
		res, err := d.c.Send(ctx, d.threadID, agentchat.SendMessageInput{Text: text, AuthorName: "Alice"})
		if err != nil {
			return err
		}
		d.p.messages(res.Messages)
	}
	d.p.note("the last reply used the earlier turns: the whole thread is in the workflow's history")
	return nil
}

func (d *run) temporary(ctx context.Context) error {
	id := "demo-run-" + d.suffix
	d.p.title("2. A temporary thread: a one-turn chat that completes afterwards (" + id + ")")
	d.p.message(chat.TextMessage("", chat.RoleUser, "Alice", "Hello, how are you?"))
	res, err := d.c.Run(ctx, agentchat.RunOptions{ChatID: id, Agents: []string{"helper"}},
		agentchat.SendMessageInput{Text: "Hello, how are you?", AuthorName: "Alice"})
	if err != nil {
		return err
	}
	d.p.messages(res.Messages)
	d.chats = append(d.chats, link{d.c, id})
	status, err := d.waitClosed(ctx, id)
	if err != nil {
		return err
	}
	d.p.note("its workflow is now %s", strings.ToLower(strings.TrimPrefix(status.String(), "WORKFLOW_EXECUTION_STATUS_")))
	return nil
}

func (d *run) waitClosed(ctx context.Context, id string) (enumspb.WorkflowExecutionStatus, error) {
	for {
		desc, err := d.c.Temporal().DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return 0, err
		}
		if s := desc.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (d *run) groupChat(ctx context.Context) error {
	id := "demo-group-" + d.suffix
	d.p.title("3. A group chat: writer and reviewer (" + id + ")")
	term := agentchat.TerminationStrategy{Type: strategies.TerminationRegex, Pattern: `\bAPPROVED\b`,
		Agents: []string{"reviewer"}, MaxIterations: 6}
	d.p.note("selection: sequential (writer, reviewer, writer, ...); termination: the reviewer says APPROVED, at most 6 replies")
	if _, err := d.c.Start(ctx, agentchat.StartOptions{ChatID: id, Participants: []string{"writer", "reviewer"},
		Selection: agentchat.SelectionStrategy{Type: strategies.SelectionSequential}, Termination: term}); err != nil {
		return err
	}
	d.chats = append(d.chats, link{d.c, id})
	text := "Write a slogan for a tea shop that opens at 6am."
	d.p.message(chat.TextMessage("", chat.RoleUser, "Alice", text))
	res, err := d.c.Send(ctx, id, agentchat.SendMessageInput{Text: text, AuthorName: "Alice"})
	if err != nil {
		return err
	}
	d.p.messages(res.Messages)
	if res.IsComplete {
		d.p.note("the termination strategy matched the reviewer's %q: the chat is complete and its workflow closed", "APPROVED")
	} else {
		d.p.note("the turn ended at the iteration limit (%d replies) without approval", len(res.Messages))
	}
	return nil
}

func (d *run) state(ctx context.Context) error {
	d.p.title("6. The State query of the restored chat (" + d.restoredID + ")")
	st, err := d.c.State(ctx, d.restoredID)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "  ", "  ")
	if err != nil {
		return err
	}
	d.p.line("  %s", b)
	return nil
}

func (d *run) links(ctx context.Context, ui string) {
	d.p.title("7. The chats in the Temporal UI")
	if ui == "" {
		d.p.note("no UI address known for this server; set TEMPORAL_UI_URL to print links")
		return
	}
	for _, l := range d.chats {
		runID, err := l.c.RunID(ctx, l.id)
		if err != nil {
			d.p.line("  %s: %v", l.id, err)
			continue
		}
		d.p.line("  %-24s %s", l.id, WorkflowURL(ui, l.c.Namespace(), l.id, runID))
	}
}
