package wire

import (
	"encoding/json"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
)

// InputVersion is the version of AgentChatInput this code writes. Readers accept every
// version up to it.
const InputVersion = 1

// AgentChatInput starts a chat. JSON:
//
//	{"version":1,"participants":["writer","reviewer"],
//	 "selection":{"type":"sequential"},
//	 "termination":{"type":"regex","pattern":"APPROVED","agents":["reviewer"],"maxIterations":6},
//	 "temporary":false,"maxMessageBytes":262144}
type AgentChatInput struct {
	Version int `json:"version,omitempty"`
	// Participants are agent ids of the worker's registry, in speaking order.
	Participants []string                       `json:"participants"`
	Selection    strategies.SelectionStrategy   `json:"selection,omitzero"`
	Termination  strategies.TerminationStrategy `json:"termination,omitzero"`
	// Temporary makes a one-turn chat (the seed's temporary thread): the workflow
	// completes after its first turn.
	Temporary bool `json:"temporary,omitempty"`
	// MaxMessageBytes caps one user message, in encoded bytes (MessageBytes); zero means
	// DefaultMaxMessageBytes, and more than MaxMessageBytesLimit is refused.
	MaxMessageBytes int `json:"maxMessageBytes,omitempty"`
	// Restore, if set, fills the new chat from a chat-state document before it takes
	// turns (DESIGN.md restore rules).
	Restore *DocumentSource `json:"restore,omitempty"`
	// Store names the message store for the bodies of older messages: "" keeps them in
	// the workflow while they fit and moves them to the worker's default store when
	// they would not; "sqlite" or "postgres" (a store configured on the worker) moves
	// them there at every continue-as-new.
	Store string `json:"store,omitempty"`
	// HistoryBudget bounds one run's event history; past it the chat continues as new.
	HistoryBudget HistoryBudget `json:"historyBudget,omitzero"`
	// History tunes the window and page sizes of the chat's paged history (nil: the
	// defaults, WindowMessages and PageMessages).
	History *HistoryWindow `json:"history,omitempty"`
	// Carry is the state a previous run handed over at continue-as-new; set by the
	// workflow itself, never by clients.
	Carry *Carried `json:"carry,omitempty"`
}

// HistoryBudget bounds one run: zero fields mean the defaults (4,000 events, 4 MiB),
// well under Temporal's warnings at 10,240 events and 10 MB. The chat also continues
// as new whenever Temporal suggests it.
type HistoryBudget struct {
	MaxEvents int `json:"maxEvents,omitempty"`
	MaxBytes  int `json:"maxBytes,omitempty"`
}

// Defaults of HistoryBudget.
const (
	// DefaultMaxEvents is HistoryBudget.MaxEvents when zero: events of one run.
	DefaultMaxEvents = 4000
	// DefaultMaxHistoryBytes is HistoryBudget.MaxBytes when zero: bytes of one run's
	// event history (4 MiB).
	DefaultMaxHistoryBytes = 4 << 20
)

// Effective returns the events and bytes b allows one run, with the defaults for zero
// (or negative) fields.
func (b HistoryBudget) Effective() (events, bytes int) {
	events, bytes = DefaultMaxEvents, DefaultMaxHistoryBytes
	if b.MaxEvents > 0 {
		events = b.MaxEvents
	}
	if b.MaxBytes > 0 {
		bytes = b.MaxBytes
	}
	return events, bytes
}

// AgentChatResult is what a finished chat workflow returns.
type AgentChatResult struct {
	Status       string `json:"status"`
	IsComplete   bool   `json:"isComplete"`
	MessageCount int    `json:"messageCount"`
	TurnCount    int    `json:"turnCount"`
	// Migration says where the chat went, when Status is "migrated".
	Migration *MigrationResult `json:"migration,omitempty"`
}

// SendMessageInput is one user turn, for the SendMessage update and the UserMessage
// signal. JSON: {"messageId":"m-1","text":"Hello","authorName":"Alice"}, or with
// "contents":[{"type":"text","text":"Hello"}] instead of "text" (not both).
//
// MessageID is chosen by the client and makes the turn idempotent: a SendMessage with
// a messageId the chat has already answered returns that first answer and calls no
// model. It must be unique within the chat: one that is already the id of another
// message of the chat (a reply "<turn>/<n>", a tool result, an imported message) is
// refused with ErrTypeInvalidMessage, naming the id and what holds it. Replies skip an
// "<turn>/<n>" that a user turn took, so the order of the turns does not matter.
type SendMessageInput struct {
	MessageID  string         `json:"messageId"`
	Text       string         `json:"text,omitempty"`
	Contents   []chat.Content `json:"contents,omitempty"`
	AuthorName string         `json:"authorName,omitempty"`
}

