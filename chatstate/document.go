package chatstate

import (
	"encoding/json"
	"time"

	"github.com/agentchat/agentchat/chat"
)

// SchemaVersion is the version of the chat-state document this package writes.
const SchemaVersion = 1

// MediaType of the document file.
const MediaType = "application/vnd.agentchat.chat-state+json"

// Document is the chat-state document, version 1 (chat-state-v1.md). Field names on the
// wire are camelCase; Encode writes it canonically, Decode reads and checks it.
type Document struct {
	// SchemaVersion is SchemaVersion for a document Encode writes; Decode returns
	// SchemaVersion too, after upgrading an older document.
	SchemaVersion int    `json:"schemaVersion"`
	ChatID        string `json:"chatId"`
	// ExportedAt is written in RFC 3339 with the zone it has (UTC from the exporter).
	ExportedAt time.Time `json:"exportedAt"`
	Source     Source    `json:"source"`
	// History is the chat's primary history, oldest first.
	History      []chat.Message `json:"history"`
	Participants []Participant  `json:"participants"`
	Channels     []Channel      `json:"channels"`
	Strategies   Strategies     `json:"strategies"`
	// PendingTurns are user turns accepted but not yet answered, in order.
	PendingTurns []chat.Message `json:"pendingTurns"`
	// Digest is "sha256:" + 64 lowercase hex digits (see the package comment). Encode
	// ignores it and writes the digest it computes; Decode sets it to the digest of the
	// document it returns.
	Digest string `json:"digest,omitempty"`
}

// Source says which workflow the document was exported from.
type Source struct {
	Namespace  string `json:"namespace"`
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId,omitempty"`
	// Cluster is the name the exporting side calls its cluster; informative only.
	Cluster string `json:"cluster,omitempty"`
}

// Participant is one agent of the chat, by id. Agent definitions (model, instructions,
// credentials) are never part of the document: the importing side re-creates agents.
type Participant struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Type is the agent kind, e.g. "chat_completion".
	Type string `json:"type"`
}

// Channel is the state of one agent kind's channel (chat-state-v1.md, "channelState
// holds only what the primary history cannot give").
type Channel struct {
	// ChannelKey is base64 (standard, padded) of a SHA-256: see chat.ChannelKey.
	ChannelKey string `json:"channelKey"`
	// ChannelType is "chat_history", "responses_thread", "assistant_thread", or any other
	// string: channels of unknown types are kept as they are.
	ChannelType string `json:"channelType"`
	// ChannelState is a JSON object kept verbatim (in its canonical form); empty means {}.
	ChannelState json.RawMessage `json:"channelState"`
}

// Strategies holds the group chat's selection and termination strategies.
type Strategies struct {
	Selection   Strategy `json:"selection"`
	Termination Strategy `json:"termination"`
	IsComplete  bool     `json:"isComplete"`
}

// Strategy is one strategy: its type and its state.
type Strategy struct {
	Type string `json:"type"`
	// State is a JSON object kept verbatim (in its canonical form); empty means {}.
	State json.RawMessage `json:"state"`
}

// Report says what Decode did to the document besides reading it.
type Report struct {
	// UpgradedFrom is the schemaVersion of the document as read when it was older than
	// SchemaVersion; 0 if the document was already current.
	UpgradedFrom int
	// Repairs lists, one per repair, what Decode changed, naming the field.
	Repairs []string
}
