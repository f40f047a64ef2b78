package activities

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/wire"
)

// The zero Config's parts default as their doc comments say.
func TestConfigDefaultsEachPart(t *testing.T) {
	c := Config{}.withDefaults()
	assert.NotNil(t, c.Getenv)
	assert.NotEmpty(t, c.WorkerIdentity)
	assert.Equal(t, wire.DefaultUnknownAgentWait, c.UnknownAgentWait)
	assert.NotNil(t, c.Models.HTTPClient)
	assert.Equal(t, 256, c.Stores.CachedRuns)
	assert.Empty(t, c.Stores.DefaultMessageStore, "no store, no default")
	assert.Equal(t, "local", c.Transfer.ClusterName)
	assert.Equal(t, FileStore{Dir: filepath.Join(os.TempDir(), "agentchat-exports")}, c.Transfer.Store)
	assert.Nil(t, c.Transfer.Documents.Ring, "no keys, plain documents")
	assert.NotNil(t, c.Telemetry.Logger)
}

// A set field is kept; the only message store is the default; documents are sealed
// with Keys unless Transfer.Documents names a ring of its own.
func TestConfigKeepsWhatIsSet(t *testing.T) {
	keys, own := &keyring.Ring{}, &keyring.Ring{}
	c := Config{Keys: keys, WorkerIdentity: "blue-7",
		Stores:   StoreConfig{MessageStores: map[string]msgstore.Store{"sqlite": nil}, CachedRuns: 3},
		Transfer: TransferConfig{ClusterName: "east"}}.withDefaults()
	assert.Equal(t, "blue-7", c.WorkerIdentity)
	assert.Equal(t, "sqlite", c.Stores.DefaultMessageStore)
	assert.Equal(t, 3, c.Stores.CachedRuns)
	assert.Equal(t, "east", c.Transfer.ClusterName)
	assert.Same(t, keys, c.Transfer.Documents.Ring)

	c.Transfer.Documents.Ring = own
	assert.Same(t, own, c.withDefaults().Transfer.Documents.Ring)

	two := StoreConfig{MessageStores: map[string]msgstore.Store{"sqlite": nil, "postgres": nil}}.withDefaults()
	assert.Empty(t, two.DefaultMessageStore, "two stores: no default")
}

// check names the missing registry, and a tool without a function, by their paths.
func TestConfigCheckNamesThePath(t *testing.T) {
	require.EqualError(t, Config{}.check(), "activities: Config.Registry is required")
	reg := agents.NewRegistry(agents.Config{Tools: map[string]wire.Tool{"lookup": {}}})
	err := Config{Registry: reg}.check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "activities.Config.Functions.Tools")
	assert.Contains(t, err.Error(), `"lookup"`)
}
