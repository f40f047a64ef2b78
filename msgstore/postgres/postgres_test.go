package postgres

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/msgstoretest"
)

func openT(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	dsn := sharedPostgresDSN(t)
	msgstoretest.Run(t, func(t *testing.T) msgstore.Store { return openT(t, dsn) })
}

func TestSchemaAndReopen(t *testing.T) {
	dsn := sharedPostgresDSN(t)
	ctx := context.Background()
	pg := openT(t, dsn)
	assert.Equal(t, "postgres", pg.Name())

	var version int
	require.NoError(t, pg.pool.QueryRow(ctx, "SELECT version FROM schema_version WHERE name = 'chat_messages'").Scan(&version))
	assert.Equal(t, SchemaVersion, version)

	// Opening again (another worker starting) finds the schema and changes nothing.
	again := openT(t, dsn)
	chatID := msgstoretest.NewChatID(t)
	m := chat.TextMessage("m1", chat.RoleUser, "alice", "<hi> & bye")
	require.NoError(t, again.Put(ctx, chatID, []chat.Message{m}))
	var body []byte
	var created time.Time
	require.NoError(t, pg.pool.QueryRow(ctx, "SELECT body, created_at FROM chat_messages WHERE chat_id = $1 AND message_id = 'm1'", chatID).Scan(&body, &created))
	want, err := msgstore.EncodeBody(m)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(body), "stored bytes are the canonical JSON")
	assert.WithinDuration(t, time.Now(), created, time.Minute)

	// postgresql:// is the same scheme (storeurl.Open passes either as the DSN).
	pq, err := Open(ctx, "postgresql"+dsn[len("postgres"):])
	if assert.NoError(t, err) {
		_ = pq.Close()
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	srv := startPostgresT(t)
	dsn, err := srv.createDB("future")
	require.NoError(t, err)
	ctx := context.Background()
	s := openT(t, dsn)
	_, err = s.pool.Exec(ctx, "UPDATE schema_version SET version = $1 WHERE name = $2", SchemaVersion+1, postgresSchemaName)
	require.NoError(t, err)
	_, err = Open(ctx, dsn)
	require.ErrorIs(t, err, msgstore.ErrSchema)
}

// TestServerDown stops the server under an open store: Put, Get and Open fail
// with msgstore.ErrUnavailable within a bounded time; after the server restarts on the same port
// and data folder, Put works again and nothing written before is lost.
func TestServerDown(t *testing.T) {
	t.Parallel()
	srv := startPostgresT(t)
	dsn, err := srv.createDB("agentchat")
	require.NoError(t, err)
	ctx := context.Background()
	s := openT(t, dsn)
	chatID := msgstoretest.NewChatID(t)

	var before []chat.Message
	for i := range 100 {
		before = append(before, msgstoretest.TextMessage(fmt.Sprintf("before-%03d", i), fmt.Sprintf("written before the outage %d", i)))
	}
	require.NoError(t, s.Put(ctx, chatID, before))

	require.NoError(t, srv.stop())
	const bound = ConnectTimeout + 5*time.Second

	start := time.Now()
	err = s.Put(ctx, chatID, []chat.Message{msgstoretest.TextMessage("during", "the server is down")})
	require.ErrorIs(t, err, msgstore.ErrUnavailable, "Put while down")
	t.Logf("Put while down failed after %v: %v", time.Since(start), err)
	assert.Less(t, time.Since(start), bound)

	start = time.Now()
	_, err = s.Get(ctx, chatID, []string{"before-000"})
	require.ErrorIs(t, err, msgstore.ErrUnavailable, "Get while down")
	t.Logf("Get while down failed after %v: %v", time.Since(start), err)
	assert.Less(t, time.Since(start), bound)

	start = time.Now()
	_, err = Open(ctx, dsn)
	require.ErrorIs(t, err, msgstore.ErrUnavailable, "Open while down")
	assert.Less(t, time.Since(start), bound)

	require.NoError(t, srv.start())

	after := []chat.Message{msgstoretest.TextMessage("after", "written after the restart")}
	require.NoError(t, s.Put(ctx, chatID, after), "the same store works again after the restart")
	got, err := s.Get(ctx, chatID, append(msgstoretest.IDs(before), "after"))
	require.NoError(t, err)
	msgstoretest.RequireSameMessages(t, append(before, after...), got)
	_, err = s.Get(ctx, chatID, []string{"during"})
	require.ErrorIs(t, err, msgstore.ErrNotFound, "the Put that failed wrote nothing")
	require.NoError(t, s.Put(ctx, chatID, before), "a retried Put of what was written before is a no-op")
}

