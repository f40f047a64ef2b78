package msgstoretest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
)

// runPageRow checks GetPageRow, for runPages: the body is the page's (what GetPage
// gives), the stored row has the digest PutPage returned; a page the chat lacks is
// ErrPageMissing and a bad key ErrInvalid.
func runPageRow(t *testing.T, open func(t *testing.T) msgstore.PageStore) {
	ctx := context.Background()
	t.Run("GetPageRow", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		p := SamplePage(t, chatID, "L", 0, 0, 4)
		digest, err := s.PutPage(ctx, chatID, p)
		require.NoError(t, err)
		row, err := s.GetPageRow(ctx, chatID, p.Key())
		require.NoError(t, err)
		assert.Equal(t, string(p.Body), string(row.Body))
		assert.Equal(t, digest, msgstore.PageDigest(row.Stored), "the digest is of the row as stored")
		got, err := s.GetPage(ctx, chatID, p.Key())
		require.NoError(t, err)
		assert.Equal(t, string(got), string(row.Body), "the body GetPage gives")

		_, err = s.GetPageRow(ctx, chatID, msgstore.PageKey{Lineage: "L", Seq: 1})
		require.ErrorIs(t, err, msgstore.ErrPageMissing)
		assert.Contains(t, err.Error(), chatID)
		_, err = s.GetPageRow(ctx, chatID, msgstore.PageKey{})
		require.ErrorIs(t, err, msgstore.ErrInvalid)
	})
}

// runSealedPageRow checks GetPageRow through Sealed, for RunSealedPages: the stored
// row is the sealed bytes (whose digest PutPage returned) and the body its plaintext;
// the store read without the ring refuses the sealed row with ErrEncrypted naming the
// key id; a page written before encryption reads as both.
func runSealedPageRow(t *testing.T, open func(t *testing.T) msgstore.PageStore, ring *keyring.Ring) {
	ctx := context.Background()
	t.Run("GetPageRow", func(t *testing.T) {
		raw := open(t)
		s, ok := msgstore.Sealed(raw, ring).(msgstore.PageStore)
		require.True(t, ok)
		chatID := NewChatID(t)
		p := SamplePage(t, chatID, "L", 0, 0, 4)
		digest, err := s.PutPage(ctx, chatID, p)
		require.NoError(t, err)
		row, err := s.GetPageRow(ctx, chatID, p.Key())
		require.NoError(t, err)
		stored, err := raw.GetPage(ctx, chatID, p.Key())
		require.NoError(t, err)
		assert.Equal(t, stored, row.Stored, "the row as stored, sealed")
		assert.Equal(t, digest, msgstore.PageDigest(row.Stored))
		assert.Equal(t, string(p.Body), string(row.Body), "the body opened")

		_, err = raw.GetPageRow(ctx, chatID, p.Key())
		require.ErrorIs(t, err, msgstore.ErrEncrypted, "a sealed row read without the ring")
		assert.Contains(t, err.Error(), ring.Current())

		plain := SamplePage(t, chatID, "L", 1, 4, 4)
		_, err = raw.PutPage(ctx, chatID, plain)
		require.NoError(t, err)
		row, err = s.GetPageRow(ctx, chatID, plain.Key())
		require.NoError(t, err)
		assert.Equal(t, string(plain.Body), string(row.Stored), "a page stored before encryption was on")
		assert.Equal(t, string(plain.Body), string(row.Body))

		_, err = s.GetPageRow(ctx, chatID, msgstore.PageKey{Lineage: "L", Seq: 9})
		require.ErrorIs(t, err, msgstore.ErrPageMissing)

		// A sealed row under another key does not open, and still gives its bytes.
		_, err = raw.PutPage(ctx, chatID, msgstore.Page{Lineage: "L", Seq: 2, First: 8, Count: 4, Body: stored})
		require.NoError(t, err)
		row, err = s.GetPageRow(ctx, chatID, msgstore.PageKey{Lineage: "L", Seq: 2})
		require.ErrorIs(t, err, keyring.ErrNotAuthentic)
		assert.Equal(t, stored, row.Stored, "the row that does not open, for its digest")
		assert.Nil(t, row.Body)
	})
}
