// Package wire is agentchat's wire contract with every Temporal client, in any language
// (DESIGN.md, "Wire contract"; README, "Wire contract"): the AgentChat workflow's type,
// task queue, update, signal and query names (names.go), the activity names, the
// application error types a client can branch on (errtypes.go), every payload those
// carry — workflow inputs and results (types.go, transfer.go, tools.go), activity
// inputs and results (invoke.go, tools.go), the participant a chat holds
// (participant.go, kind.go), the state a run carries across continue-as-new
// (carry.go) — and the size limits a payload is held to (limits.go).
//
// Everything here is data and pure functions of it: no Temporal client, no model
// endpoint, no file or network access, so a service, the workflow and the activities
// share one definition. Every JSON name is part of the contract: renaming a member, a
// name or an error type breaks running chats and clients in other languages (change
// none without a migration; the committed replay histories check the payloads).
package wire