// TestSilentServerIsUnavailable points a store at a listener that accepts
// connections and never answers: the connect timeout must end Open with msgstore.ErrUnavailable.
func TestSilentServerIsUnavailable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	start := time.Now()
	_, err = Open(context.Background(), fmt.Sprintf("postgres://postgres@%s/x?sslmode=disable", l.Addr()))
	waited := time.Since(start)
	require.ErrorIs(t, err, msgstore.ErrUnavailable)
	t.Logf("silent server: Open gave up after %v: %v", waited, err)
	assert.Less(t, waited, ConnectTimeout+5*time.Second)
}

// postgresV1 is the table layout of schema version 1 as builds before the history
// pages wrote it, kept here as it was so that the migration is tested from the real
// thing.
var postgresV1 = []string{`CREATE TABLE schema_version (
	name    text    PRIMARY KEY,
	version integer NOT NULL
)`, `CREATE TABLE chat_messages (
	chat_id    text        NOT NULL,
	message_id text        NOT NULL,
	body       bytea       NOT NULL, -- the JSON of chat.Message, as msgstore.EncodeBody writes it
	created_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (chat_id, message_id)
)`, `INSERT INTO schema_version (name, version) VALUES ('chat_messages', 1)`}

// A version 1 database (messages, no pages) opens as version 2: its messages read and
// conflict as before, and pages can be written. The database is a schema of the shared
// server of its own, named by search_path.
func TestMigratesVersion1(t *testing.T) {
	dsn := sharedPostgresDSN(t)
	ctx := context.Background()
	admin := openT(t, dsn)
	schema := fmt.Sprintf("v1_%d", time.Now().UnixNano())
	_, err := admin.pool.Exec(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = admin.pool.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE") })
	v1dsn := dsn + "&search_path=" + schema
	if !strings.Contains(dsn, "?") {
		v1dsn = dsn + "?search_path=" + schema
	}
	m := chat.TextMessage("m1", chat.RoleUser, "alice", "written by version 1")
	body, err := msgstore.EncodeBody(m)
	require.NoError(t, err)
	conn, err := pgx.Connect(ctx, v1dsn)
	require.NoError(t, err)
	for _, q := range postgresV1 {
		_, err = conn.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	_, err = conn.Exec(ctx, "INSERT INTO chat_messages (chat_id, message_id, body) VALUES ('c', 'm1', $1)", body)
	require.NoError(t, err)
	require.NoError(t, conn.Close(ctx))

	s := openT(t, v1dsn)
	var version int
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT version FROM schema_version WHERE name = 'chat_messages'").Scan(&version))
	assert.Equal(t, 2, version)
	rows, err := s.pool.Query(ctx, "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", schema)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	assert.Equal(t, []string{"chat_message_ids", "chat_messages", "chat_pages", "schema_version"}, tables)

	got, err := s.Get(ctx, "c", []string{"m1"})
	require.NoError(t, err)
	assert.Equal(t, m, got[0])
	require.ErrorIs(t, s.Put(ctx, "c", []chat.Message{msgstoretest.TextMessage("m1", "changed")}), msgstore.ErrConflict)
	p := msgstoretest.SamplePage(t, "c", "L", 0, 0, 2)
	digest, err := s.PutPage(ctx, "c", p)
	require.NoError(t, err)
	assert.Equal(t, msgstore.PageDigest(p.Body), digest)

	again := openT(t, v1dsn) // already version 2: nothing to do
	page, err := again.GetPage(ctx, "c", p.Key())
	require.NoError(t, err)
	assert.Equal(t, string(p.Body), string(page))
}
