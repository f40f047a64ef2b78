package storeurl

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/postgres"
	"github.com/agentchat/agentchat/msgstore/sqlite"
)

func TestOpenSQLiteURLs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()

	abs := filepath.Join(dir, "abs dir", "m%41 ü.db")
	s, err := Open(ctx, "sqlite://"+abs)
	require.NoError(t, err)
	assert.Equal(t, "sqlite", s.Name())
	assert.Equal(t, abs, s.(*sqlite.Store).Path())
	require.NoError(t, s.Put(ctx, "c", []chat.Message{chat.TextMessage("m", chat.RoleUser, "alice", "x")}))
	require.NoError(t, s.Close())
	assert.FileExists(t, abs)

	t.Chdir(dir)
	s, err = Open(ctx, "sqlite:rel/messages.db")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "rel", "messages.db"), s.(*sqlite.Store).Path())
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
			require.ErrorIs(t, err, msgstore.ErrInvalid)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "hunter2", "errors must not show passwords")
		})
	}
}

// TestOpenPostgresURLs: both schemes reach postgres.Open with the URL as its DSN, seen
// from the error of a server that refuses connections (port 1 on the loopback).
func TestOpenPostgresURLs(t *testing.T) {
	ctx := context.Background()
	for _, scheme := range []string{"postgres", "postgresql"} {
		t.Run(scheme, func(t *testing.T) {
			start := time.Now()
			_, err := Open(ctx, scheme+"://postgres:hunter2@127.0.0.1:1/x?sslmode=disable")
			require.ErrorIs(t, err, msgstore.ErrUnavailable)
			assert.Contains(t, err.Error(), "msgstore: open postgres")
			assert.NotContains(t, err.Error(), "hunter2", "errors must not show passwords")
			assert.Less(t, time.Since(start), postgres.ConnectTimeout+5*time.Second)
		})
	}
}

// OpenExisting opens a sqlite URL's file only when it is there: a missing one is
// msgstore.ErrNoStore naming the path, and nothing is created; Open creates it.
func TestOpenExistingSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tt := range []struct{ name, url, path string }{
		{"absolute", "sqlite://" + filepath.Join(dir, "missing", "x.db"), filepath.Join(dir, "missing", "x.db")},
		{"relative", "sqlite:rel/x.db", filepath.Join(dir, "rel", "x.db")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(dir)
			_, err := OpenExisting(ctx, tt.url)
			require.ErrorIs(t, err, msgstore.ErrNoStore)
			assert.Contains(t, err.Error(), tt.path+" does not exist")
			assert.NoDirExists(t, filepath.Dir(tt.path))

			s, err := Open(ctx, tt.url)
			require.NoError(t, err)
			require.NoError(t, s.Close())
			s, err = OpenExisting(ctx, tt.url)
			require.NoError(t, err)
			assert.Equal(t, tt.path, s.(*sqlite.Store).Path())
			require.NoError(t, s.Close())
		})
	}
	_, err := OpenExisting(ctx, "sqlite://host/x.db")
	require.ErrorIs(t, err, msgstore.ErrInvalid)
}
