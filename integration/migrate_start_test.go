package integration_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// A Migrate admitted while the chat is still starting (here: restoring a document of
// 2,000 messages, which takes pages of ImportChat) waits for the start to end: the
// target gets every restored message, and the chat is live in one place only.
func TestMigrateDuringTheStartWaitsForTheRestore(t *testing.T) {
	a := testenv.New(t, testenv.Options{})
	b := testenv.New(t, testenv.Options{Namespace: "agentchat-test-b", TaskQueue: a.TaskQueue})
	const n = 2000
	doc, _, err := chatstate.Encode(bigChatDocument(n))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "restore.json")
	require.NoError(t, os.WriteFile(path, doc, 0o644))
	id := testenv.ChatID(t)
	in := wire.AgentChatInput{Version: wire.InputVersion, Participants: []string{"helper"},
		Restore: &wire.DocumentSource{URI: transfer.FileURI(path)}}
	_, err = a.Temporal.ExecuteWorkflow(ctxFor(t), client.StartWorkflowOptions{ID: id, TaskQueue: a.TaskQueue}, wire.WorkflowType, in)
	require.NoError(t, err)

	res, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err)
	assert.Equal(t, n, res.MessageCount, "the migration exported the chat once its restore had ended")
	st, err := b.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, n, st.MessageCount)
	assertOneLiveChat(t, id, a, b)
}
