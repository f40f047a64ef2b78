package activities

import (
	"maps"
	"slices"

	"go.temporal.io/sdk/activity"

	"github.com/agentchat/agentchat/wire"
)

// ActivityRegistry is what Register needs of a worker or a test environment:
// worker.Worker, worker.ActivityRegistry, testsuite's workflow and activity
// environments all have it.
type ActivityRegistry interface {
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// Register registers every activity on r under its wire name (the *Activity constants
// of wire/names.go), each once: the one registration the worker
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
		wire.InvokeAgentActivity:         a.InvokeAgent,
		wire.ResolveParticipantsActivity: a.ResolveParticipants,
		wire.ExportChatActivity:          a.ExportChat,
		wire.ImportChatActivity:          a.ImportChat,
		wire.StartTargetActivity:         a.StartMigrationTarget,
		wire.ForwardTurnsActivity:        a.ForwardTurns,
		wire.StoreMessagesActivity:       a.StoreMessages,
		wire.WritePagesActivity:          a.WritePages,
		wire.LookupIDsActivity:           a.LookupIDs,
		wire.DeleteLineageActivity:       a.DeleteLineage,
		wire.ReadTurnActivity:            a.ReadTurn,
		wire.CallToolActivity:            a.CallTool,
		wire.SelectActivity:              a.SelectSpeaker,
		wire.JudgeActivity:               a.JudgeTermination,
		wire.SummarizeActivity:           a.Summarize,
	}
}
