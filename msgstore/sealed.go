package msgstore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/keyring"
)

// ContentEncrypted is the content type of a sealed body (docs/chat-state-v1.md,
// "Envelope"): {"type": "encrypted", "keyId": "k1", "data": "<base64>"}, where data is
// nonce‖ciphertext‖tag of the message's body (EncodeBody), sealed with the additional
// data chatID + "\x00" + messageID, so a body moved to another row does not open.
const ContentEncrypted = "encrypted"

// Sealed wraps a store so that message bodies are encrypted at rest with ring: each
// row holds its message id and role, and one encrypted content. Bodies written before
// (plain) still read. Put stays idempotent: the same message under the same key seals
// to the same bytes (keyring.SealDeterministic); one stored under an older key is
// compared decrypted. Get's errors add *keyring.UnknownKeyError and
// keyring.ErrNotAuthentic (a row altered or moved), naming the message.
func Sealed(inner Store, ring *keyring.Ring) Store {
	return &sealed{inner: inner, ring: ring}
}

type sealed struct {
	inner Store
	ring  *keyring.Ring
}

type encryptedContent struct {
	Type  string `json:"type"`
	KeyID string `json:"keyId"`
	Data  string `json:"data"`
}

func (s *sealed) Name() string { return s.inner.Name() }
func (s *sealed) Close() error { return s.inner.Close() }

func aad(chatID, messageID string) []byte { return []byte(chatID + "\x00" + messageID) }

// sealedRow returns the stored body of m: the bytes EncodeBody writes for the message
// {messageId, role, contents: [{"type": "encrypted", "keyId", "data"}]}.
func (s *sealed) sealedRow(chatID string, m chat.Message) ([]byte, error) {
	body, err := EncodeBody(m)
	if err != nil {
		return nil, fmt.Errorf("msgstore: %s put chat %q: message %q: %w: %w", s.Name(), chatID, m.MessageID, ErrInvalid, err)
	}
	id, data := s.ring.SealDeterministic(body, aad(chatID, m.MessageID))
	var b bytes.Buffer
	b.Grow(len(data)*4/3 + len(m.MessageID) + 96)
	b.WriteString(`{"messageId":`)
	writeJSONString(&b, m.MessageID)
	b.WriteString(`,"role":`)
	writeJSONString(&b, string(m.Role))
	b.WriteString(`,"contents":[{"type":"encrypted","keyId":`)
	writeJSONString(&b, id)
	b.WriteString(`,"data":"`)
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	_, _ = enc.Write(data)
	_ = enc.Close()
	b.WriteString(`"}]}`)
	return b.Bytes(), nil
}

