package msgstore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
)

func TestOpenSQLiteURLs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()

	abs := filepath.Join(dir, "abs dir", "m%41 ü.db")
	s, err := Open(ctx, "sqlite://"+abs)
	require.NoError(t, err)
	assert.Equal(t, "sqlite", s.Name())
	assert.Equal(t, abs, s.(*SQLite).Path())
	require.NoError(t, s.Put(ctx, "c", []chat.Message{textMsg("m", "x")}))
	require.NoError(t, s.Close())
	assert.FileExists(t, abs)

	t.Chdir(dir)
	s, err = Open(ctx, "sqlite:rel/messages.db")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "rel", "messages.db"), s.(*SQLite).Path())
	require.NoError(t, s.Close())
}

func TestOpenRejects(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct{ url, want string }{
		{"mysql://root:hunter2@db/x", `unsupported URL scheme "mysql"`},
		{"/var/lib/messages.db", "not a store URL"},
		{"", "not a store URL"},
		{"sqlite:", "no path"},
		{"sqlite://host/x.db", "no host"},
		{"sqlite:///x.db?mode=ro", "no query"},
		{"postgres://u:hunter2@127.0.0.1:1/db?sslmode=bogus", "sslmode"},
	} {
		t.Run(tt.url, func(t *testing.T) {
			_, err := Open(ctx, tt.url)
			require.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "hunter2", "errors must not show passwords")
		})
	}
}

func TestEncodeIsCanonical(t *testing.T) {
	m := sampleMessages()[3]
	a, err := encode(m)
	require.NoError(t, err)
	b, err := encode(m)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Contains(t, string(a), unknownRaw, "unknown content written as given")
	assert.NotContains(t, string(a), "\n")
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopSharedPostgres()
	os.Exit(code)
}

// TestBodiesOfAnEarlierLayoutAreTheSameMessage: a body an earlier version wrote with
// encoding/json is not a conflict for the same message written canonically now, and
// still is one for a different message.
func TestBodiesOfAnEarlierLayoutAreTheSameMessage(t *testing.T) {
	for _, m := range sampleMessages() {
		earlier, err := json.Marshal(m)
		require.NoError(t, err)
		now, err := encode(m)
		require.NoError(t, err)
		assert.True(t, sameBody(earlier, now), "%s", now)
		other := m
		other.MessageID += "x"
		changed, err := encode(other)
		require.NoError(t, err)
		assert.False(t, sameBody(earlier, changed), "%s", changed)
	}
	assert.False(t, sameBody([]byte(`{`), []byte(`{`+"\n")), "unreadable bodies are never the same")
}
