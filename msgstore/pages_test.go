package msgstore_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
)

func TestPageDigest(t *testing.T) {
	// SHA-256 of "abc" (FIPS 180-2, appendix B.1).
	assert.Equal(t, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", msgstore.PageDigest([]byte("abc")))
}

func TestCheckPageDropsRepeatedIDs(t *testing.T) {
	p := msgstore.Page{Lineage: "L", Seq: 2, First: 512, Count: 2, Body: []byte("{}"), IDs: []msgstore.PageID{
		{Kind: msgstore.IDMessage, ID: "a", Index: 512, Role: chat.RoleUser},
		{Kind: msgstore.IDMessage, ID: "a", Index: 512, Role: chat.RoleUser},
		{Kind: msgstore.IDCall, ID: "a", Index: 513, Role: chat.RoleAssistant},
	}}
	ids, err := msgstore.CheckPage("test", "c", p)
	require.NoError(t, err)
	assert.Equal(t, []msgstore.PageID{p.IDs[0], p.IDs[2]}, ids, "a message id and a call id may be equal")

	p.IDs[1].Index = 513
	_, err = msgstore.CheckPage("test", "c", p)
	require.ErrorIs(t, err, msgstore.ErrConflict)
	assert.Equal(t, `msgstore: test put chat "c": page lineage "L" level 0 seq 2: message id "a" at index 513 is already at index 512 (page seq 2)`, err.Error())
}

// messagesOnly is a Store that is no PageStore.
type messagesOnly struct{ msgstore.Store }

func TestSealedIsAPageStoreOnlyOverOne(t *testing.T) {
	f, err := keyring.Generate("k1")
	require.NoError(t, err)
	ring, err := keyring.New(f)
	require.NoError(t, err)
	_, ok := msgstore.Sealed(messagesOnly{}, ring).(msgstore.PageStore)
	assert.False(t, ok, "a worker must see that the store keeps no pages")
}
