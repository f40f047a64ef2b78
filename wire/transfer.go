package wire

import (
	"encoding/json"
	"fmt"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/strategies"
)

// InlineLimit is the largest document, in canonical bytes, that travels inside a
// workflow input, update or activity payload: 1 MiB, half of Temporal's 2 MB payload
// limit. Larger documents go by reference to a document store.
const InlineLimit = 1 << 20

// DocumentSource says where a chat-state document is: inline (Document, canonical JSON
// at most InlineLimit bytes) or by reference (URI, e.g. "file:///var/agentchat/exports/c1.json",
// read by the worker through its document store). Exactly one is set.
type DocumentSource struct {
	Document json.RawMessage `json:"document,omitempty"`
	URI      string          `json:"uri,omitempty"`
}

// Sink types for ExportInput.
const (
	SinkAuto   = "auto"   // inline when at most InlineLimit bytes, else the worker's store (the default)
	SinkInline = "inline" // inline; an error if larger than InlineLimit
	SinkStore  = "store"  // the worker's document store
	SinkFile   = "file"   // a file path on the worker's machine
)

// ExportInput is the Export update's input: {"sink":"auto"} or {"sink":"file","path":"/x/c1.json"}.
type ExportInput struct {
	Sink string `json:"sink,omitempty"`
	Path string `json:"path,omitempty"`
}

// ExportResult describes a written document: its digest ("sha256:<hex>"), size in
// bytes, message count, and where it is (Document inline, or URI).
type ExportResult struct {
	Digest       string          `json:"digest"`
	Bytes        int             `json:"bytes"`
	MessageCount int             `json:"messageCount"`
	URI          string          `json:"uri,omitempty"`
	Document     json.RawMessage `json:"document,omitempty"`
	// PendingTurns are the messageIds carried as pendingTurns.
	PendingTurns []string `json:"pendingTurns,omitempty"`
}

// ExportChatInput is the ExportChat activity's input: which run to read and where to write.
type ExportChatInput struct {
	ChatID string      `json:"chatId"`
	RunID  string      `json:"runId"`
	Export ExportInput `json:"export"`
	// Store names the message store holding the chat's stubbed bodies.
	Store string `json:"store,omitempty"`
}

// ImportInput is the Import update's input.
type ImportInput struct {
	Source DocumentSource `json:"source"`
}

// ImportPageInput asks the ImportChat activity for the messages from Offset on.
type ImportPageInput struct {
	Source DocumentSource `json:"source"`
	Offset int            `json:"offset"`
	// Store names the chat's message store, for large documents whose older bodies are
	// stored while importing ("" = the worker's default).
	Store string `json:"store,omitempty"`
	// Participants are the importing chat's agent ids. With them, the first page
	// refuses what the restore would refuse once it has every page (a history ending
	// with open calls of an agent not among them: chat.CheckOpenCalls) before any body
	// is stored, so that a refused import leaves no row in the store.
	Participants []string `json:"participants,omitempty"`
	// SelectionType and TerminationType are the importing chat's strategy types. With
	// them, the first page also refuses a strategy state of the chat's own type that
	// the restore could not read (CheckStrategyStates), before any body is stored.
	SelectionType   string `json:"selectionType,omitempty"`
	TerminationType string `json:"terminationType,omitempty"`
	// Paging, when set, makes the first call write the document's older messages as
	// pages of the message store (ImportBoundary: all but the window), under Lineage,
	// and return their index instead of the messages (ImportPage.Pages); the next
	// calls read on from ImportPage.Base. Nil: every message comes back (a workflow
	// from before paged history).
	Paging *ImportPaging `json:"paging,omitempty"`
}

// ImportPaging is how an import writes pages: the lineage the importing run chose and
// the chat's window and page sizes (zero: the defaults).
type ImportPaging struct {
	Lineage string        `json:"lineage"`
	Window  HistoryWindow `json:"window,omitzero"`
}

// CheckStrategyStates refuses the document's strategy state that a chat of these
// strategy types restores (DESIGN.md restore table: a state is taken over when the
// types match) but that does not decode as that type's state
// (strategies.SelectionState, strategies.TerminationState). A state of another type is
// not read, so not checked. Errors name the field: "strategies.selection.state: ...".
func CheckStrategyStates(st chatstate.Strategies, selectionType, terminationType string) error {
	if st.Selection.Type == selectionType && selectionType != "" {
		var s strategies.SelectionState
		if err := json.Unmarshal(st.Selection.State, &s); err != nil {
			return fmt.Errorf("strategies.selection.state: %w", err)
		}
	}
	if st.Termination.Type == terminationType && terminationType != "" {
		var s strategies.TerminationState
		if err := json.Unmarshal(st.Termination.State, &s); err != nil {
			return fmt.Errorf("strategies.termination.state: %w", err)
		}
	}
	return nil
}

