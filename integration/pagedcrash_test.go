package integration_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/sqlite"
	"github.com/agentchat/agentchat/wire"
)

// A worker killed with SIGKILL while a long import writes its pages: the import goes
// on on another worker, which writes the same pages again (no-ops) and the rest, under
// the same lineage. The chat then holds every message once, in order, and the store
// holds exactly the pages its index names: none orphaned, none doubled. The document
// (60,000 short messages, about 6 MB) is read whole by the worker.
func TestWorkerKilledWhileAnImportWritesPages(t *testing.T) {
	killWhileImporting(t, 60_000, "")
}

// TestWorkerKilledWhileAStreamedImportWritesPages is the same for a document over
// wire.StreamDocumentBytes, which the worker reads in place (chatstate.Decoder, its
// pages written a batch at a time): 40,000 messages of about 1 KB. The worker that
// takes over reads the document again from the start.
func TestWorkerKilledWhileAStreamedImportWritesPages(t *testing.T) {
	killWhileImporting(t, 40_000, strings.Repeat("the long import's filler text ", 30))
}

// killWhileImporting imports a document of n messages (texts with filler appended),
// kills the worker once the first page is written, and checks what the chat and the
// store hold once another worker finished the import.
func killWhileImporting(t *testing.T, n int, filler string) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "messages.db")
	storeArg := []string{"--message-store", "sqlite://" + dbPath}
	opts := testenv.ProcessOptions{TaskQueue: testenv.TaskQueue(t), Args: storeArg, Config: `
endpoints:
  local: {baseURL: "http://127.0.0.1:1/v1"}
agents:
  - {id: helper, name: Helper, model: offline, endpoint: local}
`}
	first := testenv.StartWorkerProcess(t, opts)
	st, err := sqlite.Open(dbPath)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	c := agentchat.NewClient(testenv.Dial(t, ""), agentchat.ClientOptions{TaskQueue: opts.TaskQueue,
		MessageStores: map[string]msgstore.Store{st.Name(): st}})

	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	history := make([]chat.Message, 0, n)
	for i := 0; len(history) < n; i++ {
		u := chat.TextMessage(fmt.Sprintf("m%d", i), chat.RoleUser, "Alice", fmt.Sprintf("turn %d of a long import", i)+filler)
		r := chat.TextMessage(fmt.Sprintf("m%d/1", i), chat.RoleAssistant, "Helper", fmt.Sprintf("reply %d", i)+filler)
		u.CreatedAt, r.CreatedAt, r.AgentID = at, at, "helper"
		history = append(history, u, r)
	}
	doc, _, err := chatstate.Encode(chatstate.Document{SchemaVersion: 1, ChatID: "long", ExportedAt: at,
		Source: chatstate.Source{Namespace: "default", WorkflowID: "long"}, History: history,
		Participants: []chatstate.Participant{{ID: "helper", Name: "Helper", Type: "chat_completion"}},
		Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential", State: []byte(`{"nextIndex":0}`)},
			Termination: chatstate.Strategy{Type: "maxIterations", State: []byte(`{"iterations":0}`)}}})
	require.NoError(t, err)
	if filler != "" {
		require.Greater(t, len(doc), wire.StreamDocumentBytes, "the worker must read this document in place")
	} else {
		require.Less(t, len(doc), wire.StreamDocumentBytes, "the worker must read this document whole")
	}
	path := filepath.Join(dir, "long.json")
	require.NoError(t, os.WriteFile(path, doc, 0o644))

	id := testenv.ChatID(t)
	done := make(chan error, 1)
	go func() {
		_, err := c.Import(ctxFor(t), agentchat.ImportOptions{ChatID: id, Path: path})
		done <- err
	}()
	// Kill the worker once the import has written its first page.
	var lineage string
	require.Eventually(t, func() bool {
		d, err := c.Temporal().DescribeWorkflowExecution(context.Background(), id, "")
		if err != nil {
			return false
		}
		lineage = d.GetWorkflowExecutionInfo().GetExecution().GetRunId() + "-i1"
		_, err = st.GetPage(context.Background(), id, msgstore.PageKey{Lineage: lineage, Seq: 0})
		return err == nil
	}, time.Minute, 5*time.Millisecond, "no page written")
	first.Kill()
	if filler != "" {
		require.Contains(t, first.Logs(), "import: reading the document in place", "the streamed path")
	} else {
		require.NotContains(t, first.Logs(), "import: reading the document in place", "the whole-document path")
	}
	paged := n - wire.WindowMessages // the window stays in the chat's state
	wantPages := (paged + wire.PageMessages - 1) / wire.PageMessages
	_, err = st.GetPage(context.Background(), id, msgstore.PageKey{Lineage: lineage, Seq: int64(wantPages - 1)})
	require.ErrorIs(t, err, msgstore.ErrPageMissing, "killed part-way: the import has more pages to write")
	testenv.StartWorkerProcess(t, opts) // the worker that takes over
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(3 * time.Minute):
		require.FailNow(t, "the import did not finish after the kill")
	}

	state, err := c.State(ctxFor(t), id)
	require.NoError(t, err)
	require.Equal(t, n, state.MessageCount)
	assert.Equal(t, n/2, state.TurnCount)
	hist, err := c.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, hist.Messages, n)
	for i := range n {
		if hist.Messages[i].MessageID != history[i].MessageID || hist.Messages[i].Text() != history[i].Text() {
			require.FailNow(t, "history differs", "message %d: %s %q, want %s %q", i,
				hist.Messages[i].MessageID, hist.Messages[i].Text(), history[i].MessageID, history[i].Text())
		}
	}
	pages := 0
	for ; ; pages++ {
		_, err := st.GetPage(context.Background(), id, msgstore.PageKey{Lineage: lineage, Seq: int64(pages)})
		if errors.Is(err, msgstore.ErrPageMissing) {
			break
		}
		require.NoError(t, err)
	}
	assert.Equal(t, wantPages, pages, "the store holds the pages the index names, each once")
}