// TurnResult is the answer to a turn: the agent messages it produced, in order.
// JSON: {"messageId":"m-1","messages":[…],"isComplete":false}.
type TurnResult struct {
	MessageID string         `json:"messageId"`
	Messages  []chat.Message `json:"messages"`
	// IsComplete is true when the termination strategy completed the chat on this turn.
	IsComplete bool `json:"isComplete"`
	// AwaitingApproval lists the tool calls the turn waits for: it resumes when a
	// person approves or rejects each (the Approve update).
	AwaitingApproval []PendingApproval `json:"awaitingApproval,omitempty"`
	// Cancelled: the turn was stopped (CancelTurn) while it ran; Messages are what it
	// had produced, the last reply marked incomplete.
	Cancelled bool `json:"cancelled,omitempty"`
	// Replayed: the turn's messageId was answered before (a retry); this is that first
	// answer, and no model was called again.
	Replayed bool `json:"replayed,omitempty"`
	// AlreadyDecided is set on the answer to an Approve that repeated the decision its
	// call had already: nothing changed, and this is that earlier decision (By and
	// Reason as given then; once the call has its result, Reason is read from a
	// rejection's result and By is empty). Messages are what the call's turn did from
	// the call's result on (none while that decision waits to be applied).
	AlreadyDecided *Decision `json:"alreadyDecided,omitempty"`
}

// CancelTurnInput names the turn to stop: MessageID "" is the turn in flight; a queued
// turn's messageId takes it out of the queue. DropPartial drops the partial reply of
// the stopped agent instead of keeping it (marked incomplete).
type CancelTurnInput struct {
	MessageID   string `json:"messageId,omitempty"`
	DropPartial bool   `json:"dropPartial,omitempty"`
}

// CancelTurnResult says which turn was stopped: Queued when it had not begun (it left
// nothing in the chat), else it was in flight and ended with what it had produced.
type CancelTurnResult struct {
	MessageID string `json:"messageId"`
	Queued    bool   `json:"queued,omitempty"`
}

// Chat statuses, in StateResult.Status.
const (
	StatusStarting  = "starting"  // resolving participants
	StatusRunning   = "running"   // taking turns
	StatusCompleted = "completed" // complete (termination) or a temporary thread's turn done
	StatusFailed    = "failed"    // could not start (unknown agent, bad input)
	StatusMigrating = "migrating" // moving to another namespace or cluster; takes no turns
	StatusMigrated  = "migrated"  // moved: MigratedTo names where
)

// ParticipantInfo is a participant as State reports it and the document stores it.
type ParticipantInfo struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type Kind   `json:"type"`
}

// TurnError describes a failed turn (State's lastError, the details of a failed turn's
// error, a turnFailed event): Type and Message are the cause's (ModelRequestRejected,
// StoreUnavailable, ...).
//
// Kept says the chat keeps the turn's message and the results of its tool calls that
// ran (a turn resumed after an approval, which fails after the approved calls ran): the
// same messageId is not run again, and a new message goes on. Without it the turn was
// taken back whole and may be sent again with its messageId.
type TurnError struct {
	MessageID string `json:"messageId"`
	AgentID   string `json:"agentId,omitempty"`
	Type      string `json:"type"`
	Message   string `json:"message"`
	Kept      bool   `json:"kept,omitempty"`
}

