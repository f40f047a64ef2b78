package msgstore

import "errors"

// Errors returned by the stores; test with errors.Is. Returned errors wrap these with
// the store, the chat and the message id they concern.
var (
	// ErrNotFound: Get was asked for a message id the chat does not have.
	ErrNotFound = errors.New("message not found")
	// ErrConflict: Put was given a message whose id the chat already holds with another
	// body, or PutPage a page whose key holds other bytes or an id its lineage holds at
	// another index. Nothing of that call was written.
	ErrConflict = errors.New("message id already stored with a different body")
	// ErrUnavailable: the store could not be reached (connection refused or lost, the
	// server shutting down, the database locked past the busy timeout, an operation past
	// its time limit). The call may be retried.
	ErrUnavailable = errors.New("message store unavailable")
	// ErrClosed: the Store was used after Close.
	ErrClosed = errors.New("message store is closed")
	// ErrInvalid: the call itself is wrong (empty chat id or message id, a body that
	// cannot be encoded, an unsupported URL); retrying cannot help.
	ErrInvalid = errors.New("invalid message store request")
	// ErrEncrypted: the stored body is sealed (encrypted at rest, package Sealed's
	// binary form) and the store was read without the key ring; the error names the
	// key id. Read it through Sealed with the ring (ClientOptions.Keys, AGENTCHAT_KEYS).
	ErrEncrypted = errors.New("message body is encrypted at rest: read the store with its key ring (AGENTCHAT_KEYS)")
	// ErrNoStore: a reader was pointed at a store that does not exist (an SQLite path
	// with no file, or a file without the store's tables: sqlite.OpenExisting). Readers
	// never create a store; the error names the path.
	ErrNoStore = errors.New("message store does not exist")
	// ErrSchema: the database holds a schema version newer than this build knows.
	ErrSchema = errors.New("message store schema version not supported")
	// ErrPageMissing: GetPage was asked for a history page the chat does not have
	// (PageStore); the error names the chat, lineage, level and seq.
	ErrPageMissing = errors.New("history page missing from the message store")
	// ErrPageMismatch: a history page read does not match its index entry (its digest,
	// seq, level, first index or number of messages differ); the error names the chat,
	// lineage, level and seq, and what differs. Readers of pages return it.
	ErrPageMismatch = errors.New("history page does not match its index")
)
