package msgstore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/b64"
	"github.com/agentchat/agentchat/keyring"
)

// ContentEncrypted is the content type of a sealed body in JSON form
// (docs/chat-state-v1.md, "Message store bodies"): {"type": "encrypted", "keyId": "k1", "data": "<base64>"}, where data is
// nonce‖ciphertext‖tag of the message's body (EncodeBody), sealed with the additional
// data chatID + "\x00" + messageID, so a body moved to another row does not open.
const ContentEncrypted = "encrypted"

// Sealed wraps a store so that message bodies are encrypted at rest with ring
// (docs/chat-state-v1.md, "Message store bodies"): a RowStore's rows hold the binary
// form (BinaryRowPrefix); any other store gets messages of the message id, role and
// one encrypted content (ContentEncrypted). Both forms, and bodies written before
// (plain), still read. Put stays idempotent: the same message under the same key seals
// to the same bytes (keyring.SealDeterministic); one stored under an older key or in
// the other form is compared decrypted. Large batches are sealed and opened on
// several goroutines. Get's errors add *keyring.UnknownKeyError and
// keyring.ErrNotAuthentic (a row altered or moved), naming the message.
//
// Over a PageStore, the Store returned is a PageStore too (and only then): page bodies
// are sealed in the binary form bound to their chat, lineage, level and seq, and
// GetPage returns them opened (docs/chat-state-v1.md, "Message store pages"). They
// seal deterministically, as message bodies do, so a retried PutPage is a no-op; one
// retried under a newer key, or over a page stored before encryption was on, is
// compared opened and the first row stays. PutPage's digest is of the sealed row. The
// ids and roles of chat_message_ids stay in the clear, as message ids and roles do.
func Sealed(inner Store, ring *keyring.Ring) Store {
	s := &sealed{inner: inner, ring: ring}
	if pages, ok := inner.(PageStore); ok {
		return &sealedPages{sealed: s, pages: pages}
	}
	return s
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

// sealedRow returns the stored body of m in JSON form, for a store that takes
// messages only: the bytes EncodeBody writes for the message {messageId, role,
// contents: [{"type": "encrypted", "keyId", "data"}]}.
func (s *sealed) sealedRow(chatID string, m chat.Message) ([]byte, error) {
	plain, err := EncodeBody(m)
	if err != nil {
		return nil, fmt.Errorf("msgstore: %s put chat %q: message %q: %w: %w", s.Name(), chatID, m.MessageID, ErrInvalid, err)
	}
	id, data := s.ring.SealDeterministic(plain, aad(chatID, m.MessageID))
	var b bytes.Buffer
	b.Grow(base64.StdEncoding.EncodedLen(len(data)) + 2*len(m.MessageID) + len(id) + 96)
	b.WriteString(`{"messageId":`)
	writeJSONString(&b, m.MessageID)
	b.WriteString(`,"role":`)
	writeJSONString(&b, string(m.Role))
	b.WriteString(`,"contents":[{"type":"encrypted","keyId":`)
	writeJSONString(&b, id)
	b.WriteString(`,"data":"`)
	b64.Append(&b, data)
	b.WriteString(`"}]}`)
	return b.Bytes(), nil
}

// BinaryRowPrefix starts a sealed body in binary form, as Sealed writes it to a
// RowStore (SQLite, PostgreSQL: their body columns are bytes; docs/chat-state-v1.md,
// "Message store bodies"): the prefix (a NUL, which starts no JSON, then "acs1"), one
// byte n, the key id (n bytes), then nonce‖ciphertext‖tag of the message's body
// (EncodeBody), sealed as the JSON form's data is. It is the JSON form less its base64
// and framing: about a third smaller.
const BinaryRowPrefix = "\x00acs1"

// binaryRow appends to arena the binary stored body of m (BinaryRowPrefix), and
// returns arena and the body (a part of it).
func (s *sealed) binaryRow(arena []byte, chatID string, m chat.Message) (outArena, body []byte, err error) {
	plain, err := EncodeBody(m)
	if err != nil {
		return arena, nil, fmt.Errorf("msgstore: %s put chat %q: message %q: %w: %w", s.Name(), chatID, m.MessageID, ErrInvalid, err)
	}
	id := s.ring.Current()
	need := len(BinaryRowPrefix) + 1 + len(id) + keyring.NonceBytes + len(plain) + keyring.TagBytes
	if cap(arena)-len(arena) < need { // a new block; the rows before keep the old one
		arena = make([]byte, 0, max(need, arenaBlock))
	}
	row := append(arena[len(arena):len(arena):len(arena)+need], BinaryRowPrefix...)
	row = append(append(row, byte(len(id))), id...)
	_, row = s.ring.AppendSealDeterministic(row, plain, aad(chatID, m.MessageID))
	return arena[:len(arena)+len(row)], row[:len(row):len(row)], nil
}

// openBinaryRow opens a body in binary form (BinaryRowPrefix), stored under id. body
// is left as it is (a Get may ask for the same id twice).
func (s *sealed) openBinaryRow(chatID, id string, body []byte) (chat.Message, error) {
	keyID, data, ok := splitBinaryRow(body)
	if !ok {
		return chat.Message{}, fmt.Errorf("msgstore: %s get chat %q: message %q: stored body: malformed sealed row (%d bytes)", s.Name(), chatID, id, len(body))
	}
	plain, err := s.ring.Open(keyID, data, aad(chatID, id))
	if err != nil {
		return chat.Message{}, fmt.Errorf("msgstore: %s get chat %q: message %q: %w", s.Name(), chatID, id, err)
	}
	out, err := chatstate.DecodeMessage(plain)
	if err != nil {
		return chat.Message{}, fmt.Errorf("msgstore: %s get chat %q: message %q: decrypted body: %w", s.Name(), chatID, id, err)
	}
	return out, nil
}

// splitBinaryRow returns the key id and nonce‖ciphertext‖tag of a body in binary form
// (BinaryRowPrefix); ok is false when it is malformed.
func splitBinaryRow(body []byte) (keyID string, data []byte, ok bool) {
	rest := body[len(BinaryRowPrefix):]
	if len(rest) < 1 || len(rest) < 1+int(rest[0]) || rest[0] == 0 {
		return "", nil, false
	}
	return string(rest[1 : 1+int(rest[0])]), rest[1+int(rest[0]):], true
}

// arenaBlock is the size of the blocks Put seals rows into (one allocation for many
// rows rather than one each).
const arenaBlock = 1 << 20

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

// openRow returns the message of a stored body: a sealed row (binary or JSON) opened,
// any other decoded.
func (s *sealed) openRow(chatID, id string, body []byte) (chat.Message, error) {
	if bytes.HasPrefix(body, []byte(BinaryRowPrefix)) {
		return s.openBinaryRow(chatID, id, body)
	}
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
func (s *sealed) openData(chatID, id, keyID string, b64data []byte) (chat.Message, error) {
	data, err := b64.Decode(b64data)
	if err != nil {
		return chat.Message{}, fmt.Errorf("msgstore: %s get chat %q: message %q: encrypted content: data: not standard base64", s.Name(), chatID, id)
	}
	body, err := s.ring.OpenInPlace(keyID, data, aad(chatID, id))
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
	_, binary := s.inner.(RowStore) // bytes as they are: the binary form
	err := inParallel(len(msgs), func(lo, hi int) error {
		var arena []byte
		for i, m := range msgs[lo:hi] {
			var body []byte
			var err error
			if binary {
				arena, body, err = s.binaryRow(arena, chatID, m)
			} else {
				body, err = s.sealedRow(chatID, m)
			}
			if err != nil {
				return err
			}
			rows[lo+i] = Row{ID: m.MessageID, Body: body}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = s.putRows(ctx, chatID, msgs, rows)
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
		err = inParallel(len(ids), func(lo, hi int) error {
			for i := lo; i < hi; i++ {
				body, ok := found[ids[i]]
				if !ok {
					return fmt.Errorf("msgstore: %s get chat %q: message %q: %w", s.Name(), chatID, ids[i], ErrNotFound)
				}
				var err error
				if out[i], err = s.openRow(chatID, ids[i], body); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	msgs, err := s.inner.Get(ctx, chatID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]chat.Message, len(msgs))
	err = inParallel(len(msgs), func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			var err error
			if out[i], err = s.open(chatID, ids[i], msgs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// parallelMin is the fewest rows worth a goroutine of their own in inParallel.
const parallelMin = 128

// inParallel runs f over [0, n) split into up to GOMAXPROCS consecutive parts at once
// (parts of at least parallelMin), and returns the error of the first part that
// failed: the first error in index order, as one loop would.
func inParallel(n int, f func(lo, hi int) error) error {
	parts := min(runtime.GOMAXPROCS(0), n/parallelMin)
	if parts <= 1 {
		return f(0, n)
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Go(func() { errs[p] = f(lo, hi) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
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
