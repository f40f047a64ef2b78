package agentchat

import (
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
	"github.com/agentchat/agentchat/workflows"
)

// Register registers the AgentChat workflow and the activities under their wire names
// (wire.WorkflowType and the *Activity constants) on a worker or a test
// environment.
func Register(r worker.Registry, a *activities.Activities) {
	r.RegisterWorkflowWithOptions(workflows.AgentChat, workflow.RegisterOptions{Name: wire.WorkflowType})
	r.RegisterActivityWithOptions(a.InvokeAgent, activity.RegisterOptions{Name: wire.InvokeAgentActivity})
	r.RegisterActivityWithOptions(a.ResolveParticipants, activity.RegisterOptions{Name: wire.ResolveParticipantsActivity})
	r.RegisterActivityWithOptions(a.ExportChat, activity.RegisterOptions{Name: wire.ExportChatActivity})
	r.RegisterActivityWithOptions(a.ImportChat, activity.RegisterOptions{Name: wire.ImportChatActivity})
	r.RegisterActivityWithOptions(a.StartMigrationTarget, activity.RegisterOptions{Name: wire.StartTargetActivity})
	r.RegisterActivityWithOptions(a.ForwardTurns, activity.RegisterOptions{Name: wire.ForwardTurnsActivity})
	r.RegisterActivityWithOptions(a.StoreMessages, activity.RegisterOptions{Name: wire.StoreMessagesActivity})
	r.RegisterActivityWithOptions(a.CallTool, activity.RegisterOptions{Name: wire.CallToolActivity})
	r.RegisterActivityWithOptions(a.SelectSpeaker, activity.RegisterOptions{Name: wire.SelectActivity})
	r.RegisterActivityWithOptions(a.JudgeTermination, activity.RegisterOptions{Name: wire.JudgeActivity})
	r.RegisterActivityWithOptions(a.Summarize, activity.RegisterOptions{Name: wire.SummarizeActivity})
}

// NewWorker returns a Temporal worker on taskQueue (default wire.TaskQueue) with
// the workflow and activities registered; the caller starts and stops it. With
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
	scripts := map[string][]offline.Reply{}
	for _, id := range r.IDs() {
		d, _ := r.Get(id)
		if len(d.Offline) == 0 {
			continue
		}
		var s struct {
			Replies []offline.Reply `json:"replies"`
		}
		if err := json.Unmarshal(d.Offline, &s); err != nil {
			return nil, fmt.Errorf("agentchat: agent %q: offline script: %w", id, err)
		}
		scripts[id] = s.Replies
	}
	return scripts, nil
}
