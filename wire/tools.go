package wire

import (
	"encoding/json"
	"time"
)

// Tool is a function an agent may call, declared in the agent config and backed by a
// Go function registered on the worker under the same name. JSON:
//
//	{"description":"Look up an order","parameters":{"type":"object",...},
//	 "timeout":"30s","maxAttempts":3,"approval":true}
//
// Each call runs as its own activity with this timeout and retry policy. A tool with
// Approval makes the chat wait (durably, for days if need be) for a person to approve
// or reject the call before it runs.
type Tool struct {
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"` // JSON Schema of the arguments object
	// Timeout is the start-to-close timeout of one attempt; default 30s.
	Timeout Duration `json:"timeout,omitempty"`
	// MaxAttempts bounds attempts when the tool fails with a retryable error; default 3.
	MaxAttempts int `json:"maxAttempts,omitempty"`
	// HeartbeatTimeout: the worker heartbeats while the tool runs; when no heartbeat
	// comes for this long (the worker died), the call is retried on another worker;
	// default 5s (DefaultToolHeartbeat).
	HeartbeatTimeout Duration `json:"heartbeatTimeout,omitempty"`
	Approval         bool     `json:"approval,omitempty"`
}

// DefaultToolHeartbeat is a tool call's heartbeat timeout when its config gives none.
// The heartbeats come from the worker, not the tool, so a slow tool never misses one:
// the timeout only has to outlast a worker's pause (garbage collection, a busy
// machine). A crash mid-tool costs about this plus the retry delay (README,
// "Crashes").
const DefaultToolHeartbeat = 5 * time.Second

// ToolSpec is a tool as a participant carries it: its name and settings.
type ToolSpec struct {
	Name string `json:"name"`
	Tool
}

// DefaultMaxToolRounds is how many rounds of tool calls one agent reply may take when
// the agent does not say.
const DefaultMaxToolRounds = 5

// WithDefaults fills zero settings.
func (t Tool) WithDefaults() Tool {
	t.Timeout = Duration(t.Timeout.Or(30 * time.Second))
	t.HeartbeatTimeout = Duration(t.HeartbeatTimeout.Or(DefaultToolHeartbeat))
	if t.MaxAttempts <= 0 {
		t.MaxAttempts = 3
	}
	return t
}

// Tool looks up one of the participant's tools by name.
func (p Participant) Tool(name string) (ToolSpec, bool) {
	for _, t := range p.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return ToolSpec{}, false
}

// CallToolInput is the input of the activity that runs one tool call.
type CallToolInput struct {
	ChatID    string `json:"chatId"`
	AgentID   string `json:"agentId"`
	CallID    string `json:"callId"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // a JSON object, as the model wrote it
	// TurnID is the messageId of the user turn whose reply made the call (for traces
	// and logs); empty from workflows before it existed.
	TurnID string `json:"turnId,omitempty"`
}

// CallToolResult is the tool's result, as text the model reads.
type CallToolResult struct {
	Result string `json:"result"`
}

// Decision is a person's answer to a tool call that needs approval.
type Decision struct {
	Approved bool   `json:"approved"`
	Reason   string `json:"reason,omitempty"`
	By       string `json:"by,omitempty"`
}

// String is d in words: "approved", "rejected by Bob: too old".
func (d Decision) String() string {
	out := "approved"
	if !d.Approved {
		out = "rejected"
	}
	if d.By != "" {
		out += " by " + d.By
	}
	if d.Reason != "" {
		out += ": " + d.Reason
	}
	return out
}

// ApproveInput is the Approve update's input: {"callId":"c1","approved":true} or
// {"callId":"c1","approved":false,"reason":"refunds over $100 need a manager"}.
type ApproveInput struct {
	CallID   string `json:"callId"`
	Approved bool   `json:"approved"`
	Reason   string `json:"reason,omitempty"`
	By       string `json:"by,omitempty"`
}

// PendingApproval is a tool call waiting for a person: in State's pendingApprovals and
// in the TurnResult of the turn it suspended.
type PendingApproval struct {
	CallID    string `json:"callId"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	AgentID   string `json:"agentId"`
	TurnID    string `json:"turnId"`
}

// MCPIdempotencyKeyMeta is the key under which every MCP tools/call the worker sends
// carries the call's idempotency key ("<chatId>/<callId>", each part path-escaped) in
// its _meta, the same on every attempt.
const MCPIdempotencyKeyMeta = "agentchat/idempotencyKey"
