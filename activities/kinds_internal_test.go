package activities

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/wire"
)

// Every kind a config may name has its implementation, under its own kind: one built
// for another kind would show that kind's channel.
func TestEveryAgentKindHasItsImplementation(t *testing.T) {
	kinds := newKinds(&models{})
	assert.Len(t, kinds, len(wire.Kinds))
	for _, k := range wire.Kinds {
		impl, ok := kinds[k]
		require.True(t, ok, "kind %q has no implementation", k)
		want, err := k.Channel()
		require.NoError(t, err)
		assert.Equal(t, want, impl.channel(), "kind %q", k)
	}
}
