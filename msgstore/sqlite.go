package msgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agentchat/agentchat/chat"
)

// SQLiteBusyTimeout is how long a write waits for another connection or process that
// holds the database's write lock; past it the write is ErrUnavailable.
const SQLiteBusyTimeout = 5 * time.Second

// sqliteChunk is how many ids one SELECT ... IN (...) binds, well under SQLite's
// variable limit (32766 in modernc.org/sqlite, 999 in old builds).
const sqliteChunk = 500

// sqliteInsertRows is how many rows one INSERT of Put writes (4 parameters each, far
// below SQLite's 32,766).
const sqliteInsertRows = 200

const sqliteSchemaV1 = `CREATE TABLE IF NOT EXISTS chat_messages (
	chat_id    TEXT    NOT NULL,
	message_id TEXT    NOT NULL,
	body       BLOB    NOT NULL, -- the JSON of chat.Message, as encode writes it
	created_at INTEGER NOT NULL, -- when first stored, Unix milliseconds
	PRIMARY KEY (chat_id, message_id)
)`

// SQLite is a Store in one SQLite file (WAL mode), through the pure-Go driver
// modernc.org/sqlite. Several SQLite values, in one process or several, may share a
// file: writes are serialized by SQLite's lock, waiting up to SQLiteBusyTimeout.
type SQLite struct {
	db      *sql.DB
	path    string
	writeMu sync.Mutex // one writer per value, so its goroutines do not contend in SQLite's busy loop
	closed  atomic.Bool
}

var _ Store = (*SQLite)(nil)

// OpenSQLite opens the SQLite store at path, creating its folder and file if missing,
// and creates or checks its table (schema version in PRAGMA user_version). A file whose
// schema version is newer than SchemaVersion is ErrSchema.
func OpenSQLite(path string) (*SQLite, error) {
	if path == "" {
		return nil, fmt.Errorf("msgstore: open sqlite: %w: empty path", ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("msgstore: open sqlite %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("msgstore: open sqlite %q: %w", abs, err)
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(SQLiteBusyTimeout.Milliseconds(), 10))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL") // a Put that returned survives a power cut
	q.Set("_txlock", "immediate") // take the write lock at BEGIN, so the busy timeout applies
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("msgstore: open sqlite %q: %w", abs, err)
	}
	s := &SQLite{db: db, path: abs}
	ctx, cancel := context.WithTimeout(context.Background(), OpTimeout)
	defer cancel()
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, wrapOp(context.Background(), ctx, "open sqlite "+strconv.Quote(abs), err, sqliteUnavailable)
	}
	return s, nil
}

// inTx runs f in a transaction, committed when f returns nil and rolled back otherwise.
func (s *SQLite) inTx(ctx context.Context, f func(tx *sql.Tx) error) error {
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

// migrate brings the file to SchemaVersion in one transaction.
func (s *SQLite) migrate(ctx context.Context) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var version int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
			return err
		}
		switch {
		case version > SchemaVersion:
			return fmt.Errorf("%w: file has version %d, this build knows up to %d", ErrSchema, version, SchemaVersion)
		case version < 1:
			if _, err := tx.ExecContext(ctx, sqliteSchemaV1); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(SchemaVersion)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Name returns "sqlite".
func (s *SQLite) Name() string { return NameSQLite }

// Path returns the absolute path of the database file.
func (s *SQLite) Path() string { return s.path }

// Close closes the database. Later calls return ErrClosed.
func (s *SQLite) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("msgstore: close sqlite %q: %w", s.path, err)
	}
	return nil
}

// Put writes msgs under chatID in one transaction; see Store.
func (s *SQLite) Put(ctx context.Context, chatID string, msgs []chat.Message) error {
	if s.closed.Load() {
		return fmt.Errorf("msgstore: sqlite put: %w", ErrClosed)
	}
	rows, err := encodeAll(NameSQLite, chatID, msgs)
	if err != nil || len(rows) == 0 {
		return err
	}
	opCtx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.inTx(opCtx, func(tx *sql.Tx) error { return putRows(opCtx, tx, chatID, rows) }); err != nil {
		return wrapOp(ctx, opCtx, "sqlite put chat "+strconv.Quote(chatID), err, sqliteUnavailable)
	}
	return nil
}

// putRows writes rows under chatID in tx.
func putRows(ctx context.Context, tx *sql.Tx, chatID string, rows []row) error {
	// Insert what is new, many rows a statement; a message already stored must have the
	// same body, which is checked for those rows only (usually none) after the inserts.
	now := time.Now().UnixMilli()
	var stored []row
	err := chunks(rows, sqliteInsertRows, func(part []row) error {
		args := make([]any, 0, 4*len(part))
		for _, r := range part {
			args = append(args, chatID, r.id, r.body, now)
		}
		q := "INSERT OR IGNORE INTO chat_messages (chat_id, message_id, body, created_at) VALUES (?, ?, ?, ?)" +
			strings.Repeat(", (?, ?, ?, ?)", len(part)-1) + " RETURNING message_id"
		res, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer res.Close()
		inserted := make(map[string]bool, len(part))
		for res.Next() {
			var id string
			if err := res.Scan(&id); err != nil {
				return err
			}
			inserted[id] = true
		}
		if err := res.Err(); err != nil {
			return err
		}
		for _, r := range part {
			if !inserted[r.id] {
				stored = append(stored, r)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(stored) > 0 {
		ids := make([]string, len(stored))
		for i, r := range stored {
			ids[i] = r.id
		}
		existing, err := sqliteBodies(ctx, tx, chatID, ids)
		if err != nil {
			return err
		}
		for _, r := range stored {
			if !sameBody(existing[r.id], r.body) {
				return conflictError(NameSQLite, chatID, r.id)
			}
		}
	}
	return nil
}

// Get returns the messages of chatID with these ids, in order; see Store.
func (s *SQLite) Get(ctx context.Context, chatID string, ids []string) ([]chat.Message, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("msgstore: sqlite get: %w", ErrClosed)
	}
	if err := checkIDs(NameSQLite, chatID, ids); err != nil {
		return nil, err
	}
	opCtx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	found, err := sqliteBodies(opCtx, s.db, chatID, unique(ids))
	if err != nil {
		return nil, wrapOp(ctx, opCtx, "sqlite get chat "+strconv.Quote(chatID), err, sqliteUnavailable)
	}
	return ordered(NameSQLite, chatID, ids, found)
}

type sqlQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// sqliteBodies returns the stored bodies of those ids that chatID has, in chunks of
// sqliteChunk ids per query.
func sqliteBodies(ctx context.Context, q sqlQuerier, chatID string, ids []string) (map[string][]byte, error) {
	found := make(map[string][]byte, len(ids))
	err := chunks(ids, sqliteChunk, func(part []string) error {
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
	})
	return found, err
}

// sqliteUnavailable reports whether err is SQLite saying "not now": busy or locked
// past the busy timeout, or a WAL lock race (SQLITE_PROTOCOL).
func sqliteUnavailable(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_PROTOCOL:
		return true
	}
	return false
}
