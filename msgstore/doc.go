// Package msgstore keeps the bodies of chat messages outside Temporal's event history.
//
// An AgentChat whose store is external keeps only message ids in its workflow state;
// the bodies live in a Store, keyed by (chatID, messageID). This is the seed's custom
// ChatMessageStore, made durable (DESIGN.md, "Durability rules"). Everything here does
// I/O, so it is called from activities, never from workflow code.
//
// Two stores exist: SQLite (embedded, one file, pure Go through modernc.org/sqlite) and
// PostgreSQL (github.com/jackc/pgx/v5 with a connection pool). Open picks one by URL:
//
//	sqlite:///abs/path/messages.db   sqlite:relative/path.db
//	postgres://user@host:5432/db     postgresql://...
//
// A body is the JSON of chat.Message as encoding/json writes it, without HTML escaping,
// so a content of an unknown type keeps its bytes. Put is idempotent: writing the same
// body again is a no-op, writing a different body under an existing id is ErrConflict,
// so a retried activity can never change what a chat said. Errors that mean the store
// could not be reached wrap ErrUnavailable; callers retry those.
package msgstore
