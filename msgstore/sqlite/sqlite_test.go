package sqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/msgstoretest"
)

func openT(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conformance.db")
	msgstoretest.Run(t, func(t *testing.T) msgstore.Store { return openT(t, path) })
}

func TestCreatesFolderFileAndSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "messages.db")
	s := openT(t, path)
	assert.Equal(t, "sqlite", s.Name())
	assert.Equal(t, path, s.Path())
	assert.FileExists(t, path)

	var mode string
	require.NoError(t, s.db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", mode)
	var busy int
	require.NoError(t, s.db.QueryRow("PRAGMA busy_timeout").Scan(&busy))
	assert.Equal(t, int(BusyTimeout.Milliseconds()), busy)
	var version int
	require.NoError(t, s.db.QueryRow("PRAGMA user_version").Scan(&version))
	assert.Equal(t, SchemaVersion, version)
	var pageSize int
	require.NoError(t, s.db.QueryRow("PRAGMA page_size").Scan(&pageSize))
	assert.Equal(t, PageSize, pageSize)

	// The stored body is the canonical JSON, and created_at is set.
	ctx := context.Background()
	m := chat.TextMessage("m1", chat.RoleUser, "alice", "<hi> & bye")
	require.NoError(t, s.Put(ctx, "c", []chat.Message{m}))
	var body []byte
	var created int64
	require.NoError(t, s.db.QueryRow("SELECT body, created_at FROM chat_messages WHERE chat_id = 'c' AND message_id = 'm1'").Scan(&body, &created))
	want, err := msgstore.EncodeBody(m)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(body), "stored bytes are the canonical JSON")
	assert.JSONEq(t, `{"messageId":"m1","role":"user","authorName":"alice","contents":[{"type":"text","text":"<hi> & bye"}]}`, string(body))
	assert.WithinDuration(t, time.Now(), time.UnixMilli(created), time.Minute)
}

func TestSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reopen.db")
	ctx := context.Background()
	s, err := Open(path)
	require.NoError(t, err)
	want := msgstoretest.SampleMessages()
	require.NoError(t, s.Put(ctx, "chat", want))
	require.NoError(t, s.Close())

	again := openT(t, path)
	got, err := again.Get(ctx, "chat", msgstoretest.IDs(want))
	require.NoError(t, err)
	msgstoretest.RequireSameMessages(t, want, got)
	require.ErrorIs(t, again.Put(ctx, "chat", []chat.Message{msgstoretest.TextMessage(want[0].MessageID, "changed")}), msgstore.ErrConflict)
}

func TestTwoHandlesOnOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	ctx := context.Background()
	a, b := openT(t, path), openT(t, path)

	require.NoError(t, a.Put(ctx, "chat", []chat.Message{msgstoretest.TextMessage("from-a", "a wrote this")}))
	got, err := b.Get(ctx, "chat", []string{"from-a"})
	require.NoError(t, err)
	assert.Equal(t, "a wrote this", got[0].Text())

	require.NoError(t, b.Put(ctx, "chat", []chat.Message{msgstoretest.TextMessage("from-b", "b wrote this")}))
	got, err = a.Get(ctx, "chat", []string{"from-b", "from-a"})
	require.NoError(t, err)
	assert.Equal(t, []string{"from-b", "from-a"}, msgstoretest.IDs(got))
	require.ErrorIs(t, a.Put(ctx, "chat", []chat.Message{msgstoretest.TextMessage("from-b", "a disagrees")}), msgstore.ErrConflict)

	// Both handles writing at once: SQLite's lock and busy timeout serialize them.
	errs := make(chan error, 2)
	for i, s := range []*Store{a, b} {
		go func() {
			var err error
			for j := range 40 {
				id := "h" + strconv.Itoa(i) + "-" + strconv.Itoa(j)
				if err = s.Put(ctx, "chat", []chat.Message{msgstoretest.TextMessage(id, id)}); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	got, err = a.Get(ctx, "chat", []string{"h0-39", "h1-39"})
	require.NoError(t, err)
	assert.Equal(t, "h1-39", got[1].Text())
}

// TestLockedIsUnavailable holds the write lock from another connection (another
// process's worth) past the busy timeout: Put must give up with msgstore.ErrUnavailable, and work
// once the lock is released.
func TestLockedIsUnavailable(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "locked.db")
	ctx := context.Background()
	s := openT(t, path)
	require.NoError(t, s.Put(ctx, "chat", []chat.Message{msgstoretest.TextMessage("before", "x")}))

	other, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	require.NoError(t, err)
	defer other.Close()
	tx, err := other.Begin()
	require.NoError(t, err)
	_, err = tx.Exec("INSERT INTO chat_messages VALUES ('chat', 'held', x'7b7d', 0)")
	require.NoError(t, err)

	start := time.Now()
	err = s.Put(ctx, "chat", []chat.Message{msgstoretest.TextMessage("blocked", "y")})
	waited := time.Since(start)
	require.ErrorIs(t, err, msgstore.ErrUnavailable)
	t.Logf("locked Put gave up after %v: %v", waited, err)
	assert.GreaterOrEqual(t, waited, BusyTimeout-500*time.Millisecond)
	assert.Less(t, waited, BusyTimeout+10*time.Second)

	// Readers are not blocked by a writer in WAL mode.
	_, err = s.Get(ctx, "chat", []string{"before"})
	require.NoError(t, err)

	require.NoError(t, tx.Rollback())
	require.NoError(t, s.Put(ctx, "chat", []chat.Message{msgstoretest.TextMessage("blocked", "y")}))
}

func TestRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.db")
	s, err := Open(path)
	require.NoError(t, err)
	_, err = s.db.Exec("PRAGMA user_version = " + strconv.Itoa(SchemaVersion+1))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = Open(path)
	require.ErrorIs(t, err, msgstore.ErrSchema)
	assert.Contains(t, err.Error(), path)
}

func TestUnwritableFolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-folder")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err := Open(filepath.Join(file, "messages.db"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not-a-folder")
}

// sqliteV1 is the table layout of schema version 1 as builds before the history pages
// wrote it, kept here as it was so that the migration is tested from the real thing.
const sqliteV1 = `CREATE TABLE IF NOT EXISTS chat_messages (
	chat_id    TEXT    NOT NULL,
	message_id TEXT    NOT NULL,
	body       BLOB    NOT NULL, -- the JSON of chat.Message, as msgstore.EncodeBody writes it
	created_at INTEGER NOT NULL, -- when first stored, Unix milliseconds
	PRIMARY KEY (chat_id, message_id)
)`

// A version 1 file (messages, no pages) opens as version 2: its messages read and
// conflict as before, and pages can be written.
func TestMigratesVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	ctx := context.Background()
	m := chat.TextMessage("m1", chat.RoleUser, "alice", "written by version 1")
	body, err := msgstore.EncodeBody(m)
	require.NoError(t, err)
	old, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	for _, q := range []string{sqliteV1, "PRAGMA user_version = 1"} {
		_, err = old.Exec(q)
		require.NoError(t, err, q)
	}
	_, err = old.Exec("INSERT INTO chat_messages VALUES ('c', 'm1', ?, 0)", body)
	require.NoError(t, err)
	require.NoError(t, old.Close())

	s := openT(t, path)
	var version int
	require.NoError(t, s.db.QueryRow("PRAGMA user_version").Scan(&version))
	assert.Equal(t, 2, version)
	var pageSize int
	require.NoError(t, s.db.QueryRow("PRAGMA page_size").Scan(&pageSize))
	assert.Equal(t, 4096, pageSize, "a file made before keeps its page size")
	var tables []string
	rows, err := s.db.Query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	require.NoError(t, err)
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		tables = append(tables, name)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"chat_message_ids", "chat_messages", "chat_pages"}, tables)

	got, err := s.Get(ctx, "c", []string{"m1"})
	require.NoError(t, err)
	assert.Equal(t, m, got[0])
	require.ErrorIs(t, s.Put(ctx, "c", []chat.Message{msgstoretest.TextMessage("m1", "changed")}), msgstore.ErrConflict)
	p := msgstoretest.SamplePage(t, "c", "L", 0, 0, 2)
	digest, err := s.PutPage(ctx, "c", p)
	require.NoError(t, err)
	assert.Equal(t, msgstore.PageDigest(p.Body), digest)
	require.NoError(t, s.Close())

	again := openT(t, path) // already version 2: nothing to do
	page, err := again.GetPage(ctx, "c", p.Key())
	require.NoError(t, err)
	assert.Equal(t, string(p.Body), string(page))
}

// OpenExisting refuses, naming the path and creating nothing, a path with no store:
// a missing file (in a missing folder or not), an empty file, a folder. A store that
// Open wrote opens and reads.
func TestOpenExistingNeverCreates(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	other := filepath.Join(dir, "other.db") // an SQLite file without the store's tables
	db, err := sql.Open("sqlite", "file:"+other)
	require.NoError(t, err)
	_, err = db.Exec("CREATE TABLE t (x INTEGER)")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	for _, tt := range []struct {
		name, path, want string
	}{
		{"missing folder", filepath.Join(dir, "missing", "dir", "x.db"), "does not exist"},
		{"missing file", filepath.Join(dir, "x.db"), "does not exist"},
		{"empty file", empty, "holds no message store"},
		{"file of another kind", other, "holds no message store"},
		{"folder", dir, "is a folder"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OpenExisting(tt.path)
			require.ErrorIs(t, err, msgstore.ErrNoStore)
			assert.Contains(t, err.Error(), tt.path)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	assert.NoDirExists(t, filepath.Join(dir, "missing"))
	assert.NoFileExists(t, filepath.Join(dir, "x.db"))
	fi, err := os.Stat(empty)
	require.NoError(t, err)
	_, err = os.Stat(other + "-wal")
	assert.ErrorIs(t, err, os.ErrNotExist, "another file is not turned to WAL")
	assert.Zero(t, fi.Size(), "the empty file stays empty")

	ctx := context.Background()
	path := filepath.Join(dir, "store.db")
	w, err := Open(path)
	require.NoError(t, err)
	m := msgstoretest.TextMessage("m1", "kept")
	require.NoError(t, w.Put(ctx, "c", []chat.Message{m}))
	require.NoError(t, w.Close())
	r, err := OpenExisting(path)
	require.NoError(t, err)
	defer r.Close()
	got, err := r.Get(ctx, "c", []string{"m1"})
	require.NoError(t, err)
	assert.Equal(t, []chat.Message{m}, got)
}
