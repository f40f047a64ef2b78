// Package sqlite is the msgstore.Store in one SQLite file, through the pure-Go driver
// modernc.org/sqlite (no cgo). Open it with Open, or by URL (sqlite:///abs/path.db,
// sqlite:relative/path.db) through msgstore/storeurl.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	driver "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
)

// BusyTimeout is how long a write waits for another connection or process that
// holds the database's write lock; past it the write is msgstore.ErrUnavailable.
const BusyTimeout = 5 * time.Second

// PageSize is the page size, in bytes, of a file Open creates (PRAGMA page_size;
// SQLite's default is 4096). The store's rows are mostly large (page bodies of up to
// wire.PageBytes, 512 KiB; message bodies of up to 1 MiB), and SQLite writes a row
// over a page's room as a chain of overflow pages, each one frame of the write-ahead
// log and one write: 32 KiB pages write an import's pages in an eighth of the frames,
// and in three quarters of the time. A file created with another page size keeps it
// (WAL mode fixes it; a VACUUM in rollback mode would change it).
const PageSize = 32 << 10

// SchemaVersion is the version of the table layout this build writes and reads,
// recorded in PRAGMA user_version: 1 is table chat_messages, 2 adds the history pages
// (tables chat_pages and chat_message_ids). Open migrates an older file.
const SchemaVersion = 2

// sqliteChunk is how many ids one SELECT ... IN (...) binds, well under SQLite's
// variable limit (32766 in modernc.org/sqlite, 999 in old builds).
const sqliteChunk = 500

// sqliteInsertRows is how many rows one INSERT of Put writes (4 parameters each, far
// below SQLite's 32,766).
const sqliteInsertRows = 200

const sqliteSchemaV1 = `CREATE TABLE IF NOT EXISTS chat_messages (
	chat_id    TEXT    NOT NULL,
	message_id TEXT    NOT NULL,
	body       BLOB    NOT NULL, -- the JSON of chat.Message, as msgstore.EncodeBody writes it
	created_at INTEGER NOT NULL, -- when first stored, Unix milliseconds
	PRIMARY KEY (chat_id, message_id)
)`

// sqliteSchemaV2 are the tables version 2 adds: the history pages (msgstore.PageStore).
var sqliteSchemaV2 = []string{`CREATE TABLE IF NOT EXISTS chat_pages (
	chat_id     TEXT    NOT NULL,
	lineage     TEXT    NOT NULL,
	level       INTEGER NOT NULL, -- 0: messages; n: index entries of level n-1 pages
	seq         INTEGER NOT NULL, -- 0, 1, 2... within (chat_id, lineage, level)
	first_index INTEGER NOT NULL, -- absolute index of the first message covered
	count       INTEGER NOT NULL, -- messages covered
	body        BLOB    NOT NULL, -- the page's body (docs/chat-state-v1.md, "Message store pages")
	created_at  INTEGER NOT NULL, -- when first stored, Unix milliseconds
	PRIMARY KEY (chat_id, lineage, level, seq)
)`, `CREATE TABLE IF NOT EXISTS chat_message_ids (
	chat_id TEXT    NOT NULL,
	lineage TEXT    NOT NULL,
	kind    TEXT    NOT NULL, -- 'm' message id, 'c' call id
	id      TEXT    NOT NULL,
	idx     INTEGER NOT NULL, -- absolute index of the message holding it
	seq     INTEGER NOT NULL, -- seq of the level-0 page holding that message
	role    TEXT    NOT NULL, -- that message's role
	PRIMARY KEY (chat_id, lineage, kind, id)
)`}

// Store is a msgstore.Store, RowStore and PageBatchStore in one SQLite file (WAL mode). Several Store values, in one
// process or several, may share a file: writes are serialized by SQLite's lock, waiting
// up to BusyTimeout.
type Store struct {
	db      *sql.DB
	path    string
	writeMu sync.Mutex // one writer per value, so its goroutines do not contend in SQLite's busy loop
	closed  atomic.Bool
}

var _ msgstore.PageBatchStore = (*Store)(nil)
var _ msgstore.RowStore = (*Store)(nil)

// Open opens the SQLite store at path, creating its folder and file if missing, and
// creates or checks its tables (schema version in PRAGMA user_version; an older file
// is brought to SchemaVersion in one transaction, after which builds that know only
// the older version refuse it with msgstore.ErrSchema). An empty path is
// msgstore.ErrInvalid; a file whose schema version is newer than SchemaVersion is
// msgstore.ErrSchema; a file locked past BusyTimeout is msgstore.ErrUnavailable.
func Open(path string) (*Store, error) {
	return open(path, true)
}

// OpenExisting opens the SQLite store at path for a reader: it creates no folder,
// file or table. A path where no file is is msgstore.ErrNoStore, whose message names
// the absolute path, and a file without the store's tables (schema version 0, such
// as an empty file) is msgstore.ErrNoStore too; otherwise it is Open (a version 1
// file is brought to SchemaVersion, a newer one is msgstore.ErrSchema).
func OpenExisting(path string) (*Store, error) {
	return open(path, false)
}

