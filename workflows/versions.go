package workflows

import "go.temporal.io/sdk/workflow"

// Change ids of the AgentChat workflow (workflow.GetVersion), all in this file, under
// one naming scheme. The README's "Deploying" section says the same for operators.
//
// The baseline is the workflow as it is with no id: what a history recorded by a
// released version of agentchat replays with. A change to the workflow needs an id
// when it changes the commands that a replayed history of a released version would
// produce (activities, local activities, timers, child workflows, markers,
// continue-as-new, the order of those, or whether an update is accepted or a signal
// taken): otherwise the chats that run on the released version fail on their next
// workflow task as non-deterministic ([TMPRL1100]). Code that produces the same
// commands (queries, log text, activity code, a new optional field) needs none.
//
// To add one:
//
//   - declare it below as changeXxx = "xxx": the constant is "change" and the change in
//     CamelCase, its value the same words in kebab-case ("changeQuotaCheck" =
//     "quota-check"); a doc comment says what the change does and what runs before
//     it did; never reuse a value, even of a retired id;
//   - where the old and new code part, and only there, branch on changed(ctx, changeXxx):
//     true takes the new behaviour (every new run), false the old (histories recorded
//     before the change); keep the old branch as it was;
//   - capture a replay history that takes the new branch (integration/testdata/replay)
//     and name it in replayChanges (integration/replay_transfer_test.go).
//
// An id is retired at a release, once no run that began on an older version is open:
// such a run may have taken the old branch, and keeps its behaviour until it closes or
// continues as new (a continue-as-new starts a history of its own, on the current
// code). A run that recorded the id's marker replays without the call: the SDK skips
// version markers that no GetVersion asks for. Check with visibility that
// `temporal workflow count --query 'WorkflowType="AgentChat" AND ExecutionStatus="Running" AND StartTime < "<when the last worker of the older version stopped>"'`
// answers 0. Then the release folds every id into the next baseline: the new branches
// become the only code; the old branches, the tests of only them and the constants go;
// the replay histories are captured anew. TestChangeIDsLiveInOneFile keeps the ids in
// this file and the scheme.
//
// Baseline 1 holds no id: the 31 changes made before the first release are folded
// into it.
const (
	// changeImportWindowStart: a restore counts the messages of a first ImportChat page
	// that wrote the document's older messages as pages from the page's Base, where they
	// begin, and so stops when they reach the document's end. Before, it counted them
	// from 0 and always made a second ImportChat call, which read and decoded the
	// document again to return no message.
	changeImportWindowStart = "import-window-start"
)

// changed reports whether this run takes change id's new behaviour: true in a run
// that reaches the call for the first time (a marker is recorded), false when it
// replays a history recorded before the change. id is one of the constants above.
func changed(ctx workflow.Context, id string) bool {
	return workflow.GetVersion(ctx, id, workflow.DefaultVersion, 1) == 1
}
