package integration_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
// Migrate update is sent at once and waits for the restore; the source run closes with
// a migrated result.
func captureMigrateAfterStart(t *testing.T, name string) {
	a := replayHarness(t, name, testenv.Options{})
	b := replayHarness(t, name, testenv.Options{Namespace: "agentchat-replay-b"})
	id := replayChat(t, name, a, b)
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

// A restore whose document's older messages go to pages (the replay scenario
// "import-paged"; a window of 8 messages, pages of 4): the first ImportChat call
// writes the pages and returns the window, which ends the document, so the restore
// makes no second call; then one turn.
func captureImportPaged(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{})
	id := replayChat(t, name, h)
	const n = 20
	doc, _, err := chatstate.Encode(bigChatDocument(n))
	require.NoError(t, err)
	in := wire.AgentChatInput{Version: wire.InputVersion, Participants: []string{"helper"},
		Restore: &wire.DocumentSource{Document: doc}, History: &wire.HistoryWindow{WindowMessages: 8, PageMessages: 4}}
	_, err = h.Temporal.ExecuteWorkflow(ctxFor(t), client.StartWorkflowOptions{ID: id, TaskQueue: h.TaskQueue}, wire.WorkflowType, in)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := h.Client.State(ctxFor(t), id)
		return err == nil && st.MessageCount == n
	}, 30*time.Second, 50*time.Millisecond, "the chat restores the document")
	send(t, h, id, "m1", "What did we talk about?")
	saveRun(t, h, id, "", name, atRest)
}

// A Reencrypt signal (the replay scenario "reencrypt"): a chat takes a turn, gets the
// signal and continues as new at once; the next run takes a turn.
// Captured without encryption, so that the replayer reads the payloads; the commands
// are the same with it.
func captureReencrypt(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{})
	id := replayChat(t, name, h)
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

// replayChanges name, for a history captured to cover a change made since the
// baseline, the change id whose marker it must hold: without it the file replays the
// old branch only, and covers nothing new.
var replayChanges = map[string]string{}

// TestReplayHistoriesHoldOnlyCurrentChanges reads the version markers of every committed
// history: each names a change id that workflows/versions.go declares (a marker of a
// retired id means the file was captured before the baseline: capture it anew), and a
// history listed in replayChanges holds its change's marker.
func TestReplayHistoriesHoldOnlyCurrentChanges(t *testing.T) {
	current := currentChangeIDs(t)
	for _, f := range replayFiles(t) {
		file := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(file, func(t *testing.T) {
			changes := versionMarkers(t, f)
			for _, id := range changes {
				assert.Contains(t, current, id, "%s.json holds a marker of change %q, which %s does not declare", file, id, versionsFile)
			}
			if want, ok := replayChanges[file]; ok {
				assert.Contains(t, changes, want, "%s.json covers the change %q", file, want)
			}
		})
	}
}

// versionsFile declares the workflow's change ids (one constant each).
const versionsFile = "../workflows/versions.go"

// currentChangeIDs returns the values of the string constants of versionsFile.
func currentChangeIDs(t *testing.T) []string {
	f, err := parser.ParseFile(token.NewFileSet(), versionsFile, nil, 0)
	require.NoError(t, err)
	ids := []string{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, spec := range g.Specs {
				for _, v := range spec.(*ast.ValueSpec).Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						id, err := strconv.Unquote(lit.Value)
						require.NoError(t, err)
						ids = append(ids, id)
					}
				}
			}
		}
	}
	return ids
}

// versionMarkers returns the change ids of the version markers (workflow.GetVersion)
// that the history in file holds, in order.
func versionMarkers(t *testing.T, file string) []string {
	f, err := os.Open(file)
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
	return changes
}
