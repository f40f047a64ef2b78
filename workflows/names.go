package workflows

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
	// StateQuery returns the chat's summary (no input → StateResult).
	StateQuery = "State"
	// HistoryQuery returns messages, paged (HistoryInput, optional → HistoryResult).
	HistoryQuery = "History"

	// ResolveParticipantsActivity looks agent ids up in the worker's registry
	// (agents.ResolveInput → agents.ResolveResult). Runs as a local activity.
	ResolveParticipantsActivity = "ResolveParticipants"
	// InvokeAgentActivity runs one agent reply (agents.InvokeInput → agents.InvokeResult).
	InvokeAgentActivity = "InvokeAgent"
)
