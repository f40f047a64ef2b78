package wire

import (
	"unicode/utf8"

	"github.com/agentchat/agentchat/chat"
)

// Types of StreamEvent, in the order a turn produces them.
const (
	// EventTurnAccepted: the chat queued turn TurnID; Position is its place in the queue
	// (1: next to run); Text is the start of the user's text (ClipText to
	// AcceptedTextBytes) and Author the user's author name, if any.
	EventTurnAccepted = "turnAccepted"
	// EventAgentStarted: agent AgentID began reply MessageID, attempt Attempt.
	EventAgentStarted = "agentStarted"
	// EventTextDelta: Text continues reply MessageID (attempt Attempt). The deltas of a
	// message's last attempt concatenate exactly to its final text.
	EventTextDelta = "textDelta"
	// EventRetry: attempt Attempt of reply MessageID was abandoned (its worker died, the
	// call failed and is retried): drop the text deltas of that attempt.
	EventRetry = "retry"
	// EventMessageDone: Message is final (an agent's reply or a tool message), as the
	// history holds it.
	EventMessageDone = "messageDone"
	// EventToolCall: the chat runs (or answers) Call, a function call of reply MessageID.
	EventToolCall = "toolCall"
	// EventToolResult: Result answers call Result.CallID.
	EventToolResult = "toolResult"
	// EventApprovalNeeded: Call waits for a person's decision (the Approve update).
	EventApprovalNeeded = "approvalNeeded"
	// EventTurnDone: turn TurnID is answered; IsComplete as in TurnResult.
	EventTurnDone = "turnDone"
	// EventTurnFailed: turn TurnID failed (Error); its messages were taken back.
	EventTurnFailed = "turnFailed"
	// EventTurnCancelled: turn TurnID was cancelled (the CancelTurn update).
	EventTurnCancelled = "turnCancelled"
)

// StreamEvent is one event of a chat's stream: the JSON of every item on topic
// StreamTopic. Type says which fields are set (the Event* constants); the others are
// omitted.
type StreamEvent struct {
	Type string `json:"type"`
	// TurnID is the messageId of the user turn the event belongs to.
	TurnID string `json:"turnId,omitempty"`
	// MessageID is the reply's messageId (agentStarted, textDelta, retry, toolCall).
	MessageID string `json:"messageId,omitempty"`
	AgentID   string `json:"agentId,omitempty"`
	// Author is the agent's name (agentStarted), as its messages carry it, or the
	// user's author name (turnAccepted).
	Author string `json:"author,omitempty"`
	// Attempt counts from 1 the attempts at reply MessageID.
	Attempt int `json:"attempt,omitempty"`
	// Position is a queued turn's place (turnAccepted; 1: next).
	Position int    `json:"position,omitempty"`
	Text     string `json:"text,omitempty"`
	// Call is a function call (toolCall, approvalNeeded); Result its result (toolResult).
	Call   *chat.Content `json:"call,omitempty"`
	Result *chat.Content `json:"result,omitempty"`
	// Message is the final message (messageDone).
	Message *chat.Message `json:"message,omitempty"`
	// Error says why the turn failed (turnFailed).
	Error      *TurnError `json:"error,omitempty"`
	IsComplete bool       `json:"isComplete,omitempty"`
	// Replayed marks the turnDone that a client makes from a turn's first answer when
	// the turn was answered before (TurnResult.Replayed): the chat's stream has none.
	Replayed bool `json:"replayed,omitempty"`
}

// Ends reports whether ev closes its turn (turnDone, turnFailed, turnCancelled).
func (ev StreamEvent) Ends() bool {
	return ev.Type == EventTurnDone || ev.Type == EventTurnFailed || ev.Type == EventTurnCancelled
}

// AcceptedTextBytes is how much of a turn's text its turnAccepted event carries: 1 KiB
// of UTF-8, enough to show what was asked without doubling a long message's size in
// the stream.
const AcceptedTextBytes = 1 << 10

// ClipText returns s when it is at most n bytes long; otherwise its longest prefix of
// whole characters that leaves room for "…" (3 bytes) within n, followed by "…" (for
// n under 3, "…" alone).
func ClipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = "…"
	cut := max(0, n-len(more))
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}