// StateResult is the State query's answer. JSON:
//
//	{"chatId":"c1","status":"running","participants":[{"id":"helper","name":"Helper","type":"chat_completion"}],
//	 "messageCount":4,"turnCount":2,"isComplete":false,"lastMessage":{…},
//	 "pendingTurns":["m-3"],"activeTurn":"m-2","lastError":{…},
//	 "selection":{"type":"sequential","state":{"nextIndex":0}},
//	 "termination":{"type":"maxIterations","state":{"iterations":1}}}
type StateResult struct {
	ChatID       string            `json:"chatId"`
	Status       string            `json:"status"`
	Temporary    bool              `json:"temporary,omitempty"`
	Participants []ParticipantInfo `json:"participants"`
	MessageCount int               `json:"messageCount"`
	// PagedMessages are the oldest messages kept in pages of the message store, not in
	// the workflow (README, "Chats of any length"); zero before the first page.
	PagedMessages int `json:"pagedMessages,omitempty"`
	// History is the chat's window, page size and index fanout in effect: its
	// AgentChatInput.History with the defaults (WindowMessages, PageMessages,
	// IndexFanout) for zero fields. Nil from a worker before this field.
	History *HistoryWindow `json:"history,omitempty"`
	// HistoryBudget is the budget of one run in effect: AgentChatInput.HistoryBudget
	// with the defaults (DefaultMaxEvents, DefaultMaxHistoryBytes) for zero fields. Nil
	// from a worker before this field.
	HistoryBudget *HistoryBudget `json:"historyBudget,omitempty"`
	TurnCount     int            `json:"turnCount"`
	IsComplete    bool           `json:"isComplete"`
	LastMessage   *chat.Message  `json:"lastMessage,omitempty"`
	// PendingTurns are the messageIds queued behind the active turn, in order.
	PendingTurns []string `json:"pendingTurns"`
	// ActiveTurn is the messageId being answered now, if any.
	ActiveTurn string `json:"activeTurn,omitempty"`
	// LastError is the most recent failed turn, refused signal or abandoned migration
	// (type MigrationFailed), if any, until a turn begun after it is answered: then it
	// is cleared (nil), the trouble it reported being past.
	LastError   *TurnError    `json:"lastError,omitempty"`
	Selection   StrategyState `json:"selection"`
	Termination StrategyState `json:"termination"`
	Failure     string        `json:"failure,omitempty"` // why a chat with status "failed" could not start
	// Channels are the chat's channels; Active is false for a channel kept from an
	// import whose agent is not a participant (it resumes when that agent joins).
	Channels []ChannelInfo `json:"channels,omitempty"`
	// RestoredDigest is the digest of the document this chat was restored from.
	RestoredDigest string `json:"restoredDigest,omitempty"`
	// Repairs lists what the import repaired in that document.
	Repairs []string `json:"repairs,omitempty"`
	// Migration is the migration under way, if any; its phase is "draining",
	// "exporting", "starting target" or "forwarding".
	Migration *MigrationState `json:"migration,omitempty"`
	// MigratedTo names where the chat went, when Status is "migrated".
	MigratedTo *ChatLocation `json:"migratedTo,omitempty"`
	// Store is where older message bodies are ("" = all in the workflow).
	Store string `json:"store,omitempty"`
	// PendingApprovals are the tool calls the chat waits for a person to decide.
	PendingApprovals []PendingApproval `json:"pendingApprovals,omitempty"`
	// MaxMessageBytes is the largest user message the chat takes, in encoded bytes
	// (AgentChatInput.MaxMessageBytes, or DefaultMaxMessageBytes).
	MaxMessageBytes int `json:"maxMessageBytes,omitempty"`
	// Runs is how many times the chat has continued as new.
	Runs int `json:"runs,omitempty"`
	// Usage is what the chat's agent replies have cost so far (UsageTotal, without an
	// agentId); nil before the first reply that reported usage.
	Usage *UsageTotal `json:"usage,omitempty"`
	// UsageByAgent splits Usage by agent, in the order the agents first replied.
	UsageByAgent []UsageTotal `json:"usageByAgent,omitempty"`
}

// ChannelInfo is one channel as State reports it.
type ChannelInfo struct {
	ChannelKey  string `json:"channelKey"`
	ChannelType string `json:"channelType"`
	Active      bool   `json:"active"`
	// ChannelState is the channel's state now: a service thread's id and watermark, a
	// summarizing reducer's summary.
	ChannelState json.RawMessage `json:"channelState,omitempty"`
}

// MigrationState is a migration in progress.
type MigrationState struct {
	Target ChatLocation `json:"target"`
	Phase  string       `json:"phase"`
}

// StrategyState is a strategy's type and state, as in the document:
// {"type":"sequential","state":{"nextIndex":1}}.
type StrategyState struct {
	Type  string `json:"type"`
	State any    `json:"state"`
}

// HistoryInput pages the History query: Offset messages are skipped, then at most
// Limit returned; Limit zero means as many as fit. A page ends once its messages pass
// HistoryPageBytes encoded (or MaxBytes, when smaller), after at least one message, so
// that no answer passes Temporal's payload limit: read on from Offset+len(Messages)
// while that is below Total (Client.History does).
type HistoryInput struct {
	Offset int `json:"offset,omitempty"`
	Limit  int `json:"limit,omitempty"`
	// MaxBytes, if set, ends the page once its messages pass this many encoded bytes.
	MaxBytes int `json:"maxBytes,omitempty"`
}

// HistoryResult is a page of the primary history, oldest first; Total is the number of
// messages in the whole history.
type HistoryResult struct {
	Messages []chat.Message `json:"messages"`
	Offset   int            `json:"offset"`
	Total    int            `json:"total"`
	// Store names the message store that holds the bodies of messages returned
	// without contents (stubs: id, role, author and time only); "" when there are none.
	Store string `json:"store,omitempty"`
	// Pages are the references of the pages that hold messages [Offset, …) when they
	// are below the workflow's window (docs/design/paged-history.md): Messages is then
	// empty, and the reader reads the pages from Store (transfer.ReadPages), checking
	// each against its digest. At most HistoryAnswerPages.
	Pages []PageRef `json:"pages,omitempty"`
}
