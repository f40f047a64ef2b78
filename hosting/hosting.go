// Package hosting builds a Temporal worker that hosts the AgentChat workflow and its
// activities: Register (the workflow under its wire name, and Activities.Register),
// NewWorker, and the registry and offline scripts a worker starts from (LoadRegistry,
// OfflineScripts). The worker command (worker/), the test harness (internal/testenv)
// and programs that embed a worker use it; services that only drive chats import the
// module root's client package, which links none of this.
package hosting

import (
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
	"github.com/agentchat/agentchat/workflows"
)

// Registry is what Register needs of a worker or a test environment:
// worker.Worker and testsuite's workflow environment have it.
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
	activities.ActivityRegistry
}

// Register registers the AgentChat workflow under its wire name
// (wire.WorkflowType) and the activities under theirs (Activities.Register) on a
// worker or a test environment.
func Register(r Registry, a *activities.Activities) {
	r.RegisterWorkflowWithOptions(workflows.AgentChat, workflow.RegisterOptions{Name: wire.WorkflowType})
	a.Register(r)
}

// NewWorker returns a Temporal worker on taskQueue (default wire.TaskQueue) with
// the workflow and activities registered and activities.LogInterceptor installed (the
// chat's keys on every activity log line); the caller starts and stops it. With
// opts.Identity empty, the worker polls with the activities' identity
// (activities.Config.WorkerIdentity, default Temporal's "<pid>@<host>@"), so that a
// chat recognises it among the queue's pollers during a rolling deploy; give a custom
// identity there, not only in opts (a mismatch costs chats the whole UnknownAgentWait
// when no worker has an agent or function).
func NewWorker(tc client.Client, taskQueue string, a *activities.Activities, opts worker.Options) worker.Worker {
	if taskQueue == "" {
		taskQueue = wire.TaskQueue
	}
	if opts.Identity == "" {
		opts.Identity = a.WorkerIdentity()
	}
	opts.Interceptors = append(opts.Interceptors, activities.LogInterceptor())
	w := worker.New(tc, taskQueue, opts)
	Register(w, a)
	return w
}

// LoadRegistry reads the agent config at path, or the embedded example
// (agents.ExampleConfig) when path is "".
func LoadRegistry(path string) (*agents.Registry, error) {
	if path == "" {
		cfg, err := agents.ParseConfig(agents.ExampleConfig)
		if err != nil {
			return nil, fmt.Errorf("agentchat: embedded example config: %w", err)
		}
		return agents.NewRegistry(cfg), nil
	}
	cfg, err := agents.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	return agents.NewRegistry(cfg), nil
}

// OfflineScripts collects the scripted offline replies of every agent in the registry
// (each definition's "offline": {"replies": [...]}), by agent id, for offline.Options.
func OfflineScripts(r *agents.Registry) (map[string][]offline.Reply, error) {
	opts, err := OfflineOptions(r)
	return opts.Scripts, err
}

// OfflineOptions are the offline model's options from every agent in the registry:
// each definition's "offline": {"replies": [...], "chunkDelay": "40ms"} gives its
// scripted replies (Scripts) and the pause between its streamed chunks (ChunkDelays).
func OfflineOptions(r *agents.Registry) (offline.Options, error) {
	opts := offline.Options{Scripts: map[string][]offline.Reply{}, ChunkDelays: map[string]time.Duration{}}
	for _, id := range r.IDs() {
		d, _ := r.Get(id)
		if len(d.Offline) == 0 {
			continue
		}
		var s struct {
			Replies    []offline.Reply `json:"replies"`
			ChunkDelay wire.Duration   `json:"chunkDelay"`
		}
		if err := json.Unmarshal(d.Offline, &s); err != nil {
			return offline.Options{}, fmt.Errorf("agentchat: agent %q: offline script: %w", id, err)
		}
		if s.Replies != nil {
			opts.Scripts[id] = s.Replies
		}
		if s.ChunkDelay > 0 {
			opts.ChunkDelays[id] = time.Duration(s.ChunkDelay)
		}
	}
	return opts, nil
}
