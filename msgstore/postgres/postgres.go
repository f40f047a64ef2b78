// Package postgres is the msgstore.Store in a PostgreSQL database, through
// github.com/jackc/pgx/v5 with a connection pool. Open it with Open, or by URL
// (postgres://..., postgresql://...) through msgstore/storeurl.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
)

// ConnectTimeout bounds each new connection (dial, TLS, startup) when the DSN
// sets no connect_timeout.
const ConnectTimeout = 5 * time.Second

// SchemaVersion is the version of the table layout this build writes and reads,
// recorded in the row 'chat_messages' of table schema_version: 1 is table
// chat_messages, 2 adds the history pages (tables chat_pages and chat_message_ids).
// Open migrates an older database.
const SchemaVersion = 2

// postgresChunk is how many messages one INSERT carries.
const postgresChunk = 1000

// postgresMigrationLock is the pg_advisory_xact_lock key that serializes schema changes
// between processes opening the same database at once.
const postgresMigrationLock = 0x6d736773746f7265 // "msgstore"

// postgresSchemaName is the row of table schema_version that holds the version of
// the message store's tables (named after the first, chat_messages).
const postgresSchemaName = "chat_messages"

const postgresSchemaVersionTable = `CREATE TABLE IF NOT EXISTS schema_version (
	name    text    PRIMARY KEY,
	version integer NOT NULL
)`

const postgresSchemaV1 = `CREATE TABLE IF NOT EXISTS chat_messages (
	chat_id    text        NOT NULL,
	message_id text        NOT NULL,
	body       bytea       NOT NULL, -- the JSON of chat.Message, as msgstore.EncodeBody writes it
	created_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (chat_id, message_id)
)`

// postgresSchemaV2 are the tables version 2 adds: the history pages
// (msgstore.PageStore).
var postgresSchemaV2 = []string{`CREATE TABLE IF NOT EXISTS chat_pages (
	chat_id     text        NOT NULL,
	lineage     text        NOT NULL,
	level       integer     NOT NULL, -- 0: messages; n: index entries of level n-1 pages
	seq         bigint      NOT NULL, -- 0, 1, 2... within (chat_id, lineage, level)
	first_index bigint      NOT NULL, -- absolute index of the first message covered
	count       bigint      NOT NULL, -- messages covered
	body        bytea       NOT NULL, -- the page's body (docs/chat-state-v1.md, "Message store pages")
	created_at  timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (chat_id, lineage, level, seq)
)`, `CREATE TABLE IF NOT EXISTS chat_message_ids (
	chat_id text   NOT NULL,
	lineage text   NOT NULL,
	kind    text   NOT NULL, -- 'm' message id, 'c' call id
	id      text   NOT NULL,
	idx     bigint NOT NULL, -- absolute index of the message holding it
	seq     bigint NOT NULL, -- seq of the level-0 page holding that message
	role    text   NOT NULL, -- that message's role
	PRIMARY KEY (chat_id, lineage, kind, id)
)`}

// Store is a msgstore.Store, RowStore and PageStore in a PostgreSQL database (tables
// chat_messages, chat_pages and chat_message_ids, version recorded in the row
// 'chat_messages' of table schema_version), through a pgxpool pool.
type Store struct {
	pool   *pgxpool.Pool
	closed atomic.Bool
}

var _ msgstore.RowStore = (*Store)(nil)
var _ msgstore.PageStore = (*Store)(nil)

// Open connects to the database dsn names (a postgres:// URL or key=value string, as
// pgx parses it), then creates or checks its tables (an older schema version is
// brought to SchemaVersion in one transaction, after which builds that know only the
// older version refuse the database with msgstore.ErrSchema). A DSN pgx cannot parse is
// msgstore.ErrInvalid; a server that cannot be reached is msgstore.ErrUnavailable; a
// database with a newer schema version is msgstore.ErrSchema.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("msgstore: open postgres: %w: %w", msgstore.ErrInvalid, err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = ConnectTimeout
	}
	cfg.PingTimeout = ConnectTimeout
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("msgstore: open postgres: %w", err)
	}
	s := &Store{pool: pool}
	opCtx, cancel := context.WithTimeout(ctx, msgstore.OpTimeout)
	defer cancel()
	if err := s.migrate(opCtx); err != nil {
		pool.Close()
		return nil, s.wrap(ctx, opCtx, "open postgres", err)
	}
	return s, nil
}

