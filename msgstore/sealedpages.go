package msgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/agentchat/agentchat/keyring"
)

// sealedPages is Sealed over a PageStore: a PageStore whose page bodies are sealed at
// rest (docs/chat-state-v1.md, "Message store pages"). Each body is stored in the
// binary form of message bodies (BinaryRowPrefix), sealed with pageAAD, so a row copied
// to another page, lineage or chat does not open. Sealing is deterministic
// (keyring.SealDeterministic: the nonce is derived from the key, the additional data
// and the plaintext), so a retried PutPage writes the same bytes and the store's byte
// comparison makes it a no-op; a retry under a newer key (the ring rotated between
// attempts), or over a page stored before encryption was on, is compared opened, and
// the first row stays.
//
// The ids and roles in chat_message_ids stay in the clear, as message ids and roles do
// in the rows of chat_messages (their key column, and the JSON form's messageId and
// role): they are not the chat's content.
type sealedPages struct {
	*sealed
	pages PageStore
}

// pageAAD is the additional data a page body is sealed with: "page" NUL chatID NUL
// lineage NUL level NUL seq, level and seq in decimal.
func pageAAD(chatID string, key PageKey) []byte {
	return []byte("page\x00" + chatID + "\x00" + key.Lineage + "\x00" + strconv.Itoa(key.Level) + "\x00" + strconv.FormatInt(key.Seq, 10))
}

// sealPage returns the stored row of a plaintext page body: BinaryRowPrefix, one byte
// n, the current key id (n bytes), then nonce‖ciphertext‖tag.
func (s *sealedPages) sealPage(chatID string, key PageKey, plain []byte) []byte {
	id := s.ring.Current()
	row := make([]byte, 0, len(BinaryRowPrefix)+1+len(id)+keyring.NonceBytes+len(plain)+keyring.TagBytes)
	row = append(append(append(row, BinaryRowPrefix...), byte(len(id))), id...)
	_, row = s.ring.AppendSealDeterministic(row, plain, pageAAD(chatID, key))
	return row
}

// openPage returns the plaintext of a stored page row: a sealed row opened, any other
// (written before encryption was on) as it is. Errors name the chat and page and wrap
// *keyring.UnknownKeyError or keyring.ErrNotAuthentic (a row altered, or moved from
// another page, lineage or chat).
func (s *sealedPages) openPage(chatID string, key PageKey, row []byte) ([]byte, error) {
	if !bytes.HasPrefix(row, []byte(BinaryRowPrefix)) {
		return row, nil
	}
	keyID, data, ok := splitBinaryRow(row)
	if !ok {
		return nil, fmt.Errorf("msgstore: %s get chat %q: page %s: malformed sealed row (%d bytes)", s.Name(), chatID, key, len(row))
	}
	plain, err := s.ring.Open(keyID, data, pageAAD(chatID, key))
	if err != nil {
		return nil, fmt.Errorf("msgstore: %s get chat %q: page %s: %w", s.Name(), chatID, key, err)
	}
	return plain, nil
}

// PutPage seals p.Body and writes the page through the inner store; see PageStore.
// The digest is the sealed row's, as stored.
func (s *sealedPages) PutPage(ctx context.Context, chatID string, p Page) (string, error) {
	if _, err := CheckPage(s.Name(), chatID, p); err != nil {
		return "", err
	}
	plain := p.Body
	p.Body = s.sealPage(chatID, p.Key(), plain)
	digest, err := s.pages.PutPage(ctx, chatID, p)
	if !errors.Is(err, ErrConflict) {
		return digest, err
	}
	// The page may be stored under another key (or before encryption was on): the same
	// page once opened keeps its first row.
	stored, gerr := s.pages.GetPage(ctx, chatID, p.Key())
	if gerr != nil {
		return "", err
	}
	if opened, oerr := s.openPage(chatID, p.Key(), stored); oerr == nil && bytes.Equal(opened, plain) {
		return PageDigest(stored), nil
	}
	return "", err
}

// GetPage returns the opened plaintext body of a page; see PageStore.
func (s *sealedPages) GetPage(ctx context.Context, chatID string, key PageKey) ([]byte, error) {
	row, err := s.pages.GetPage(ctx, chatID, key)
	if err != nil {
		return nil, err
	}
	return s.openPage(chatID, key, row)
}

// LookupIDs is the inner store's: ids are kept in the clear.
func (s *sealedPages) LookupIDs(ctx context.Context, chatID string, kind IDKind, ids []string, in []LineageRange) (map[string]IDLocation, error) {
	return s.pages.LookupIDs(ctx, chatID, kind, ids, in)
}

// DeleteLineage is the inner store's.
func (s *sealedPages) DeleteLineage(ctx context.Context, chatID, lineage string) error {
	return s.pages.DeleteLineage(ctx, chatID, lineage)
}
