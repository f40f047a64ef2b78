package msgstoretest

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
)

// RunSealedPages checks msgstore.Sealed's pages over the PageStore open opens (a store
// as it is, not sealed), in subtests: rows hold no plaintext and their digest is of the
// stored bytes, sealing is deterministic, a retry under a rotated key is a no-op and a
// changed page under it ErrConflict, a page stored before encryption still reads, and a
// sealed row copied to another seq, level, lineage or chat does not open; GetPageRow
// gives the sealed row and its opening.
func RunSealedPages(t *testing.T, open func(t *testing.T) msgstore.PageStore) {
	ctx := context.Background()
	f1, err := keyring.Generate("k1")
	require.NoError(t, err)
	ring1, err := keyring.New(f1)
	require.NoError(t, err)
	f2, err := keyring.Generate("k2")
	require.NoError(t, err)
	f2.Keys["k1"] = f1.Keys["k1"]
	ring2, err := keyring.New(f2) // k2 current, k1 still opens
	require.NoError(t, err)
	sealedOver := func(t *testing.T, raw msgstore.PageStore, ring *keyring.Ring) msgstore.PageStore {
		t.Helper()
		s, ok := msgstore.Sealed(raw, ring).(msgstore.PageStore)
		require.True(t, ok, "Sealed over a PageStore is a PageStore")
		return s
	}
	runSealedPageRow(t, open, ring1)

	t.Run("SealedRowsAndRotatedKey", func(t *testing.T) {
		raw := open(t)
		chatID := NewChatID(t)
		p := SamplePage(t, chatID, "L", 0, 0, 4)
		old := sealedOver(t, raw, ring1)
		digest, err := old.PutPage(ctx, chatID, p)
		require.NoError(t, err)
		row, err := raw.GetPage(ctx, chatID, p.Key())
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(row, []byte(msgstore.BinaryRowPrefix+"\x02k1")), "the binary form, key k1: %q", row[:min(len(row), 12)])
		assert.NotContains(t, string(row), "lineage L")
		assert.Equal(t, msgstore.PageDigest(row), digest, "the digest is of the row as stored")

		rotated := sealedOver(t, raw, ring2)
		again, err := rotated.PutPage(ctx, chatID, p)
		require.NoError(t, err, "a retry under the new key is a no-op")
		assert.Equal(t, digest, again, "the first row's digest")
		after, err := raw.GetPage(ctx, chatID, p.Key())
		require.NoError(t, err)
		assert.Equal(t, row, after, "the first row stays")
		got, err := rotated.GetPage(ctx, chatID, p.Key())
		require.NoError(t, err)
		assert.Equal(t, string(p.Body), string(got), "opened with the rotated-out key")

		changed := p
		changed.Body = bytes.Replace(p.Body, []byte("message 0"), []byte("message X"), 1)
		_, err = rotated.PutPage(ctx, chatID, changed)
		require.ErrorIs(t, err, msgstore.ErrConflict)
		assert.Contains(t, err.Error(), digest)

		_, err = sealedOver(t, raw, ring2).PutPage(ctx, chatID, SamplePage(t, chatID, "L", 1, 4, 4))
		require.NoError(t, err)
		row1, err := raw.GetPage(ctx, chatID, msgstore.PageKey{Lineage: "L", Seq: 1})
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(row1, []byte(msgstore.BinaryRowPrefix+"\x02k2")), "a new page under the current key")
	})

	t.Run("SealingIsDeterministic", func(t *testing.T) {
		raw := open(t)
		chatID := NewChatID(t)
		s := sealedOver(t, raw, ring1)
		p := SamplePage(t, chatID, "L", 0, 0, 4)
		first, err := s.PutPage(ctx, chatID, p)
		require.NoError(t, err)
		row, err := raw.GetPage(ctx, chatID, p.Key())
		require.NoError(t, err)
		require.NoError(t, s.DeleteLineage(ctx, chatID, "L"))
		second, err := s.PutPage(ctx, chatID, p)
		require.NoError(t, err)
		assert.Equal(t, first, second)
		again, err := raw.GetPage(ctx, chatID, p.Key())
		require.NoError(t, err)
		assert.Equal(t, row, again, "the same page under the same key seals to the same bytes")
	})

	t.Run("SealedPageMovedDoesNotOpen", func(t *testing.T) {
		raw := open(t)
		chatID, otherChat := NewChatID(t), NewChatID(t)
		s := sealedOver(t, raw, ring1)
		p := SamplePage(t, chatID, "L", 0, 0, 4)
		_, err := s.PutPage(ctx, chatID, p)
		require.NoError(t, err)
		row, err := raw.GetPage(ctx, chatID, p.Key())
		require.NoError(t, err)
		for _, to := range []struct {
			chat string
			key  msgstore.PageKey
		}{
			{chatID, msgstore.PageKey{Lineage: "L", Seq: 1}},
			{chatID, msgstore.PageKey{Lineage: "L", Level: 1}},
			{chatID, msgstore.PageKey{Lineage: "M"}},
			{otherChat, msgstore.PageKey{Lineage: "L"}},
		} {
			_, err := raw.PutPage(ctx, to.chat, msgstore.Page{Lineage: to.key.Lineage, Level: to.key.Level, Seq: to.key.Seq, First: 4, Count: 4, Body: row})
			require.NoError(t, err)
			_, err = s.GetPage(ctx, to.chat, to.key)
			require.ErrorIs(t, err, keyring.ErrNotAuthentic, "%s in %s", to.key, to.chat)
			t.Logf("moved to %s: %v", to.key, err)
			assert.Contains(t, err.Error(), to.key.String())
			assert.Contains(t, err.Error(), to.chat)
		}
		_, err = s.GetPage(ctx, chatID, p.Key())
		require.NoError(t, err, "the row where it was written still opens")
	})

	t.Run("PlainPageStillReads", func(t *testing.T) {
		raw := open(t)
		chatID := NewChatID(t)
		p := SamplePage(t, chatID, "L", 0, 0, 4)
		digest, err := raw.PutPage(ctx, chatID, p)
		require.NoError(t, err)
		s := sealedOver(t, raw, ring1)
		got, err := s.GetPage(ctx, chatID, p.Key())
		require.NoError(t, err)
		assert.Equal(t, string(p.Body), string(got), "a page stored before encryption was on")
		again, err := s.PutPage(ctx, chatID, p)
		require.NoError(t, err, "a retry with encryption on is a no-op")
		assert.Equal(t, digest, again)

		_, err = s.GetPage(ctx, chatID, msgstore.PageKey{Lineage: "L", Seq: 9})
		require.ErrorIs(t, err, msgstore.ErrPageMissing)
	})
}
