package integration_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/keyring"
)

// ExportSealed of a chat whose bodies are in the worker's store (the worker exports):
// the envelope the worker wrote is kept when the client wraps the same way, and sealed
// again under the client's key when it does not; either way it opens to the whole
// chat and states its counts, and the worker imports what is sealed with its key.
func TestExportSealedKeepsOrResealsTheWorkersEnvelope(t *testing.T) {
	f := ringFile(t, "k1")
	ring, err := keyring.New(f)
	require.NoError(t, err)
	h, id := encryptedLongChat(t, ring)

	// The client's ring adds k2 and seals with it; the worker's still seals with k1.
	rotated := keyring.File{Current: "k2", Keys: map[string]string{"k1": f.Keys["k1"]}}
	k2, err := keyring.Generate("k2")
	require.NoError(t, err)
	rotated.Keys["k2"] = k2.Keys["k2"]
	newRing, err := keyring.New(rotated)
	require.NoError(t, err)
	rotatedClient := agentchat.NewClient(h.Temporal, agentchat.ClientOptions{TaskQueue: h.TaskQueue, Keys: newRing})

	for name, tc := range map[string]struct {
		c   *agentchat.Client
		key string
	}{"same key as the worker": {h.Client, "k1"}, "the client's newer key": {rotatedClient, "k2"}} {
		t.Run(name, func(t *testing.T) {
			e, err := tc.c.ExportSealed(ctxFor(t), id)
			require.NoError(t, err)
			assert.True(t, envelope.IsEnvelope(e.Bytes))
			assert.NotContains(t, string(e.Bytes), "Zorblax")
			plain, info, err := tc.c.OpenDocument(e.Bytes)
			require.NoError(t, err)
			assert.Equal(t, tc.key, info.KeyID, "sealed with the key the client seals with")
			doc, _, err := chatstate.Decode(plain)
			require.NoError(t, err)
			assert.Equal(t, e.Digest, doc.Digest)
			assert.Equal(t, 40, e.MessageCount)
			assert.Len(t, doc.History, e.MessageCount)
			assert.Zero(t, e.PendingTurns)
			assert.Contains(t, string(plain), "Zorblax turn a", "the earliest turn, from the store")

			if tc.key == "k1" { // the worker's ring lacks k2
				restored := testenv.ChatID(t) + "-restored"
				st, err := tc.c.Import(ctxFor(t), agentchat.ImportOptions{ChatID: restored, Document: e.Bytes})
				require.NoError(t, err)
				assert.Equal(t, 40, st.MessageCount)
			}
		})
	}
}
