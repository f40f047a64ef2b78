package activities

import (
	"maps"
	"slices"

	"go.temporal.io/sdk/activity"

	"github.com/agentchat/agentchat/workflows"
)

// ActivityRegistry is what Register needs of a worker or a test environment:
// worker.Worker, worker.ActivityRegistry, testsuite's workflow and activity
// environments all have it.
type ActivityRegistry interface {
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// Register registers every activity on r under its wire name (the *Activity constants
// of workflows/names.go), each once: the one registration the worker
// (hosting.NewWorker), the tests and embedding programs share. The workflow is not
// registered here (hosting.Register does both).
func (a *Activities) Register(r ActivityRegistry) {
	acts := a.byName()
	for _, name := range slices.Sorted(maps.Keys(acts)) {
		r.RegisterActivityWithOptions(acts[name], activity.RegisterOptions{Name: name})
	}
}

// byName is every activity, by wire name (a map literal: a name given twice does not
// compile).
func (a *Activities) byName() map[string]any {
	return map[string]any{
		workflows.InvokeAgentActivity:         a.InvokeAgent,
		workflows.ResolveParticipantsActivity: a.ResolveParticipants,
		workflows.ExportChatActivity:          a.ExportChat,
		workflows.ImportChatActivity:          a.ImportChat,
		workflows.StartTargetActivity:         a.StartMigrationTarget,
		workflows.ForwardTurnsActivity:        a.ForwardTurns,
		workflows.StoreMessagesActivity:       a.StoreMessages,
		workflows.CallToolActivity:            a.CallTool,
		workflows.SelectActivity:              a.SelectSpeaker,
		workflows.JudgeActivity:               a.JudgeTermination,
		workflows.SummarizeActivity:           a.Summarize,
	}
}
