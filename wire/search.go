package wire

// Custom search attributes of an AgentChat, for listing chats through Temporal's
// visibility (ListWorkflowExecutions). A namespace has them once they are registered
// (the worker registers them at start when the server lets it; else `temporal operator
// search-attribute create`, README "Listing chats"). A chat started while they are
// registered carries them from its start, and its workflow updates them when they
// change: the status when it changes, the participants when they are added, the turn
// count and the last activity once a turn is done (one upsert event per turn). A chat
// started without them never sets them.
const (
	// SearchStatus is the chat's status (Status* constants), a Keyword.
	SearchStatus = "AgentChatStatus"
	// SearchAgents are the participants' agent ids, a KeywordList.
	SearchAgents = "AgentChatAgents"
	// SearchTurns is the number of user turns answered (StateResult.TurnCount), an Int.
	SearchTurns = "AgentChatTurns"
	// SearchLastActivity is when the chat last started, took a turn or changed status,
	// a Datetime (workflow time, UTC).
	SearchLastActivity = "AgentChatLastActivity"
)
