package msgstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
)

// EncodeBody returns the stored body of m, always the same for the same message, without
// a newline: canonical JSON (chatstate.EncodeMessage, which chatstate.DecodeMessage
// reads fastest), or, when m has a content of a type chat does not know, its JSON as
// encoding/json writes it without HTML escaping, so that content keeps its bytes.
func EncodeBody(m chat.Message) ([]byte, error) {
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

// SameBody reports whether two stored bodies hold the same message: the same bytes, or,
// for a body written by an older version in another JSON layout, the same message once
// both are read and written canonically. Unreadable bodies are never the same. A Put
// that finds an id already stored compares the bodies with SameBody: false is
// ErrConflict (ConflictError).
func SameBody(a, b []byte) bool {
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

// Row is one message ready to be written: its id and its body (EncodeBody).
type Row struct {
	ID   string
	Body []byte
}

// CheckPut validates the arguments of Put and encodes msgs, in order. A message id
// given twice must have the same body both times (else ErrConflict); the second is
// dropped. An invalid chat id or message id, or a body that cannot be encoded, is
// ErrInvalid. store is the Name of the calling store, for the errors.
func CheckPut(store, chatID string, msgs []chat.Message) ([]Row, error) {
	if err := validID(chatID); err != nil {
		return nil, fmt.Errorf("msgstore: %s put: chat id %q: %w", store, chatID, err)
	}
	rows := make([]Row, 0, len(msgs))
	seen := make(map[string]int, len(msgs))
	for i, m := range msgs {
		if err := validID(m.MessageID); err != nil {
			return nil, fmt.Errorf("msgstore: %s put chat %q: message %d: id %q: %w", store, chatID, i, m.MessageID, err)
		}
		body, err := EncodeBody(m)
		if err != nil {
			return nil, fmt.Errorf("msgstore: %s put chat %q: message %q: %w: %w", store, chatID, m.MessageID, ErrInvalid, err)
		}
		if j, dup := seen[m.MessageID]; dup {
			if !SameBody(rows[j].Body, body) {
				return nil, ConflictError(store, chatID, m.MessageID)
			}
			continue
		}
		seen[m.MessageID] = len(rows)
		rows = append(rows, Row{ID: m.MessageID, Body: body})
	}
	return rows, nil
}

// CheckRows validates the arguments of RowStore.PutRows as CheckPut does those of
// Put, and drops a repeated id whose body is the same (else ErrConflict).
func CheckRows(store, chatID string, rows []Row) ([]Row, error) {
	if err := validID(chatID); err != nil {
		return nil, fmt.Errorf("msgstore: %s put: chat id %q: %w", store, chatID, err)
	}
	out := make([]Row, 0, len(rows))
	seen := make(map[string]int, len(rows))
	for i, r := range rows {
		if err := validID(r.ID); err != nil {
			return nil, fmt.Errorf("msgstore: %s put chat %q: message %d: id %q: %w", store, chatID, i, r.ID, err)
		}
		if j, dup := seen[r.ID]; dup {
			if !SameBody(out[j].Body, r.Body) {
				return nil, ConflictError(store, chatID, r.ID)
			}
			continue
		}
		seen[r.ID] = len(out)
		out = append(out, r)
	}
	return out, nil
}

// CheckGet validates the arguments of Get (an invalid chat id or message id is
// ErrInvalid) and returns ids without repeats, in first-seen order: the ids to read.
// store is the Name of the calling store, for the errors.
func CheckGet(store, chatID string, ids []string) ([]string, error) {
	if err := validID(chatID); err != nil {
		return nil, fmt.Errorf("msgstore: %s get: chat id %q: %w", store, chatID, err)
	}
	seen := make(map[string]bool, len(ids))
	distinct := make([]string, 0, len(ids))
	for _, id := range ids {
		if err := validID(id); err != nil {
			return nil, fmt.Errorf("msgstore: %s get chat %q: message id %q: %w", store, chatID, id, err)
		}
		if !seen[id] {
			seen[id] = true
			distinct = append(distinct, id)
		}
	}
	return distinct, nil
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

// WrapOp prefixes the error of an operation with what it was, "msgstore: <what>: ", and
// marks it ErrUnavailable when the store says so (unavailable, the implementation's
// classifier of its driver's errors) or the operation ran past OpTimeout (opCtx done)
// while the caller's ctx was still live. ErrConflict errors already say where and what
// and are returned as they are; ErrSchema is never ErrUnavailable.
func WrapOp(ctx, opCtx context.Context, what string, err error, unavailable func(error) bool) error {
	if errors.Is(err, ErrConflict) {
		return err
	}
	if !errors.Is(err, ErrSchema) && ctx.Err() == nil && (opCtx.Err() != nil || unavailable(err)) {
		return fmt.Errorf("msgstore: %s: %w: %w", what, ErrUnavailable, err)
	}
	return fmt.Errorf("msgstore: %s: %w", what, err)
}

// ConflictError is the ErrConflict of a Put that found message id stored in chatID
// with another body.
func ConflictError(store, chatID, id string) error {
	return fmt.Errorf("msgstore: %s put chat %q: message %q: %w", store, chatID, id, ErrConflict)
}

// Ordered decodes the bodies found (by message id) into the order of ids, an id given
// twice returned twice; the first id not found is ErrNotFound naming it. A body sealed
// in binary form (Sealed over a RowStore; BinaryRowPrefix), which only Sealed reads,
// is ErrEncrypted naming its key id. It is what Get returns once the bodies are read.
func Ordered(store, chatID string, ids []string, found map[string][]byte) ([]chat.Message, error) {
	out := make([]chat.Message, 0, len(ids))
	for _, id := range ids {
		body, ok := found[id]
		if !ok {
			return nil, fmt.Errorf("msgstore: %s get chat %q: message %q: %w", store, chatID, id, ErrNotFound)
		}
		if bytes.HasPrefix(body, []byte(BinaryRowPrefix)) {
			keyID, _, _ := splitBinaryRow(body)
			return nil, fmt.Errorf("msgstore: %s get chat %q: message %q: %w (key id %q)", store, chatID, id, ErrEncrypted, keyID)
		}
		m, err := chatstate.DecodeMessage(body)
		if err != nil {
			return nil, fmt.Errorf("msgstore: %s get chat %q: message %q: stored body: %w", store, chatID, id, err)
		}
		out = append(out, m)
	}
	return out, nil
}