// open is Open, and with create false OpenExisting.
func open(path string, create bool) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("msgstore: open sqlite: %w: empty path", msgstore.ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("msgstore: open sqlite %q: %w", path, err)
	}
	if create {
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return nil, fmt.Errorf("msgstore: open sqlite %q: %w", abs, err)
		}
	} else if err := checkExisting(abs); err != nil {
		return nil, err
	}
	q := url.Values{}
	if !create {
		q.Set("mode", "rw") // never create the file, even if it goes away meanwhile
	}
	q.Set("_busy_timeout", strconv.FormatInt(BusyTimeout.Milliseconds(), 10))
	q.Set("_synchronous", "FULL") // a Put that returned survives a power cut
	q.Set("_txlock", "immediate") // take the write lock at BEGIN, so the busy timeout applies
	// WAL and the page size stay in the file: a store that Open wrote has them, and a
	// reader sets nothing that would write to a file that is not a store.
	if create {
		q.Set("_journal_mode", "WAL")
		q.Add("_pragma", "page_size("+strconv.Itoa(PageSize)+")") // a new file's; an older file keeps its own
	}
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("msgstore: open sqlite %q: %w", abs, err)
	}
	s := &Store{db: db, path: abs}
	ctx, cancel := context.WithTimeout(context.Background(), msgstore.OpTimeout)
	defer cancel()
	if err := s.migrate(ctx, create); err != nil {
		_ = db.Close()
		if errors.Is(err, msgstore.ErrNoStore) {
			return nil, fmt.Errorf("msgstore: open sqlite %q: %w", abs, err)
		}
		return nil, msgstore.WrapOp(context.Background(), ctx, "open sqlite "+strconv.Quote(abs), err, sqliteUnavailable)
	}
	return s, nil
}

// checkExisting returns nil when abs is a file that may hold a store (not empty), and
// otherwise an error wrapping msgstore.ErrNoStore that names abs.
func checkExisting(abs string) error {
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("msgstore: open sqlite: %w: the store file %s does not exist (reading never creates one: name the file the worker writes)", msgstore.ErrNoStore, abs)
	case err != nil:
		return fmt.Errorf("msgstore: open sqlite %q: %w", abs, err)
	case fi.IsDir():
		return fmt.Errorf("msgstore: open sqlite %q: %w: it is a folder, not a store file", abs, msgstore.ErrNoStore)
	case fi.Size() == 0:
		return fmt.Errorf("msgstore: open sqlite %q: %w: the file is empty, it holds no message store", abs, msgstore.ErrNoStore)
	}
	return nil
}

// inTx runs f in a transaction, committed when f returns nil and rolled back otherwise.
func (s *Store) inTx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// migrate brings the file to SchemaVersion in one transaction: a new file gets every
// table (with create; without it, a file of version 0 is msgstore.ErrNoStore), a
// version 1 file the tables of version 2.
func (s *Store) migrate(ctx context.Context, create bool) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var version int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
			return err
		}
		var steps []string
		switch {
		case version > SchemaVersion:
			return fmt.Errorf("%w: file has version %d, this build knows up to %d", msgstore.ErrSchema, version, SchemaVersion)
		case version == SchemaVersion:
			return nil
		case version < 1 && !create:
			return fmt.Errorf("%w: the file holds no message store (schema version 0: no tables; a reader never creates them)", msgstore.ErrNoStore)
		case version < 1:
			steps = append(steps, sqliteSchemaV1)
		}
		steps = append(steps, sqliteSchemaV2...)
		steps = append(steps, "PRAGMA user_version = "+strconv.Itoa(SchemaVersion))
		for _, q := range steps {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}

// Name returns "sqlite".
func (s *Store) Name() string { return msgstore.NameSQLite }

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database. Later calls return msgstore.ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("msgstore: close sqlite %q: %w", s.path, err)
	}
	return nil
}

// Put writes msgs under chatID in one transaction; see msgstore.Store.
func (s *Store) Put(ctx context.Context, chatID string, msgs []chat.Message) error {
	if s.closed.Load() {
		return fmt.Errorf("msgstore: sqlite put: %w", msgstore.ErrClosed)
	}
	rows, err := msgstore.CheckPut(msgstore.NameSQLite, chatID, msgs)
	if err != nil || len(rows) == 0 {
		return err
	}
	return s.putChecked(ctx, chatID, rows)
}

// putChecked writes checked rows under chatID in one transaction, one writer at a time.
func (s *Store) putChecked(ctx context.Context, chatID string, rows []msgstore.Row) error {
	opCtx, cancel := context.WithTimeout(ctx, msgstore.OpTimeout)
	defer cancel()
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.inTx(opCtx, func(tx *sql.Tx) error { return putRows(opCtx, tx, chatID, rows) }); err != nil {
		return msgstore.WrapOp(ctx, opCtx, "sqlite put chat "+strconv.Quote(chatID), err, sqliteUnavailable)
	}
	return nil
}