// writeJSONString writes s as a JSON string, as EncodeBody does (no HTML escaping).
func writeJSONString(b *bytes.Buffer, s string) {
	if plainASCII(s) {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // the encoder's newline
}

// asMessage is the message whose stored body is row (sealedRow's), for a store that
// takes messages only.
func asMessage(m chat.Message, row []byte) chat.Message {
	raw := row[bytes.Index(row, []byte(`[{`))+1 : len(row)-2]
	return chat.Message{MessageID: m.MessageID, Role: m.Role,
		Contents: []chat.Content{{Type: ContentEncrypted, Raw: raw}}}
}

// openRow returns the message of a stored body: a sealed row opened, any other decoded.
func (s *sealed) openRow(chatID, id string, body []byte) (chat.Message, error) {
	const kind, dataKey, end = `,"contents":[{"type":"encrypted","keyId":`, `,"data":"`, `"}]}`
	k := bytes.Index(body, []byte(kind)) // the id and role before it are escaped JSON strings
	i := -1
	if k >= 0 {
		if j := bytes.Index(body[k:], []byte(dataKey)); j >= 0 {
			i = k + j
		}
	}
	if !bytes.HasPrefix(body, []byte(`{"messageId":`)) || !bytes.HasSuffix(body, []byte(end)) || i < 0 {
		m, err := chatstate.DecodeMessage(body)
		if err != nil {
			return chat.Message{}, fmt.Errorf("msgstore: %s get chat %q: message %q: stored body: %w", s.Name(), chatID, id, err)
		}
		return s.open(chatID, id, m)
	}
	var keyID string
	if json.Unmarshal(body[k+len(kind):i], &keyID) != nil {
		return chat.Message{}, fmt.Errorf("msgstore: %s get chat %q: message %q: encrypted content: keyId: malformed", s.Name(), chatID, id)
	}
	return s.openData(chatID, id, keyID, body[i+len(dataKey):len(body)-len(end)])
}

// open opens the row stored under id (the id asked for, not the one the row says).
func (s *sealed) open(chatID, id string, m chat.Message) (chat.Message, error) {
	if len(m.Contents) != 1 || m.Contents[0].Type != ContentEncrypted {
		return m, nil // written before encryption was on
	}
	var c encryptedContent
	if err := json.Unmarshal(m.Contents[0].Raw, &c); err != nil {
		return chat.Message{}, fmt.Errorf("msgstore: %s get chat %q: message %q: encrypted content: %w", s.Name(), chatID, m.MessageID, err)
	}
	return s.openData(chatID, id, c.KeyID, []byte(c.Data))
}

// openData opens the base64 data of an encrypted content stored under id.
func (s *sealed) openData(chatID, id, keyID string, b64 []byte) (chat.Message, error) {
	data := make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
	n, err := base64.StdEncoding.Decode(data, b64)
	if err != nil {
		return chat.Message{}, fmt.Errorf("msgstore: %s get chat %q: message %q: encrypted content: data: not standard base64", s.Name(), chatID, id)
	}
	body, err := s.ring.Open(keyID, data[:n], aad(chatID, id))
	if err != nil {
		return chat.Message{}, fmt.Errorf("msgstore: %s get chat %q: message %q: %w", s.Name(), chatID, id, err)
	}
	out, err := chatstate.DecodeMessage(body)
	if err != nil {
		return chat.Message{}, fmt.Errorf("msgstore: %s get chat %q: message %q: decrypted body: %w", s.Name(), chatID, id, err)
	}
	return out, nil
}

func (s *sealed) Put(ctx context.Context, chatID string, msgs []chat.Message) error {
	rows := make([]Row, len(msgs))
	for i, m := range msgs {
		body, err := s.sealedRow(chatID, m)
		if err != nil {
			return err
		}
		rows[i] = Row{ID: m.MessageID, Body: body}
	}
	err := s.putRows(ctx, chatID, msgs, rows)
	if !errors.Is(err, ErrConflict) {
		return err
	}
	// A conflict may be a message stored under an older key: the same once decrypted.
	var restMsgs []chat.Message
	var restRows []Row
	for i, m := range msgs {
		got, gerr := s.Get(ctx, chatID, []string{m.MessageID})
		if gerr != nil && !errors.Is(gerr, ErrNotFound) {
			return err
		}
		if gerr == nil {
			a, _ := EncodeBody(m)
			b, _ := EncodeBody(got[0])
			if SameBody(a, b) {
				continue
			}
		}
		restMsgs, restRows = append(restMsgs, m), append(restRows, rows[i])
	}
	if len(restRows) == len(rows) {
		return err
	}
	return s.putRows(ctx, chatID, restMsgs, restRows)
}

// putRows writes the sealed rows of msgs: as they are to a RowStore, as messages
// (asMessage) to any other store.
func (s *sealed) putRows(ctx context.Context, chatID string, msgs []chat.Message, rows []Row) error {
	if len(rows) == 0 {
		return nil
	}
	if rs, ok := s.inner.(RowStore); ok {
		return rs.PutRows(ctx, chatID, rows)
	}
	wrapped := make([]chat.Message, len(rows))
	for i, r := range rows {
		wrapped[i] = asMessage(msgs[i], r.Body)
	}
	return s.inner.Put(ctx, chatID, wrapped)
}

func (s *sealed) Get(ctx context.Context, chatID string, ids []string) ([]chat.Message, error) {
	if rs, ok := s.inner.(RowStore); ok {
		found, err := rs.GetRows(ctx, chatID, ids)
		if err != nil {
			return nil, err
		}
		out := make([]chat.Message, len(ids))
		for i, id := range ids {
			body, ok := found[id]
			if !ok {
				return nil, fmt.Errorf("msgstore: %s get chat %q: message %q: %w", s.Name(), chatID, id, ErrNotFound)
			}
			if out[i], err = s.openRow(chatID, id, body); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	msgs, err := s.inner.Get(ctx, chatID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		if out[i], err = s.open(chatID, ids[i], m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RowStore is a Store that also writes and reads stored bodies as they are, for a
// wrapper that writes bodies of its own (Sealed): PutRows is Put of bodies already
// encoded (the same rules: ids validated, idempotent, ErrConflict), GetRows returns the
// bodies of those ids the chat holds (an id it lacks is absent from the map).
type RowStore interface {
	Store
	PutRows(ctx context.Context, chatID string, rows []Row) error
	GetRows(ctx context.Context, chatID string, ids []string) (map[string][]byte, error)
}

// plainASCII reports whether s is printable ASCII without '"' or '\\': a JSON
// string of it is s in quotes.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
