package msgstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
)

// Store keeps chat messages by (chatID, messageID). Safe for concurrent use.
type Store interface {
	// Put writes messages in one transaction. Idempotent: putting a message whose
	// (chatID, messageID) exists with an identical body is a no-op; a different body is
	// ErrConflict and nothing of the call is written (a retried activity must never
	// change what a chat said). An empty chatID or messageID is ErrInvalid.
	Put(ctx context.Context, chatID string, msgs []chat.Message) error
	// Get returns the messages with these ids, in the order given (an id given twice is
	// returned twice). A missing id is ErrNotFound, wrapped, naming the id.
	Get(ctx context.Context, chatID string, ids []string) ([]chat.Message, error)
	// Name is "sqlite" or "postgres" (what a chat records as its store).
	Name() string
	// Close releases the store; later calls return ErrClosed. Closing twice is a no-op.
	Close() error
}

// Store names, as returned by Name.
const (
	NameSQLite   = "sqlite"
	NamePostgres = "postgres"
)

// SchemaVersion is the version of the table layout this build writes and reads. SQLite
// records it in PRAGMA user_version, PostgreSQL in the schema_version table.
const SchemaVersion = 1

// OpTimeout bounds each Put or Get, on top of the caller's context: a store that does
// not answer within it is ErrUnavailable.
const OpTimeout = 30 * time.Second

// Open opens the store a URL names:
//
//	sqlite:///abs/path.db, sqlite:relative/path.db   OpenSQLite
//	postgres://..., postgresql://...                  OpenPostgres, the URL as its DSN
//
// Anything else is ErrInvalid.
func Open(ctx context.Context, url string) (Store, error) {
	scheme, rest, ok := strings.Cut(url, ":")
	switch {
	case ok && scheme == "sqlite":
		path, err := sqlitePath(rest)
		if err != nil {
			return nil, fmt.Errorf("msgstore: open %q: %w", url, err)
		}
		return OpenSQLite(path)
	case ok && (scheme == "postgres" || scheme == "postgresql"):
		return OpenPostgres(ctx, url)
	case ok && !strings.ContainsAny(scheme, "/@ "):
		// Only the scheme is named: the rest may hold a password.
		return nil, fmt.Errorf("msgstore: open: unsupported URL scheme %q: %w (want sqlite:, postgres: or postgresql:)", scheme, ErrInvalid)
	}
	return nil, fmt.Errorf("msgstore: open: not a store URL: %w (want sqlite:///abs/path.db, sqlite:relative/path.db or postgres://...)", ErrInvalid)
}

// sqlitePath returns the file path of a sqlite URL after its "sqlite:".
func sqlitePath(rest string) (string, error) {
	if strings.HasPrefix(rest, "//") {
		rest = strings.TrimPrefix(rest, "//")
		if !strings.HasPrefix(rest, "/") {
			return "", fmt.Errorf("%w: a sqlite URL has no host: write sqlite:///absolute/path.db or sqlite:relative/path.db", ErrInvalid)
		}
	}
	if rest == "" {
		return "", fmt.Errorf("%w: sqlite URL has no path", ErrInvalid)
	}
	if strings.ContainsAny(rest, "?#") {
		return "", fmt.Errorf("%w: sqlite URL takes no query or fragment", ErrInvalid)
	}
	return rest, nil
}