// ImportPage is one page of an imported document. The first page (Offset 0) carries
// Header: the document without its history, and the repairs made on import.
type ImportPage struct {
	Header   *chatstate.Document `json:"header,omitempty"`
	Repairs  []string            `json:"repairs,omitempty"`
	Messages []chat.Message      `json:"messages"`
	Total    int                 `json:"total"`
	// Store names the message store holding the bodies of stub messages in this page.
	Store string `json:"store,omitempty"`
	// CallIDs holds the call ids of the stub messages in this page, which the
	// importing chat does not give a new call again.
	CallIDs CallIDFilter `json:"callIds,omitempty"`
	// Base, Pages, PagedIDs and PagedTurns answer a first call with Paging: messages
	// [0, Base) were written as Pages (in order), PagedIDs filters their message ids,
	// PagedTurns counts their answered turns; Messages begins at Base.
	Base       int          `json:"base,omitempty"`
	Pages      []PageRef    `json:"pages,omitempty"`
	PagedIDs   CallIDFilter `json:"pagedIds,omitempty"`
	PagedTurns int          `json:"pagedTurns,omitempty"`
}

// Snapshot answers the ExportSnapshot query: the chat's state at its last turn
// boundary, all of the document but its history, whose first HistoryLength messages
// belong with it. A turn in progress is not part of the boundary: its user message is
// the first of PendingTurns, and it is answered again where the document is imported.
type Snapshot struct {
	ChatID        string                  `json:"chatId"`
	Participants  []chatstate.Participant `json:"participants"`
	Channels      []chatstate.Channel     `json:"channels"`
	Strategies    chatstate.Strategies    `json:"strategies"`
	PendingTurns  []chat.Message          `json:"pendingTurns"`
	HistoryLength int                     `json:"historyLength"`
	// Stubbed reports that some of those messages are stubs, their bodies in the chat's
	// message store: an exporter that cannot read the store goes through the worker.
	Stubbed bool `json:"stubbed,omitempty"`
	// RunID is the run that answered: an exporter that asked the chat's latest run
	// reads the history from this one, and names it in the document's source.
	RunID string `json:"runId,omitempty"`
}

// ChatLocation names a chat anywhere: cluster (a name the worker knows; "" = the
// worker's own) or its address, namespace, chat id and, when known, run id.
type ChatLocation struct {
	Cluster   string `json:"cluster,omitempty"`
	Address   string `json:"address,omitempty"`
	Namespace string `json:"namespace"`
	ChatID    string `json:"chatId"`
	RunID     string `json:"runId,omitempty"`
}

// MigrateInput is the Migrate update's input. At least one of ToNamespace and
// ToCluster is set; ToChatID defaults to the chat's own id.
type MigrateInput struct {
	ToNamespace string `json:"toNamespace,omitempty"`
	ToCluster   string `json:"toCluster,omitempty"`
	// ToAddress names the target cluster by its frontend address instead; the worker
	// must have a cluster configured at that address.
	ToAddress string `json:"toAddress,omitempty"`
	ToChatID  string `json:"toChatId,omitempty"`
}

// MigrationResult is the Migrate update's answer: where the chat lives now and the
// digest of the document both sides agreed on.
type MigrationResult struct {
	Target       ChatLocation `json:"target"`
	Digest       string       `json:"digest"`
	MessageCount int          `json:"messageCount"`
}

// StartTargetInput is the StartMigrationTarget activity's input.
type StartTargetInput struct {
	Target         ChatLocation   `json:"target"`
	TaskQueue      string         `json:"taskQueue"`
	Input          AgentChatInput `json:"input"`
	ExpectedDigest string         `json:"expectedDigest"`
}

// StartTargetResult is the restored target's run id and state.
type StartTargetResult struct {
	RunID string      `json:"runId"`
	State StateResult `json:"state"`
}

// ForwardTurnsInput is the ForwardTurns activity's input.
type ForwardTurnsInput struct {
	Target ChatLocation       `json:"target"`
	Turns  []SendMessageInput `json:"turns"`
}

// AddParticipantsInput is the AddParticipants update's input.
type AddParticipantsInput struct {
	AgentIDs []string `json:"agentIds"`
}
