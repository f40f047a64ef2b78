package msgstore

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
)

func openSQLiteT(t *testing.T, path string) *SQLite {
	t.Helper()
	s, err := OpenSQLite(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestSQLiteConformance(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conformance.db")
	runConformance(t, func(t *testing.T) Store { return openSQLiteT(t, path) })
}

func TestSQLiteCreatesFolderFileAndSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "messages.db")
	s := openSQLiteT(t, path)
	assert.Equal(t, "sqlite", s.Name())
	assert.Equal(t, path, s.Path())
	assert.FileExists(t, path)

	var mode string
	require.NoError(t, s.db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", mode)
	var busy int
	require.NoError(t, s.db.QueryRow("PRAGMA busy_timeout").Scan(&busy))
	assert.Equal(t, int(SQLiteBusyTimeout.Milliseconds()), busy)
	var version int
	require.NoError(t, s.db.QueryRow("PRAGMA user_version").Scan(&version))
	assert.Equal(t, SchemaVersion, version)

	// The stored body is the canonical JSON, and created_at is set.
	ctx := context.Background()
	m := chat.TextMessage("m1", chat.RoleUser, "alice", "<hi> & bye")
	require.NoError(t, s.Put(ctx, "c", []chat.Message{m}))
	var body []byte
	var created int64
	require.NoError(t, s.db.QueryRow("SELECT body, created_at FROM chat_messages WHERE chat_id = 'c' AND message_id = 'm1'").Scan(&body, &created))
	want, err := encode(m)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(body), "stored bytes are the canonical JSON")
	assert.JSONEq(t, `{"messageId":"m1","role":"user","authorName":"alice","contents":[{"type":"text","text":"<hi> & bye"}]}`, string(body))
	assert.WithinDuration(t, time.Now(), time.UnixMilli(created), time.Minute)
}

func TestSQLiteSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reopen.db")
	ctx := context.Background()
	s, err := OpenSQLite(path)
	require.NoError(t, err)
	want := sampleMessages()
	require.NoError(t, s.Put(ctx, "chat", want))
	require.NoError(t, s.Close())

	again := openSQLiteT(t, path)
	got, err := again.Get(ctx, "chat", ids(want))
	require.NoError(t, err)
	requireSameMessages(t, want, got)
	require.ErrorIs(t, again.Put(ctx, "chat", []chat.Message{textMsg(want[0].MessageID, "changed")}), ErrConflict)
}

func TestSQLiteTwoHandlesOnOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	ctx := context.Background()
	a, b := openSQLiteT(t, path), openSQLiteT(t, path)

	require.NoError(t, a.Put(ctx, "chat", []chat.Message{textMsg("from-a", "a wrote this")}))
	got, err := b.Get(ctx, "chat", []string{"from-a"})
	require.NoError(t, err)
	assert.Equal(t, "a wrote this", got[0].Text())

	require.NoError(t, b.Put(ctx, "chat", []chat.Message{textMsg("from-b", "b wrote this")}))
	got, err = a.Get(ctx, "chat", []string{"from-b", "from-a"})
	require.NoError(t, err)
	assert.Equal(t, []string{"from-b", "from-a"}, ids(got))
	require.ErrorIs(t, a.Put(ctx, "chat", []chat.Message{textMsg("from-b", "a disagrees")}), ErrConflict)

	// Both handles writing at once: SQLite's lock and busy timeout serialize them.
	errs := make(chan error, 2)
	for i, s := range []*SQLite{a, b} {
		go func() {
			var err error
			for j := range 40 {
				id := "h" + strconv.Itoa(i) + "-" + strconv.Itoa(j)
				if err = s.Put(ctx, "chat", []chat.Message{textMsg(id, id)}); err != nil {
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

// TestSQLiteLockedIsUnavailable holds the write lock from another connection (another
// process's worth) past the busy timeout: Put must give up with ErrUnavailable, and work
// once the lock is released.
func TestSQLiteLockedIsUnavailable(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "locked.db")
	ctx := context.Background()
	s := openSQLiteT(t, path)
	require.NoError(t, s.Put(ctx, "chat", []chat.Message{textMsg("before", "x")}))

	other, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	require.NoError(t, err)
	defer other.Close()
	tx, err := other.Begin()
	require.NoError(t, err)
	_, err = tx.Exec("INSERT INTO chat_messages VALUES ('chat', 'held', x'7b7d', 0)")
	require.NoError(t, err)

	start := time.Now()
	err = s.Put(ctx, "chat", []chat.Message{textMsg("blocked", "y")})
	waited := time.Since(start)
	require.ErrorIs(t, err, ErrUnavailable)
	t.Logf("locked Put gave up after %v: %v", waited, err)
	assert.GreaterOrEqual(t, waited, SQLiteBusyTimeout-500*time.Millisecond)
	assert.Less(t, waited, SQLiteBusyTimeout+10*time.Second)

	// Readers are not blocked by a writer in WAL mode.
	_, err = s.Get(ctx, "chat", []string{"before"})
	require.NoError(t, err)

	require.NoError(t, tx.Rollback())
	require.NoError(t, s.Put(ctx, "chat", []chat.Message{textMsg("blocked", "y")}))
}

func TestSQLiteRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.db")
	s, err := OpenSQLite(path)
	require.NoError(t, err)
	_, err = s.db.Exec("PRAGMA user_version = " + strconv.Itoa(SchemaVersion+1))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = OpenSQLite(path)
	require.ErrorIs(t, err, ErrSchema)
	assert.Contains(t, err.Error(), path)
}

func TestSQLiteUnwritableFolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-folder")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err := OpenSQLite(filepath.Join(file, "messages.db"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not-a-folder")
}
