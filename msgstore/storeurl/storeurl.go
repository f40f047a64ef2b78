// Package storeurl opens the message store a URL names, the form users type in a
// worker's --message-store flag and in tests' options:
//
//	sqlite:///abs/path/messages.db   sqlite:relative/path.db   msgstore/sqlite
//	postgres://user@host:5432/db     postgresql://...          msgstore/postgres
//
// It links both stores' drivers; a program that needs one store imports that package.
package storeurl

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/postgres"
	"github.com/agentchat/agentchat/msgstore/sqlite"
)

// Open opens the store a URL names:
//
//	sqlite:///abs/path.db, sqlite:relative/path.db   sqlite.Open of the path
//	postgres://..., postgresql://...                  postgres.Open, the URL as its DSN
//
// Anything else, and a sqlite URL with a host, a query or no path, is
// msgstore.ErrInvalid; errors never show the URL's password.
func Open(ctx context.Context, url string) (msgstore.Store, error) {
	return open(ctx, url, sqlite.Open)
}

// OpenExisting is Open for a reader: a sqlite URL opens with sqlite.OpenExisting, so
// a path with no store file is msgstore.ErrNoStore (naming the path) and nothing is
// created. A postgres URL opens as in Open.
func OpenExisting(ctx context.Context, url string) (msgstore.Store, error) {
	return open(ctx, url, sqlite.OpenExisting)
}

// open is Open with openSQLite for sqlite URLs.
func open(ctx context.Context, url string, openSQLite func(string) (*sqlite.Store, error)) (msgstore.Store, error) {
	scheme, rest, ok := strings.Cut(url, ":")
	switch {
	case ok && scheme == "sqlite":
		path, err := sqlitePath(rest)
		if err != nil {
			return nil, fmt.Errorf("msgstore: open %q: %w", url, err)
		}
		return openSQLite(path)
	case ok && (scheme == "postgres" || scheme == "postgresql"):
		return postgres.Open(ctx, url)
	case ok && !strings.ContainsAny(scheme, "/@ "):
		// Only the scheme is named: the rest may hold a password.
		return nil, fmt.Errorf("msgstore: open: unsupported URL scheme %q: %w (want sqlite:, postgres: or postgresql:)", scheme, msgstore.ErrInvalid)
	}
	return nil, fmt.Errorf("msgstore: open: not a store URL: %w (want sqlite:///abs/path.db, sqlite:relative/path.db or postgres://...)", msgstore.ErrInvalid)
}

// sqlitePath returns the file path of a sqlite URL after its "sqlite:".
func sqlitePath(rest string) (string, error) {
	if strings.HasPrefix(rest, "//") {
		rest = strings.TrimPrefix(rest, "//")
		if !strings.HasPrefix(rest, "/") {
			return "", fmt.Errorf("%w: a sqlite URL has no host: write sqlite:///absolute/path.db or sqlite:relative/path.db", msgstore.ErrInvalid)
		}
	}
	if rest == "" {
		return "", fmt.Errorf("%w: sqlite URL has no path", msgstore.ErrInvalid)
	}
	if strings.ContainsAny(rest, "?#") {
		return "", fmt.Errorf("%w: sqlite URL takes no query or fragment", msgstore.ErrInvalid)
	}
	return rest, nil
}
