package wire

// Wire names of the AgentChat workflow: the contract with every Temporal client, in any
// language (DESIGN.md, "Wire contract"). Change none of them without a migration.
const (
	// WorkflowType is the registered name of the AgentChat workflow. Workflow id = chat id.
	WorkflowType = "AgentChat"
	// TaskQueue is the default task queue of workers and chats.
	TaskQueue = "agentchat"

	// SendMessageUpdate sends a user turn and returns the agents' replies
	// (SendMessageInput → TurnResult).
	SendMessageUpdate = "SendMessage"
	// DescribeUpdate waits until the chat has resolved its participants and returns its
	// State (no input → StateResult); it fails, naming them, when an agent id is unknown.
	// Clients use it to start a chat without a first message and learn that it is ready.
	DescribeUpdate = "Describe"
	// UserMessageSignal sends a user turn without waiting (SendMessageInput).
	UserMessageSignal = "UserMessage"
	// ReencryptSignal asks the chat to continue as new at its next turn boundary, so
	// that what it carries is encoded again, with the worker's current key (no
	// payload). A key rotation sends it to each chat.
	ReencryptSignal = "Reencrypt"
	// StateQuery returns the chat's summary (no input → StateResult).
	StateQuery = "State"
	// HistoryQuery returns messages, paged (HistoryInput, optional → HistoryResult).
	HistoryQuery = "History"

	// ExportUpdate writes the chat-state document to a sink (ExportInput → ExportResult).
	ExportUpdate = "Export"
	// ImportUpdate restores a document into this chat, which must be empty
	// (ImportInput → StateResult).
	ImportUpdate = "Import"
	// MigrateUpdate moves the chat to another namespace or cluster
	// (MigrateInput → MigrationResult).
	MigrateUpdate = "Migrate"
	// AddParticipantsUpdate adds agents to a running chat (AddParticipantsInput →
	// StateResult); an agent whose channel was kept from an import resumes it.
	AddParticipantsUpdate = "AddParticipants"
	// ApproveUpdate approves or rejects a tool call the chat waits for (ApproveInput →
	// TurnResult of the resumed turn).
	ApproveUpdate = "Approve"
	// CancelTurnUpdate stops a turn: the one in flight (its model call and tools are
	// cancelled, its partial reply kept marked incomplete), or a queued one, by its
	// messageId (CancelTurnInput → CancelTurnResult).
	CancelTurnUpdate = "CancelTurn"
	// SnapshotQuery returns everything of the document except the history, at the last
	// turn boundary (no input → Snapshot). The export activity pairs it with History.
	SnapshotQuery = "ExportSnapshot"

	// ResolveParticipantsActivity looks agent ids up in the worker's registry
	// (wire.ResolveInput → wire.ResolveResult). Runs as a local activity.
	ResolveParticipantsActivity = "ResolveParticipants"
	// InvokeAgentActivity runs one agent reply (wire.InvokeInput → wire.InvokeResult).
	InvokeAgentActivity = "InvokeAgent"
	// ExportChatActivity builds a chat's document from its queries and writes it to a
	// sink (ExportChatInput → ExportResult).
	ExportChatActivity = "ExportChat"
	// ImportChatActivity reads, validates and upgrades a document and returns it a page
	// at a time (ImportPageInput → ImportPage).
	ImportChatActivity = "ImportChat"
	// StartTargetActivity starts (or finds) the restored chat of a migration and checks
	// its digest (StartTargetInput → StartTargetResult).
	StartTargetActivity = "StartMigrationTarget"
	// StoreMessagesActivity puts message bodies into a message store
	// (wire.StoreMessagesInput → wire.StoreMessagesResult).
	StoreMessagesActivity = "StoreMessages"
	// WritePagesActivity writes older messages of a chat's history as pages of its
	// message store (wire.WritePagesInput → wire.WritePagesResult).
	WritePagesActivity = "WritePages"
	// LookupIDsActivity finds message ids in a chat's pages, run as a local activity
	// (wire.LookupIDsInput → wire.LookupIDsResult).
	LookupIDsActivity = "LookupIDs"
	// DeleteLineageActivity removes the pages an import wrote before it failed
	// (wire.DeleteLineageInput → nothing).
	DeleteLineageActivity = "DeleteLineage"
	// ReadTurnActivity reads a paged turn for a retry of it, run as a local activity
	// (wire.ReadTurnInput → wire.ReadTurnResult).
	ReadTurnActivity = "ReadTurn"
	// SelectActivity asks a selector agent or function who speaks next
	// (wire.SelectInput → wire.SelectResult).
	SelectActivity = "SelectSpeaker"
	// JudgeActivity asks a judge agent or function whether the chat is done
	// (wire.JudgeInput → wire.JudgeResult).
	JudgeActivity = "JudgeTermination"
	// SummarizeActivity writes a summarizing reducer's summary
	// (wire.SummarizeInput → wire.SummarizeResult).
	SummarizeActivity = "Summarize"
	// CallToolActivity runs one tool call (wire.CallToolInput → wire.CallToolResult).
	CallToolActivity = "CallTool"
	// ForwardTurnsActivity signals turns that arrived during a migration to the target
	// (ForwardTurnsInput → nothing).
	ForwardTurnsActivity = "ForwardTurns"
)

// MigrationMemo is the memo field a migration sets on the target chat it starts: the
// digest of the document the target is to restore. It tells a target this migration
// started (and may end again) from a chat that held the id before.
const MigrationMemo = "migrationDigest"
