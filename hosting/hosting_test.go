package hosting_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/hosting"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// recorder is a hosting.Registry that counts the names registered.
type recorder struct{ workflows, activities map[string]int }

func (r recorder) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	r.workflows[o.Name]++
}
func (r recorder) RegisterActivityWithOptions(_ any, o activity.RegisterOptions) {
	r.activities[o.Name]++
}

func TestRegisterRegistersTheWorkflowAndEveryActivity(t *testing.T) {
	reg := agents.NewRegistry(agents.Config{Agents: []agents.Definition{{ID: "helper", Model: "m"}}})
	acts, err := activities.New(activities.Config{Registry: reg})
	require.NoError(t, err)
	r := recorder{workflows: map[string]int{}, activities: map[string]int{}}
	hosting.Register(r, acts)
	assert.Equal(t, map[string]int{wire.WorkflowType: 1}, r.workflows)

	alone := recorder{activities: map[string]int{}}
	acts.Register(alone)
	assert.Equal(t, alone.activities, r.activities, "the activities as Activities.Register registers them")
	for _, name := range []string{wire.InvokeAgentActivity, wire.ResolveParticipantsActivity,
		wire.CallToolActivity, wire.StoreMessagesActivity, wire.ImportChatActivity} {
		assert.Equal(t, 1, r.activities[name], name)
	}
}

func TestLoadRegistry(t *testing.T) {
	reg, err := hosting.LoadRegistry("")
	require.NoError(t, err)
	_, ok := reg.Get("helper")
	assert.True(t, ok, "the embedded example has agent helper: %v", reg.IDs())

	path := filepath.Join(t.TempDir(), "agents.yaml")
	require.NoError(t, os.WriteFile(path, []byte("agents:\n  - {id: solo, model: m}\n"), 0o600))
	reg, err = hosting.LoadRegistry(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"solo"}, reg.IDs())

	_, err = hosting.LoadRegistry(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.Error(t, err)
}

func TestOfflineScripts(t *testing.T) {
	reg := agents.NewRegistry(agents.Config{Agents: []agents.Definition{
		{ID: "scripted", Offline: json.RawMessage(`{"replies":[{"text":"one"},{"text":"two"}]}`)},
		{ID: "plain"},
	}})
	scripts, err := hosting.OfflineScripts(reg)
	require.NoError(t, err)
	assert.Equal(t, map[string][]offline.Reply{"scripted": {{Text: "one"}, {Text: "two"}}}, scripts)

	timed := agents.NewRegistry(agents.Config{Agents: []agents.Definition{
		{ID: "paced", Offline: json.RawMessage(`{"chunkDelay":"40ms","replies":[{"text":"one","chunkDelay":"10ms"}]}`)}, {ID: "plain"}}})
	opts, err := hosting.OfflineOptions(timed)
	require.NoError(t, err)
	assert.Equal(t, map[string]time.Duration{"paced": 40 * time.Millisecond}, opts.ChunkDelays)
	assert.Equal(t, map[string][]offline.Reply{"paced": {{Text: "one", ChunkDelay: wire.Duration(10 * time.Millisecond)}}}, opts.Scripts)

	bad := agents.NewRegistry(agents.Config{Agents: []agents.Definition{{ID: "broken", Offline: json.RawMessage(`{"replies":"no"}`)}}})
	_, err = hosting.OfflineScripts(bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `agent "broken": offline script`)
}
