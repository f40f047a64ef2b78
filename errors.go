package agentchat

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
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
	// ErrNoWorker: no worker polls the chat's task queue, so nothing would answer.
	ErrNoWorker = errors.New("no worker is polling the task queue")
	// ErrNoKeyRing: the chat's workers encrypt at rest (their answer is encrypted) and
	// this client has no key ring (ClientOptions.Keys, AGENTCHAT_KEYS). A chat this
	// client had just created, with its input in the clear, was deleted.
	ErrNoKeyRing = errors.New("the chat's workers encrypt at rest and this client has no key ring (set AGENTCHAT_KEYS)")
	// ErrKeyMismatch: this client and the chat's workers have different key rings
	// (ClientOptions.Keys, AGENTCHAT_KEYS): one of them cannot open what the other
	// sealed. The message names the key id and which side lacks it; a chat a start,
	// import or temporary thread had just created for it was deleted.
	ErrKeyMismatch = errors.New("the key rings of this client and the chat's workers differ")
	// ErrStoredMessages: the chat's older messages are in its worker's message store
	// (bodies or history pages) and this client cannot read them: give it the store
	// (ClientOptions.MessageStores, with ClientOptions.Keys when sealed). The error
	// names the first page or message it could not read.
	ErrStoredMessages = transfer.ErrStoredMessages
	// ErrChatMigrated: the chat has moved to another namespace or cluster; the error is a
	// *MigratedError that says where.
	ErrChatMigrated = errors.New("chat migrated")
)

// MigratedError says where a chat went. errors.Is(err, ErrChatMigrated) matches it.
type MigratedError struct {
	ChatID       string
	Target       wire.ChatLocation
	Digest       string
	MessageCount int
}

func (e *MigratedError) Error() string {
	where := fmt.Sprintf("namespace %q as chat %q", e.Target.Namespace, e.Target.ChatID)
	if e.Target.Cluster != "" {
		where = fmt.Sprintf("cluster %q, ", e.Target.Cluster) + where
	} else if e.Target.Address != "" {
		where = fmt.Sprintf("the cluster at %s, ", e.Target.Address) + where
	}
	return fmt.Sprintf("agentchat: chat %q has migrated to %s; use it there", e.ChatID, where)
}

// Is makes errors.Is(err, ErrChatMigrated) true.
func (e *MigratedError) Is(target error) bool { return target == ErrChatMigrated }

// Error is what the client returns when the chat itself refused or failed a call: a
// validator's refusal, a failed turn, an unknown agent. Error() is the chat's own
// message, prefixed with the operation; Type is one of the wire.ErrType* constants.
// It unwraps to the *temporal.ApplicationError, so errors.As finds either.
type Error struct {
	Op      string // "send to", "start", ...
	ChatID  string
	Type    string
	Message string
	cause   error
}

func (e *Error) Error() string {
	// The chat's message may name the chat itself (for clients that show it alone):
	// said once.
	msg := strings.TrimPrefix(e.Message, fmt.Sprintf("chat %q: ", e.ChatID))
	return fmt.Sprintf("agentchat: %s chat %q: %s", e.Op, e.ChatID, msg)
}

// Unwrap returns the Temporal application error.
func (e *Error) Unwrap() error { return e.cause }

// asChatError returns err as an *Error when it carries a Temporal application error
// from the chat, else nil.
func asChatError(op, chatID string, err error) *Error {
	var ce *Error
	if errors.As(err, &ce) {
		return ce // made already, maybe with what the call left (discardFailedStart)
	}
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		return nil
	}
	return &Error{Op: op, ChatID: chatID, Type: app.Type(), Message: app.Message(), cause: err}
}
