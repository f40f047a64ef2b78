package integration_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// A migration admitted while the chat is still starting (the replay scenario
// "migrate-after-start"): the chat restores a document given inline in its input, the
// Migrate update is sent at once and waits for the restore (migrate-after-start); the
// source run closes with a migrated result.
func captureMigrateAfterStart(t *testing.T, name string) {
	a := replayHarness(t, name, testenv.Options{})
	b := replayHarness(t, name, testenv.Options{Namespace: "agentchat-replay-b"})
	id := replayChat(t, a, name)
	replayChat(t, b, name)
	const n = 8
	doc, _, err := chatstate.Encode(bigChatDocument(n))
	require.NoError(t, err)
	in := wire.AgentChatInput{Version: wire.InputVersion, Participants: []string{"helper"},
		Restore: &wire.DocumentSource{Document: doc}}
	_, err = a.Temporal.ExecuteWorkflow(ctxFor(t), client.StartWorkflowOptions{ID: id, TaskQueue: a.TaskQueue}, wire.WorkflowType, in)
	require.NoError(t, err)
	res, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err)
	require.Equal(t, n, res.MessageCount, "the migration exported the restored chat")
	waitStatus(t, a, id, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)
	saveRun(t, a, id, "", name, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)
}

// A Reencrypt signal (the replay scenario "reencrypt"): a chat takes a turn, gets the
// signal and continues as new at once (reencrypt-signal); the next run takes a turn.
// Captured without encryption, so that the replayer reads the payloads; the commands
// are the same with it.
func captureReencrypt(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{})
	id := replayChat(t, h, name)
	startReplayChat(t, h, id, agentchat.StartOptions{})
	send(t, h, id, "m1", "Hello, how are you?")
	before := runID(t, h.Temporal, id)
	require.NoError(t, h.Client.Reencrypt(ctxFor(t), id))
	require.Eventually(t, func() bool { return runID(t, h.Temporal, id) != before }, 30*time.Second, 50*time.Millisecond,
		"the chat continues as new")
	send(t, h, id, "m2", "My name is Alice")
	second := saveRun(t, h, id, "", name+"-2", atRest)
	first := second.Events[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
	require.Equal(t, before, first, "the second run names the first")
	saveRun(t, h, id, first, name+"-1", enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW)
}

// replayChanges name, for the histories captured to cover a versioned change, the
// change id whose marker the history must hold: without it the file replays the old
// branch only, and covers nothing new.
var replayChanges = map[string]string{
	"migrate-after-start": "migrate-after-start",
	"reencrypt-1":         "reencrypt-signal",
}

func TestReplayHistoriesHoldTheirChangesMarker(t *testing.T) {
	for file, change := range replayChanges {
		t.Run(file, func(t *testing.T) {
			f, err := os.Open(filepath.Join(replayDir, file+".json"))
			require.NoError(t, err)
			defer f.Close()
			hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
			require.NoError(t, err)
			var changes []string
			for _, e := range hist.GetEvents() {
				if m := e.GetMarkerRecordedEventAttributes(); m != nil {
					var id string
					if p := m.GetDetails()["change-id"]; p != nil && converter.GetDefaultDataConverter().FromPayloads(p, &id) == nil {
						changes = append(changes, id)
					}
				}
			}
			assert.Contains(t, changes, change, "%s.json covers the change %q", file, change)
		})
	}
}