// putRows writes rows under chatID in tx.
func putRows(ctx context.Context, tx *sql.Tx, chatID string, rows []msgstore.Row) error {
	// Insert what is new, many rows a statement; a message already stored must have the
	// same body, which is checked for those rows only (usually none) after the inserts.
	now := time.Now().UnixMilli()
	var stored []msgstore.Row
	for part := range slices.Chunk(rows, sqliteInsertRows) {
		old, err := insertRows(ctx, tx, chatID, part, now)
		if err != nil {
			return err
		}
		stored = append(stored, old...)
	}
	if len(stored) == 0 {
		return nil
	}
	ids := make([]string, len(stored))
	for i, r := range stored {
		ids[i] = r.ID
	}
	existing, err := sqliteBodies(ctx, tx, chatID, ids)
	if err != nil {
		return err
	}
	for _, r := range stored {
		if !msgstore.SameBody(existing[r.ID], r.Body) {
			return msgstore.ConflictError(msgstore.NameSQLite, chatID, r.ID)
		}
	}
	return nil
}

// insertRows inserts the rows of part that chatID does not hold yet, created at now
// (Unix milliseconds), in one statement, and returns the others, already stored.
func insertRows(ctx context.Context, tx *sql.Tx, chatID string, part []msgstore.Row, now int64) ([]msgstore.Row, error) {
	args := make([]any, 0, 4*len(part))
	for _, r := range part {
		args = append(args, chatID, r.ID, r.Body, now)
	}
	q := "INSERT OR IGNORE INTO chat_messages (chat_id, message_id, body, created_at) VALUES (?, ?, ?, ?)" +
		strings.Repeat(", (?, ?, ?, ?)", len(part)-1) + " RETURNING message_id"
	res, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	inserted := make(map[string]bool, len(part))
	for res.Next() {
		var id string
		if err := res.Scan(&id); err != nil {
			return nil, err
		}
		inserted[id] = true
	}
	if err := res.Err(); err != nil {
		return nil, err
	}
	var stored []msgstore.Row
	for _, r := range part {
		if !inserted[r.ID] {
			stored = append(stored, r)
		}
	}
	return stored, nil
}

// Get returns the messages of chatID with these ids, in order; see msgstore.Store.
func (s *Store) Get(ctx context.Context, chatID string, ids []string) ([]chat.Message, error) {
	found, err := s.GetRows(ctx, chatID, ids)
	if err != nil {
		return nil, err
	}
	return msgstore.Ordered(msgstore.NameSQLite, chatID, ids, found)
}

type sqlQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// sqliteBodies returns the stored bodies of those ids that chatID has, in chunks of
// sqliteChunk ids per query.
func sqliteBodies(ctx context.Context, q sqlQuerier, chatID string, ids []string) (map[string][]byte, error) {
	found := make(map[string][]byte, len(ids))
	for part := range slices.Chunk(ids, sqliteChunk) {
		if err := readBodies(ctx, q, chatID, part, found); err != nil {
			return found, err
		}
	}
	return found, nil
}

// readBodies adds to found the stored bodies of those ids of part that chatID has, with
// one query.
func readBodies(ctx context.Context, q sqlQuerier, chatID string, part []string, found map[string][]byte) error {
	args := make([]any, 0, len(part)+1)
	args = append(args, chatID)
	for _, id := range part {
		args = append(args, id)
	}
	query := "SELECT message_id, body FROM chat_messages WHERE chat_id = ? AND message_id IN (?" +
		strings.Repeat(", ?", len(part)-1) + ")"
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var body []byte
		if err := rows.Scan(&id, &body); err != nil {
			return err
		}
		found[id] = body
	}
	return rows.Err()
}

// sqliteUnavailable reports whether err is SQLite saying "not now": busy or locked
// past the busy timeout, or a WAL lock race (SQLITE_PROTOCOL).
func sqliteUnavailable(err error) bool {
	var e *driver.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_PROTOCOL:
		return true
	}
	return false
}

// PutRows is Put of bodies already encoded (msgstore.RowStore): the same checks of the
// ids, one transaction, idempotent, ErrConflict for an id stored with another body.
func (s *Store) PutRows(ctx context.Context, chatID string, rows []msgstore.Row) error {
	if s.closed.Load() {
		return fmt.Errorf("msgstore: sqlite put: %w", msgstore.ErrClosed)
	}
	rows, err := msgstore.CheckRows(msgstore.NameSQLite, chatID, rows)
	if err != nil || len(rows) == 0 {
		return err
	}
	return s.putChecked(ctx, chatID, rows)
}

// GetRows returns the stored bodies of those ids chatID holds (msgstore.RowStore).
func (s *Store) GetRows(ctx context.Context, chatID string, ids []string) (map[string][]byte, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("msgstore: sqlite get: %w", msgstore.ErrClosed)
	}
	distinct, err := msgstore.CheckGet(msgstore.NameSQLite, chatID, ids)
	if err != nil {
		return nil, err
	}
	opCtx, cancel := context.WithTimeout(ctx, msgstore.OpTimeout)
	defer cancel()
	found, err := sqliteBodies(opCtx, s.db, chatID, distinct)
	if err != nil {
		return nil, msgstore.WrapOp(ctx, opCtx, "sqlite get chat "+strconv.Quote(chatID), err, sqliteUnavailable)
	}
	return found, nil
}
