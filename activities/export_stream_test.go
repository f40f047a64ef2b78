package activities_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// queriedChat answers the ExportSnapshot and History queries of one chat, in answers
// of at most page messages.
type queriedChat struct {
	client.Client // nil: only QueryWorkflow is called
	snap          wire.Snapshot
	history       []chat.Message
	page          int
	asked         int
}

func (f *queriedChat) QueryWorkflow(_ context.Context, _, _ string, name string, args ...any) (converter.EncodedValue, error) {
	var out any
	switch name {
	case wire.SnapshotQuery:
		out = f.snap
	case wire.HistoryQuery:
		in := args[0].(wire.HistoryInput)
		f.asked++
		end := min(in.Offset+in.Limit, in.Offset+f.page, len(f.history))
		out = wire.HistoryResult{Messages: f.history[min(in.Offset, end):end], Offset: in.Offset, Total: len(f.history)}
	default:
		return nil, errors.New("unknown query " + name)
	}
	p, err := converter.GetDefaultDataConverter().ToPayloads(out)
	if err != nil {
		return nil, err
	}
	return client.NewValue(p), nil
}

// ExportChat writes a document to the store or a file as it reads the chat, an answer
// at a time, and sends a small one inline when the sink is auto.
func TestExportChatWritesTheDocumentAsItReadsTheChat(t *testing.T) {
	history := streamHistory(300)
	chatOf := func() *queriedChat {
		return &queriedChat{page: 50, history: append(history, chat.TextMessage("after", chat.RoleUser, "", "not yet")),
			snap: wire.Snapshot{ChatID: "c", HistoryLength: len(history), Channels: []chatstate.Channel{},
				PendingTurns: []chat.Message{chat.TextMessage("next", chat.RoleUser, "", "and now?")},
				Participants: []chatstate.Participant{{ID: "clerk", Name: "Clerk", Type: "chat_completion"}},
				Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential", State: []byte(`{}`)},
					Termination: chatstate.Strategy{Type: "maxIterations", State: []byte(`{}`)}}}}
	}
	dir := t.TempDir()
	var store activities.DocumentStore = activities.FileStore{Dir: dir}
	export := func(t *testing.T, f *queriedChat, out wire.ExportInput) wire.ExportResult {
		t.Helper()
		acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(agents.Config{}),
			Transfer: activities.TransferConfig{Temporal: f, Namespace: "default-test-namespace", Store: store}})
		require.NoError(t, err)
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivity(acts.ExportChat)
		v, err := env.ExecuteActivity(acts.ExportChat, wire.ExportChatInput{ChatID: "c", Export: out})
		require.NoError(t, err)
		var res wire.ExportResult
		require.NoError(t, v.Get(&res))
		return res
	}
	check := func(t *testing.T, b []byte, res wire.ExportResult, n int) {
		t.Helper()
		doc, _, err := chatstate.Decode(b)
		require.NoError(t, err)
		assert.Equal(t, res.Digest, doc.Digest)
		assert.Len(t, b, res.Bytes)
		assert.Equal(t, n, res.MessageCount)
		assert.Equal(t, history[:n], doc.History)
		assert.Equal(t, []string{"next"}, res.PendingTurns)
	}

	f := chatOf()
	res := export(t, f, wire.ExportInput{Sink: wire.SinkStore})
	assert.Equal(t, (len(history)+49)/50, f.asked, "one History query an answer")
	path, err := transfer.PathOf(res.URI)
	require.NoError(t, err)
	assert.Equal(t, dir, filepath.Dir(path))
	assert.True(t, strings.HasPrefix(filepath.Base(path), "c-"+res.Digest[len("sha256:"):][:16]))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	check(t, b, res, len(history))

	file := filepath.Join(t.TempDir(), "out", "doc.json")
	res = export(t, chatOf(), wire.ExportInput{Sink: wire.SinkFile, Path: file})
	assert.Equal(t, transfer.FileURI(file), res.URI)
	b, err = os.ReadFile(file)
	require.NoError(t, err)
	check(t, b, res, len(history))

	small := chatOf()
	small.snap.HistoryLength = 12
	res = export(t, small, wire.ExportInput{Sink: wire.SinkAuto})
	assert.Empty(t, res.URI)
	check(t, res.Document, res, 12)

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, fmt.Sprintf("no temporary file is left: %v", entries))

	// A store that cannot be written piece by piece gets the document built whole.
	store = putOnly{activities.FileStore{Dir: t.TempDir()}}
	res = export(t, chatOf(), wire.ExportInput{Sink: wire.SinkStore})
	path, err = transfer.PathOf(res.URI)
	require.NoError(t, err)
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	check(t, b, res, len(history))
}

// putOnly is a DocumentStore that is not a DocumentCreator.
type putOnly struct{ fs activities.FileStore }

func (p putOnly) Put(ctx context.Context, name string, doc []byte) (string, error) {
	return p.fs.Put(ctx, name, doc)
}
func (p putOnly) Get(ctx context.Context, uri string) ([]byte, error) { return p.fs.Get(ctx, uri) }
