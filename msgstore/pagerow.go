package msgstore

import (
	"bytes"
	"context"
	"fmt"
)

// PageRow is a page as GetPageRow reads it: Stored, the row's bytes as the store holds
// them (sealed or not: what PageDigest and an index entry's digest are over), and
// Body, the plaintext body (docs/chat-state-v1.md, "Message store pages"). For a row
// written without encryption both are the same bytes.
type PageRow struct {
	Stored []byte
	Body   []byte
}

// PlainPageRow is GetPageRow's answer for a store read as it is, from row, its stored
// bytes: the row as both Stored and Body. A sealed row (BinaryRowPrefix), which only
// Sealed opens, is ErrEncrypted naming the chat, the page and the key id. store is the
// Name of the calling store, for the error.
func PlainPageRow(store, chatID string, key PageKey, row []byte) (PageRow, error) {
	if bytes.HasPrefix(row, []byte(BinaryRowPrefix)) {
		keyID, _, _ := splitBinaryRow(row)
		return PageRow{}, fmt.Errorf("msgstore: %s get chat %q: page %s: %w (key id %q)", store, chatID, key, ErrEncrypted, keyID)
	}
	return PageRow{Stored: row, Body: row}, nil
}

// GetPageRow returns the page's row as the inner store holds it (sealed) and its
// opened plaintext body; see PageStore. A row that does not open comes with its error
// and Stored set.
func (s *sealedPages) GetPageRow(ctx context.Context, chatID string, key PageKey) (PageRow, error) {
	row, err := s.pages.GetPage(ctx, chatID, key)
	if err != nil {
		return PageRow{}, err
	}
	body, err := s.openPage(chatID, key, row)
	if err != nil {
		return PageRow{Stored: row}, err
	}
	return PageRow{Stored: row, Body: body}, nil
}