// migrate brings the database to SchemaVersion in one transaction: a new database gets
// every table, a version 1 database the tables of version 2.
func (s *Store) migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(postgresMigrationLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, postgresSchemaVersionTable); err != nil {
			return err
		}
		var version int
		err := tx.QueryRow(ctx, "SELECT version FROM schema_version WHERE name = $1", postgresSchemaName).Scan(&version)
		var steps []string
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			steps = append(steps, postgresSchemaV1)
		case err != nil:
			return err
		case version > SchemaVersion:
			return fmt.Errorf("%w: database has version %d, this build knows up to %d", msgstore.ErrSchema, version, SchemaVersion)
		case version == SchemaVersion:
			return nil
		}
		for _, q := range append(steps, postgresSchemaV2...) {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO schema_version (name, version) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET version = excluded.version`, postgresSchemaName, SchemaVersion)
		return err
	})
}

// Name returns "postgres".
func (s *Store) Name() string { return msgstore.NamePostgres }

// Close closes the pool. Later calls return msgstore.ErrClosed.
func (s *Store) Close() error {
	if !s.closed.Swap(true) {
		s.pool.Close()
	}
	return nil
}

// Put writes msgs under chatID in one transaction; see msgstore.Store.
func (s *Store) Put(ctx context.Context, chatID string, msgs []chat.Message) error {
	if s.closed.Load() {
		return fmt.Errorf("msgstore: postgres put: %w", msgstore.ErrClosed)
	}
	rows, err := msgstore.CheckPut(msgstore.NamePostgres, chatID, msgs)
	if err != nil || len(rows) == 0 {
		return err
	}
	return s.putChecked(ctx, chatID, rows)
}

// PutRows is Put of bodies already encoded (msgstore.RowStore, for msgstore.Sealed):
// the same checks of the ids, one transaction, idempotent, ErrConflict for an id
// stored with another body.
func (s *Store) PutRows(ctx context.Context, chatID string, rows []msgstore.Row) error {
	if s.closed.Load() {
		return fmt.Errorf("msgstore: postgres put: %w", msgstore.ErrClosed)
	}
	rows, err := msgstore.CheckRows(msgstore.NamePostgres, chatID, rows)
	if err != nil || len(rows) == 0 {
		return err
	}
	return s.putChecked(ctx, chatID, rows)
}

// GetRows returns the stored bodies of those ids chatID holds (msgstore.RowStore).
func (s *Store) GetRows(ctx context.Context, chatID string, ids []string) (map[string][]byte, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("msgstore: postgres get: %w", msgstore.ErrClosed)
	}
	distinct, err := msgstore.CheckGet(msgstore.NamePostgres, chatID, ids)
	if err != nil {
		return nil, err
	}
	if len(distinct) == 0 {
		return map[string][]byte{}, nil
	}
	opCtx, cancel := context.WithTimeout(ctx, msgstore.OpTimeout)
	defer cancel()
	found, err := postgresBodies(opCtx, s.pool, chatID, distinct)
	if err != nil {
		return nil, s.wrap(ctx, opCtx, "postgres get chat "+strconv.Quote(chatID), err)
	}
	return found, nil
}

// putChecked writes checked rows under chatID in one transaction.
func (s *Store) putChecked(ctx context.Context, chatID string, rows []msgstore.Row) error {
	// One lock order for all writers, so two Puts sharing ids cannot deadlock.
	slices.SortFunc(rows, func(a, b msgstore.Row) int { return strings.Compare(a.ID, b.ID) })
	opCtx, cancel := context.WithTimeout(ctx, msgstore.OpTimeout)
	defer cancel()
	err := pgx.BeginFunc(opCtx, s.pool, func(tx pgx.Tx) error {
		for part := range slices.Chunk(rows, postgresChunk) {
			if err := putChunk(opCtx, tx, chatID, part); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return s.wrap(ctx, opCtx, "postgres put chat "+strconv.Quote(chatID), err)
	}
	return nil
}

// putChunk inserts the rows that are new and checks that the others, already stored
// (before, or by a concurrent transaction that committed meanwhile), have the same body.
func putChunk(ctx context.Context, tx pgx.Tx, chatID string, part []msgstore.Row) error {
	ids := make([]string, len(part))
	bodies := make([][]byte, len(part))
	for i, r := range part {
		ids[i], bodies[i] = r.ID, r.Body
	}
	rows, err := tx.Query(ctx, `INSERT INTO chat_messages (chat_id, message_id, body)
		SELECT $1, m.id, m.body FROM unnest($2::text[], $3::bytea[]) WITH ORDINALITY AS m(id, body, n) ORDER BY m.n
		ON CONFLICT (chat_id, message_id) DO NOTHING
		RETURNING message_id`, chatID, ids, bodies)
	if err != nil {
		return err
	}
	inserted, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	if len(inserted) == len(part) {
		return nil
	}
	done := make(map[string]bool, len(inserted))
	for _, id := range inserted {
		done[id] = true
	}
	var rest []string
	for _, id := range ids {
		if !done[id] {
			rest = append(rest, id)
		}
	}
	existing, err := postgresBodies(ctx, tx, chatID, rest)
	if err != nil {
		return err
	}
	for _, r := range part {
		if !done[r.ID] && !msgstore.SameBody(existing[r.ID], r.Body) {
			return msgstore.ConflictError(msgstore.NamePostgres, chatID, r.ID)
		}
	}
	return nil
}

// Get returns the messages of chatID with these ids, in order, with one query; see
// msgstore.Store.
func (s *Store) Get(ctx context.Context, chatID string, ids []string) ([]chat.Message, error) {
	found, err := s.GetRows(ctx, chatID, ids)
	if err != nil {
		return nil, err
	}
	return msgstore.Ordered(msgstore.NamePostgres, chatID, ids, found)
}

type pgQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// postgresBodies returns the stored bodies of those ids that chatID has.
func postgresBodies(ctx context.Context, q pgQuerier, chatID string, ids []string) (map[string][]byte, error) {
	rows, err := q.Query(ctx,
		"SELECT message_id, body FROM chat_messages WHERE chat_id = $1 AND message_id = ANY($2::text[])", chatID, ids)
	if err != nil {
		return nil, err
	}
	found := make(map[string][]byte, len(ids))
	var id string
	var body []byte
	_, err = pgx.ForEachRow(rows, []any{&id, &body}, func() error {
		found[id] = slices.Clone(body)
		return nil
	})
	return found, err
}

// wrap prefixes err and marks it ErrUnavailable when the server could not be reached
// or the operation ran past msgstore.OpTimeout while the caller's ctx was still live.
// A store closed meanwhile makes it msgstore.ErrClosed.
func (s *Store) wrap(ctx, opCtx context.Context, what string, err error) error {
	if s.closed.Load() && !errors.Is(err, msgstore.ErrConflict) {
		return fmt.Errorf("msgstore: %s: %w: %w", what, msgstore.ErrClosed, err)
	}
	return msgstore.WrapOp(ctx, opCtx, what, err, postgresUnavailable)
}

// postgresUnavailable reports whether err means the server could not be reached or
// could not serve now: a failed connect, a lost connection, a network error or timeout,
// or a server error of class 08 (connection exception) or 53 (insufficient resources),
// 57P01-57P03 (shutting down, starting up), 40001/40P01 (serialization failure,
// deadlock: the transaction was rolled back and may be retried).
func postgresUnavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), strings.HasPrefix(pgErr.Code, "53"):
			return true
		}
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "40001", "40P01":
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr),
		pgconn.Timeout(err), pgconn.SafeToRetry(err),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}
