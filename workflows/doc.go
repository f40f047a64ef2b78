// Package workflows holds the AgentChat workflow: deterministic code only. It never
// touches the network, the clock or the file system; model calls and registry look-ups
// run as activities (package activities), which this package names by their wire names
// (package wire) and never imports. Its dependencies are wire, strategies, chat and
// chatstate: no config file, no model client, no store driver (TestWorkflowDeps).
//
// One AgentChat workflow is one chat. Its event history is the primary chat: user turns
// arrive through the SendMessage update or the UserMessage signal, are queued and
// answered one at a time, and each agent reply is an activity result.
//
// The chat's state is chatState (state.go): its lifecycle is one phase with a fixed
// table of moves (phase.go), and its data is in parts, each of which owns its fields
// and keeps its rules; no other file reads or writes a part's fields:
//
//   - history (history.go, seal.go): the window of the latest messages and the index
//     of the pages that hold the older ones;
//   - turnQueue (queue.go): the queued turns, the active one and the idempotency record
//     by messageId;
//   - approvals (approvals.go): the turn waiting for approvals and the decisions given;
//   - channelSet (channels.go): the agents' channels and their states;
//   - eventLog (streamlog.go): the chat's stream, read by followers (stream.go);
//   - transfers (transfers.go, with export.go, restore.go, migrate.go): exports,
//     imports and a migration.
//
// A turn reads from top to bottom in turn.go: accept it (handleSend, enqueue), select
// and run agents (runTurn), record the replies, answer. What continue-as-new hands to
// the next run (carry.go) is put together from the parts: the embedded wire.Carried,
// whose fields a part owns stay nil in chatState, and each part's carried form.
package workflows
