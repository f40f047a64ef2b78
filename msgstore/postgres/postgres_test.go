package postgres

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

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