// encode returns the stored body of m, always the same for the same message, without
// a newline: canonical JSON (chatstate.EncodeMessage, which chatstate.DecodeMessage
// reads fastest), or, when m has a content of a type chat does not know, its JSON as
// encoding/json writes it without HTML escaping, so that content keeps its bytes.
func encode(m chat.Message) ([]byte, error) {
	if !slices.ContainsFunc(m.Contents, func(c chat.Content) bool { return !c.Known() }) {
		return chatstate.EncodeMessage(m)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// sameBody reports whether two stored bodies hold the same message: the same bytes, or,
// for a body written by an older version in another JSON layout, the same message once
// both are read and written canonically.
func sameBody(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	canonical := func(body []byte) []byte {
		m, err := chatstate.DecodeMessage(body)
		if err != nil {
			return nil
		}
		enc, _ := chatstate.EncodeMessage(m)
		return enc
	}
	ca, cb := canonical(a), canonical(b)
	return ca != nil && bytes.Equal(ca, cb)
}

// row is one message ready to be written.
type row struct {
	id   string
	body []byte
}

// encodeAll validates and encodes msgs. A message id given twice must have the same
// body both times; the second is dropped.
func encodeAll(store, chatID string, msgs []chat.Message) ([]row, error) {
	if err := validID(chatID); err != nil {
		return nil, fmt.Errorf("msgstore: %s put: chat id %q: %w", store, chatID, err)
	}
	rows := make([]row, 0, len(msgs))
	seen := make(map[string]int, len(msgs))
	for i, m := range msgs {
		if err := validID(m.MessageID); err != nil {
			return nil, fmt.Errorf("msgstore: %s put chat %q: message %d: id %q: %w", store, chatID, i, m.MessageID, err)
		}
		body, err := encode(m)
		if err != nil {
			return nil, fmt.Errorf("msgstore: %s put chat %q: message %q: %w: %w", store, chatID, m.MessageID, ErrInvalid, err)
		}
		if j, dup := seen[m.MessageID]; dup {
			if !sameBody(rows[j].body, body) {
				return nil, conflictError(store, chatID, m.MessageID)
			}
			continue
		}
		seen[m.MessageID] = len(rows)
		rows = append(rows, row{id: m.MessageID, body: body})
	}
	return rows, nil
}

// checkIDs validates the arguments of Get.
func checkIDs(store, chatID string, ids []string) error {
	if err := validID(chatID); err != nil {
		return fmt.Errorf("msgstore: %s get: chat id %q: %w", store, chatID, err)
	}
	for _, id := range ids {
		if err := validID(id); err != nil {
			return fmt.Errorf("msgstore: %s get chat %q: message id %q: %w", store, chatID, id, err)
		}
	}
	return nil
}

// validID accepts a non-empty UTF-8 string without NUL, which both stores can key on
// (PostgreSQL text refuses NUL and invalid UTF-8).
func validID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty id", ErrInvalid)
	case !utf8.ValidString(id) || strings.ContainsRune(id, 0):
		return fmt.Errorf("%w: id is not UTF-8 text without NUL", ErrInvalid)
	}
	return nil
}

// wrapOp prefixes the error of an operation with what it was, "msgstore: <what>: ", and
// marks it ErrUnavailable when the store says so (unavailable) or the operation ran past
// OpTimeout (opCtx done) while the caller's ctx was still live. ErrConflict errors
// already say where and what and are returned as they are; ErrSchema is never
// ErrUnavailable.
func wrapOp(ctx, opCtx context.Context, what string, err error, unavailable func(error) bool) error {
	if errors.Is(err, ErrConflict) {
		return err
	}
	if !errors.Is(err, ErrSchema) && ctx.Err() == nil && (opCtx.Err() != nil || unavailable(err)) {
		return fmt.Errorf("msgstore: %s: %w: %w", what, ErrUnavailable, err)
	}
	return fmt.Errorf("msgstore: %s: %w", what, err)
}

func conflictError(store, chatID, id string) error {
	return fmt.Errorf("msgstore: %s put chat %q: message %q: %w", store, chatID, id, ErrConflict)
}

// ordered decodes the bodies found into the order of ids; the first id not found is
// ErrNotFound.
func ordered(store, chatID string, ids []string, found map[string][]byte) ([]chat.Message, error) {
	out := make([]chat.Message, 0, len(ids))
	for _, id := range ids {
		body, ok := found[id]
		if !ok {
			return nil, fmt.Errorf("msgstore: %s get chat %q: message %q: %w", store, chatID, id, ErrNotFound)
		}
		m, err := chatstate.DecodeMessage(body)
		if err != nil {
			return nil, fmt.Errorf("msgstore: %s get chat %q: message %q: stored body: %w", store, chatID, id, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// unique returns ids without repeats, in first-seen order.
func unique(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// chunks calls f with consecutive slices of s of at most n elements.
func chunks[T any](s []T, n int, f func([]T) error) error {
	for len(s) > 0 {
		k := min(n, len(s))
		if err := f(s[:k]); err != nil {
			return err
		}
		s = s[k:]
	}
	return nil
}
