// Package msgstore keeps the bodies of chat messages outside Temporal's event history.
//
// An AgentChat whose store is external keeps only message ids in its workflow state;
// the bodies live in a Store, keyed by (chatID, messageID). This is the seed's custom
// ChatMessageStore, made durable (DESIGN.md, "Durability rules"). A Store does I/O, so
// it is called from activities (and by a client that exports), never from workflow
// code.
//
// This package is the contract only: the Store interface, its errors and the rules every
// implementation shares (helpers.go). It links no database driver, so the client package
// can take stores without linking one. The implementations live in subpackages:
//
//	msgstore/sqlite     one SQLite file, pure Go through modernc.org/sqlite
//	msgstore/postgres   PostgreSQL through github.com/jackc/pgx/v5, with a connection pool
//	msgstore/storeurl   opens either by URL (sqlite:///abs/path.db, postgres://...)
//
// and msgstore/msgstoretest is the conformance suite every implementation's tests run.
//
// A body is EncodeBody's JSON of the message: canonical (chatstate.EncodeMessage), or,
// for a content of a type chat does not know, encoding/json's without HTML escaping, so
// that content keeps its bytes. Put is idempotent: writing the same body again is a
// no-op, writing a different body under an existing id is ErrConflict, so a retried
// activity can never change what a chat said. Errors that mean the store could not be
// reached wrap ErrUnavailable; callers retry those.
//
// # History pages
//
// A PageStore (pages.go) also keeps a chat's older history in immutable pages, keyed
// by (chat, lineage, level, seq), with the message and call ids of each level-0 page
// so that an id is found without reading pages (docs/design/paged-history.md, section
// 4; the body forms in docs/chat-state-v1.md, "Message store pages"). The SQLite and
// PostgreSQL stores are PageStores, at schema version 2.
//
// # A store of your own
//
// Implement Store with a Name of its own, keep the rules with CheckPut, CheckGet,
// SameBody, Ordered and WrapOp (for PageStore: CheckPage, CheckPageKey, CheckLookup,
// CheckLineage, PageConflictError, IDConflictError and PageMissingError), and call
// msgstoretest.Run from its tests. Give it to the worker in
// activities.Config.Stores.MessageStores (and to clients that export in
// ClientOptions.MessageStores) under its Name; chats started with that name as their
// store keep their bodies there.
package msgstore
