package msgstore_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/msgstoretest"
)

func TestEncodeIsCanonical(t *testing.T) {
	m := msgstoretest.SampleMessages()[3]
	a, err := msgstore.EncodeBody(m)
	require.NoError(t, err)
	b, err := msgstore.EncodeBody(m)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Contains(t, string(a), msgstoretest.UnknownRaw, "unknown content written as given")
	assert.NotContains(t, string(a), "\n")
}

// TestBodiesOfAnEarlierLayoutAreTheSameMessage: a body an earlier version wrote with
// encoding/json is not a conflict for the same message written canonically now, and
// still is one for a different message.
func TestBodiesOfAnEarlierLayoutAreTheSameMessage(t *testing.T) {
	for _, m := range msgstoretest.SampleMessages() {
		earlier, err := json.Marshal(m)
		require.NoError(t, err)
		now, err := msgstore.EncodeBody(m)
		require.NoError(t, err)
		assert.True(t, msgstore.SameBody(earlier, now), "%s", now)
		other := m
		other.MessageID += "x"
		changed, err := msgstore.EncodeBody(other)
		require.NoError(t, err)
		assert.False(t, msgstore.SameBody(earlier, changed), "%s", changed)
	}
	assert.False(t, msgstore.SameBody([]byte(`{`), []byte(`{`+"\n")), "unreadable bodies are never the same")
}
