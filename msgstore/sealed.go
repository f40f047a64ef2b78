package msgstore

import (
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

func (s *sealed) seal(chatID string, m chat.Message) (chat.Message, error) {
	body, err := EncodeBody(m)
	if err != nil {
		return chat.Message{}, fmt.Errorf("msgstore: %s put chat %q: message %q: %w: %w", s.Name(), chatID, m.MessageID, ErrInvalid, err)
	}
	id, data := s.ring.SealDeterministic(body, aad(chatID, m.MessageID))
	raw, err := json.Marshal(encryptedContent{Type: ContentEncrypted, KeyID: id, Data: base64.StdEncoding.EncodeToString(data)})
	if err != nil {
		return chat.Message{}, err
	}
	return chat.Message{MessageID: m.MessageID, Role: m.Role,
		Contents: []chat.Content{{Type: ContentEncrypted, Raw: raw}}}, nil
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
	data, err := base64.StdEncoding.DecodeString(c.Data)
	if err != nil {
		return chat.Message{}, fmt.Errorf("msgstore: %s get chat %q: message %q: encrypted content: data: not standard base64", s.Name(), chatID, m.MessageID)
	}
	body, err := s.ring.Open(c.KeyID, data, aad(chatID, id))
	if err != nil {
		return chat.Message{}, fmt.Errorf("msgstore: %s get chat %q: message %q: %w", s.Name(), chatID, id, err)
	}
	out, err := chatstate.DecodeMessage(body)
	if err != nil {
		return chat.Message{}, fmt.Errorf("msgstore: %s get chat %q: message %q: decrypted body: %w", s.Name(), chatID, m.MessageID, err)
	}
	return out, nil
}

func (s *sealed) Put(ctx context.Context, chatID string, msgs []chat.Message) error {
	rows := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		var err error
		if rows[i], err = s.seal(chatID, m); err != nil {
			return err
		}
	}
	err := s.inner.Put(ctx, chatID, rows)
	if !errors.Is(err, ErrConflict) {
		return err
	}
	// A conflict may be a message stored under an older key: the same once decrypted.
	rest, cerr := s.unstored(ctx, chatID, msgs, rows)
	if cerr != nil {
		return err
	}
	if len(rest) == len(rows) {
		return err
	}
	return s.inner.Put(ctx, chatID, rest)
}

// unstored returns the rows whose messages are not stored with the same body.
func (s *sealed) unstored(ctx context.Context, chatID string, msgs, rows []chat.Message) ([]chat.Message, error) {
	var rest []chat.Message
	for i, m := range msgs {
		got, err := s.Get(ctx, chatID, []string{m.MessageID})
		if errors.Is(err, ErrNotFound) {
			rest = append(rest, rows[i])
			continue
		}
		if err != nil {
			return nil, err
		}
		a, _ := EncodeBody(m)
		b, _ := EncodeBody(got[0])
		if !SameBody(a, b) {
			rest = append(rest, rows[i])
		}
	}
	return rest, nil
}

func (s *sealed) Get(ctx context.Context, chatID string, ids []string) ([]chat.Message, error) {
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
