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
// table of moves (phase.go), and what continue-as-new hands to the next run is the
// Carried struct it embeds (carry.go), copied whole.
package workflows
