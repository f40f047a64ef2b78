package msgstore

import (
	"context"
	"time"

	"github.com/agentchat/agentchat/chat"
)

// Store keeps chat messages by (chatID, messageID). Safe for concurrent use.
type Store interface {
	// Put writes messages in one transaction. Idempotent: putting a message whose
	// (chatID, messageID) exists with an identical body is a no-op; a different body is
	// ErrConflict and nothing of the call is written (a retried activity must never
	// change what a chat said). An empty chatID or messageID is ErrInvalid.
	Put(ctx context.Context, chatID string, msgs []chat.Message) error
	// Get returns the messages with these ids, in the order given (an id given twice is
	// returned twice). A missing id is ErrNotFound, wrapped, naming the id.
	Get(ctx context.Context, chatID string, ids []string) ([]chat.Message, error)
	// Name is the store's kind: what a chat records as its store, and what a chat's
	// "store" option and a worker's map of stores key on. NameSQLite and NamePostgres
	// for the stores of this module; a store of your own picks another.
	Name() string
	// Close releases the store; later calls return ErrClosed. Closing twice is a no-op.
	Close() error
}

// Store names, as returned by Name.
const (
	NameSQLite   = "sqlite"
	NamePostgres = "postgres"
)

// OpTimeout bounds each Put or Get, on top of the caller's context: a store that does
// not answer within it is ErrUnavailable (WrapOp).
const OpTimeout = 30 * time.Second
