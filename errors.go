package agentchat

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
)

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

// Error is what the client returns when the chat itself refused or failed a call: a
// validator's refusal, a failed turn, an unknown agent. Error() is the chat's own
// message, prefixed with the operation; Type is one of the agents.ErrType* constants.
// It unwraps to the *temporal.ApplicationError, so errors.As finds either.
type Error struct {
	Op      string // "send to", "start", ...
	ChatID  string
	Type    string
	Message string
	cause   error
}

func (e *Error) Error() string {
	return fmt.Sprintf("agentchat: %s chat %q: %s", e.Op, e.ChatID, e.Message)
}

// Unwrap returns the Temporal application error.
func (e *Error) Unwrap() error { return e.cause }

// asChatError returns err as an *Error when it carries a Temporal application error
// from the chat, else nil.
func asChatError(op, chatID string, err error) *Error {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		return nil
	}
	return &Error{Op: op, ChatID: chatID, Type: app.Type(), Message: app.Message(), cause: err}
}
