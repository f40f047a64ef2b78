package agentchat

import "errors"

// Errors of the client, to test with errors.Is. Errors from the chat itself (a refused
// message, a failed turn, an unknown agent) are *temporal.ApplicationError values whose
// Type() is one of the agents.ErrType* constants; errors.As finds them through the
// client's wrapping.
var (
	// ErrChatNotFound: no chat with that id in the client's namespace.
	ErrChatNotFound = errors.New("chat not found")
	// ErrChatExists: Start was given the id of a chat that is already running.
	ErrChatExists = errors.New("chat already exists")
	// ErrChatClosed: the chat's workflow has finished (complete, or a temporary thread
	// after its turn) and takes no more turns; State and History still answer.
	ErrChatClosed = errors.New("chat is closed")
	// ErrInvalidOptions: the call's options cannot work (no participants, bad strategy).
	ErrInvalidOptions = errors.New("invalid options")
)
