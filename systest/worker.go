package systest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/hosting"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/sqlite"
	"github.com/agentchat/agentchat/tools"
)

// workerEnv is the environment variable that makes the test binary a worker: it holds
// a WorkerSpec as JSON (see RunWorkerIfChild).
const workerEnv = "AGENTCHAT_SYSTEST_WORKER"

// WorkerSpec is what a child worker process needs to know.
type WorkerSpec struct {
	Address   string `json:"address"`
	Namespace string `json:"namespace"`
	TaskQueue string `json:"taskQueue"`
	// Config is the path of the agent config (YAML).
	Config string `json:"config"`
	// ModelURL is the recorder's base URL; every endpoint is sent there.
	ModelURL string `json:"modelUrl"`
	// Dir is the world's shared folder: documents (exports/), the SQLite message store
	// (messages.db) and the tool record (toolFile).
	Dir string `json:"dir"`
}

// Tool names of the recording tools the system test's agents call.
const (
	// toolRecord is a plain tool: it writes the execution and returns "recorded <callId>".
	toolRecord = "record"
	// toolRefund needs a person's approval; it records the execution like toolRecord.
	toolRefund = "refund_rec"
)

// toolFile is the file, in the world's folder, where the recording tools append one
// line per real execution: "<chatId>\t<callId>\t<tool>\n". Lines are written with one
// O_APPEND write, so a process killed at any point leaves whole lines.
const toolFile = "tool-executions.log"

// RunWorkerIfChild runs a worker and exits when the process was started as one of the
// system test's workers (workerEnv set); otherwise it returns at once. Call it first
// in TestMain.
func RunWorkerIfChild() {
	raw := os.Getenv(workerEnv)
	if raw == "" {
		return
	}
	var spec WorkerSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "systest worker: bad", workerEnv, err)
		os.Exit(2)
	}
	if err := runWorker(spec); err != nil {
		fmt.Fprintln(os.Stderr, "systest worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runWorker serves spec's task queue until SIGINT or SIGTERM (or SIGKILL, when the
// test plays a crash).
func runWorker(spec WorkerSpec) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg, err := agents.LoadConfig(spec.Config)
	if err != nil {
		return err
	}
	tc, err := client.Dial(client.Options{HostPort: spec.Address, Namespace: spec.Namespace,
		Logger: tlog.NewStructuredLogger(logger)})
	if err != nil {
		return fmt.Errorf("dial %s: %w", spec.Address, err)
	}
	defer tc.Close()
	db, err := sqlite.Open(filepath.Join(spec.Dir, "messages.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	store := newRefusingStore(db, spec.Dir)
	rec := &toolRecorder{path: filepath.Join(spec.Dir, toolFile)}
	toolFuncs := tools.Builtin()
	toolFuncs[toolRecord] = rec.tool
	toolFuncs[toolRefund] = rec.tool
	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(cfg),
		Models:    activities.ModelConfig{BaseURLOverride: spec.ModelURL},
		Functions: activities.FunctionConfig{Tools: toolFuncs},
		Stores:    activities.StoreConfig{MessageStores: map[string]msgstore.Store{store.Name(): store}},
		Transfer: activities.TransferConfig{Temporal: tc, Namespace: spec.Namespace,
			Store: activities.FileStore{Dir: filepath.Join(spec.Dir, "exports")}},
		Telemetry: activities.TelemetryConfig{Logger: logger},
	})
	if err != nil {
		return err
	}
	w := worker.New(tc, spec.TaskQueue, worker.Options{})
	hosting.Register(w, acts)
	if err := w.Start(); err != nil {
		return err
	}
	// The parent waits for this line: the worker's pollers are running.
	fmt.Fprintln(os.Stderr, readyLine)
	<-worker.InterruptCh()
	w.Stop()
	return nil
}

// readyLine is what a child worker writes to its log once its pollers run.
const readyLine = "systest worker: polling"

// toolRecorder appends one line per real tool execution to its file.
type toolRecorder struct {
	path string
	mu   sync.Mutex
}

// tool is the recording ToolFunc: it writes the execution (the call CallTool gives it,
// activities.CallOf), then answers.
func (r *toolRecorder) tool(ctx context.Context, _ json.RawMessage) (string, error) {
	in, ok := activities.CallOf(ctx)
	if !ok {
		return "", errors.New("systest: recording tool called without its call")
	}
	line := fmt.Sprintf("%s\t%s\t%s\n", in.ChatID, in.CallID, in.Name)
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.OpenFile(r.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.WriteString(line); err != nil {
		return "", err
	}
	return "recorded " + in.CallID, nil
}
