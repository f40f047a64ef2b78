package wire

// Application error types (temporal.ApplicationError.Type()) that the AgentChat
// workflow, its validators and the activities return; one list, so that workflow, activities
// and clients agree. Clients branch on these, never on message text.
const (
	// ErrTypeInvalidMessage: the validator refused the input (empty, oversize, no messageId).
	ErrTypeInvalidMessage = "InvalidMessage"
	// ErrTypeNotAcceptingTurns: the chat is complete, or a temporary thread already has its turn.
	ErrTypeNotAcceptingTurns = "NotAcceptingTurns"
	// ErrTypeUnknownAgent: a participant id is not in the worker's registry. From an
	// activity its details are UnknownAgentDetails, and the chat tries the queue's other
	// workers first; from the chat, it means no worker knows the agent.
	ErrTypeUnknownAgent = "UnknownAgent"
	// ErrTypeUnknownFunction: a Go function the call needs (a tool's, or a "function"
	// selection or termination strategy's) is not registered on the worker. From an
	// activity its details are UnknownAgentDetails (Kind says which kind of function),
	// and the chat tries the queue's other workers first; from the chat, it means no
	// worker has it.
	ErrTypeUnknownFunction = "UnknownFunction"
	// ErrTypeInvalidInput: the chat's input (strategies, participants) is malformed.
	ErrTypeInvalidInput = "InvalidInput"
	// ErrTypeTurnFailed: an agent could not reply; the turn left no messages in the
	// history and the chat takes further turns. The same messageId may be sent again.
	ErrTypeTurnFailed = "TurnFailed"
	// ErrTypeModelRejected: the provider refused the request (4xx other than 408/409/429);
	// not retried.
	ErrTypeModelRejected = "ModelRequestRejected"
	// ErrTypeModelUnavailable: the provider failed or was unreachable (408/409/429/5xx,
	// network); retried with backoff, honouring Retry-After.
	ErrTypeModelUnavailable = "ModelUnavailable"
	// ErrTypeInvalidDocument: a chat-state document failed validation (unknown schema
	// version, bad digest, malformed); the message names the field.
	ErrTypeInvalidDocument = "InvalidDocument"
	// ErrTypeNotEmpty: an import targeted a chat that already has history or turns, was
	// restored from a document already, or is importing one; the message says which, and
	// the chat is unharmed.
	ErrTypeNotEmpty = "ChatNotEmpty"
	// ErrTypeMigrating: the chat is moving to another namespace or cluster and takes no
	// turns until it has; retry, and the retry will name the new location.
	ErrTypeMigrating = "Migrating"
	// ErrTypeMigrated: the chat has moved; the message and details name where.
	ErrTypeMigrated = "Migrated"
	// ErrTypeTurnCancelled: the turn was cancelled while queued (CancelTurn) and never
	// ran; the same messageId may be sent again.
	ErrTypeTurnCancelled = "TurnCancelled"
	// ErrTypeMigrationFailed: a migration could not finish; the source chat took turns again.
	ErrTypeMigrationFailed = "MigrationFailed"
	// ErrTypeContinuingAsNew: the chat is handing over to a new run; retry at once and
	// the turn goes there. The Go client retries it by itself.
	ErrTypeContinuingAsNew = "ContinuingAsNew"
	// ErrTypeStoreUnavailable: the message store could not be reached. Activities retry
	// it; when a turn still fails for it, the caller gets this type: the turn left
	// nothing in the chat, so send it again (the same messageId) once the store is back.
	ErrTypeStoreUnavailable = "StoreUnavailable"
	// ErrTypeStoreConflict: the message store holds a message id with another body, and
	// never changes a body it holds. From a model call storing its reply (an earlier
	// attempt stored one under the same id): the turn fails, leaving nothing, and the
	// chat gives the id up, so the turn sent again gets another.
	ErrTypeStoreConflict = "StoreConflict"
	// ErrTypeStoreRefused: the chat takes no more turns because the message store
	// refused (not merely failed to reach) the bodies it had to take: what the chat would
	// carry to its next run passes CarryLimit without them, and Temporal terminates a run
	// whose continue-as-new input passes its payload limit. The message quotes the
	// store. The chat stays readable (State, History), exportable and migratable: move
	// it (Migrate, or Export and Import into a new chat) to go on. A retried turn still
	// gets its first answer.
	ErrTypeStoreRefused = "StoreRefused"
	// ErrTypeHistoryPageUnreadable: a page of the chat's older history
	// (docs/design/paged-history.md) is missing from its message store, or does not
	// match its index entry (its digest, or its chat, lineage, level, seq, first index
	// or number of messages). Not retried: the model call, export, migration or History
	// read that meets it fails, and no reader skips a page. The message names the chat,
	// the page (PageRef.String), its lineage and, for a digest, both digests.
	ErrTypeHistoryPageUnreadable = "HistoryPageUnreadable"
	// ErrTypeAwaitingApproval: the chat waits for a person to approve or reject a tool
	// call; it takes no new turn until then (signals are queued).
	ErrTypeAwaitingApproval = "AwaitingApproval"
	// ErrTypeUnknownCluster: a migration named a cluster the worker has no client for.
	ErrTypeUnknownCluster = "UnknownCluster"
	// ErrTypeQueueFull: the turns queued in the chat already hold
	// wire.QueuedTurnsLimit bytes; retry once they are answered. The Go client
	// retries it by itself.
	ErrTypeQueueFull = "QueueFull"
	// ErrTypeToolError: a tool failed in a way a retry cannot cure (activities.ToolError);
	// the model gets the call's error result.
	ErrTypeToolError = "ToolError"
	// ErrTypeToolUnavailable: an MCP tool's server could not be reached or went away
	// during the call. Retried by the tool's policy (the server is connected to, or a
	// stdio server started, again); after the last attempt the model gets the call's
	// error result.
	ErrTypeToolUnavailable = "ToolUnavailable"
	// ErrTypeThreadLost: the service no longer knows a service-thread channel's
	// conversation (404 for the Responses previous_response_id or the Assistants thread:
	// another project, or past its retention). Not retried as is: the workflow drops the
	// channel's state and sends the agent the primary history again, once per call.
	ErrTypeThreadLost = "ServiceThreadLost"
)

// Messages of the chat's refusals that clients act on by their words, as their type
// (InvalidInput, InvalidMessage) covers others too.
const (
	// NoTurnInFlight is the CancelTurn refusal when no turn runs and none is named: the
	// chat is idle, which a command that stops a turn may report as done.
	NoTurnInFlight = "no turn is in flight"
	// OverChatLimit begins the part of an InvalidMessage refusal that gives the chat's
	// own limit (maxMessageBytes), which a chat started with a larger one lifts.
	OverChatLimit = "this chat accepts at most"
)
