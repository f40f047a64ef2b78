package activities_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/sqlite"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// slowStore is a real store whose reads take delay: a store (or a history query) that
// is slow to answer on a loaded machine.
type slowStore struct {
	msgstore.Store
	delay time.Duration
}

func (s slowStore) Get(ctx context.Context, chatID string, ids []string) ([]chat.Message, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Store.Get(ctx, chatID, ids)
}

// invokeOnce runs InvokeAgent as a workflow's activity, once, with a heartbeat timeout
// of hb (enforced by the test environment).
func invokeOnce(acts *activities.Activities, in wire.InvokeInput, hb time.Duration) error {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	env.RegisterActivity(acts.InvokeAgent)
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second,
			HeartbeatTimeout: hb, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		return workflow.ExecuteActivity(ctx, acts.InvokeAgent, in).Get(ctx, nil)
	}, workflow.RegisterOptions{Name: "invokeOnce"})
	env.ExecuteWorkflow("invokeOnce")
	return env.GetWorkflowError()
}

// A model call's history is read (from the message store, or by querying the chat)
// before the model is asked; that wait heartbeats too, so a slow read on a loaded
// machine is not taken for a dead worker (every attempt would read it again, and
// miss the heartbeat again).
func TestInvokeAgentHeartbeatsWhileReadingHistory(t *testing.T) {
	const hb = time.Second
	for _, kind := range []string{"chat_completion", "responses"} {
		t.Run(kind, func(t *testing.T) {
			srv, err := offline.Start(offline.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = srv.Close() })
			cfg, err := agents.ParseConfig(fmt.Appendf(nil, `
endpoints:
  default: {baseURL: %q, apiKeyEnv: TEST_KEY, stream: false}
agents:
  - {id: bot, name: Bot, model: test-model, kind: %s}
`, srv.URL(), kind))
			require.NoError(t, err)
			st, err := sqlite.Open(filepath.Join(t.TempDir(), "m.db"))
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			body := chat.TextMessage("m1", chat.RoleUser, "Alice", "an old message, kept in the store")
			require.NoError(t, st.Put(context.Background(), "c", []chat.Message{body}))
			acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(cfg), Getenv: func(string) string { return "sk-test" },
				Stores: activities.StoreConfig{MessageStores: map[string]msgstore.Store{msgstore.NameSQLite: slowStore{st, 3 * hb}}},
			})
			require.NoError(t, err)

			in := wire.InvokeInput{ChatID: "c", AgentID: "bot", TurnID: "m2", ReplyID: "m2/1",
				ChannelState: json.RawMessage(`{}`), History: []chat.Message{
					{MessageID: "m1", Role: chat.RoleUser}, // a stub: its body is in the store
					chat.TextMessage("m2", chat.RoleUser, "Alice", "and a new one"),
				}}
			require.NoError(t, invokeOnce(acts, in, hb), "a read 3× the heartbeat timeout long is not a dead worker")
		})
	}
}

// slowPutStore is a real store whose writes take delay.
type slowPutStore struct {
	msgstore.Store
	delay time.Duration
}

func (s slowPutStore) Put(ctx context.Context, chatID string, msgs []chat.Message) error {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.Store.Put(ctx, chatID, msgs)
}

// An import of a large document stores its older bodies in the message store before
// it answers; a store slow to write is not a dead worker either.
func TestImportChatHeartbeatsWhileStoringBodies(t *testing.T) {
	const hb = time.Second
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "m.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(agents.Config{}),
		Stores: activities.StoreConfig{MessageStores: map[string]msgstore.Store{msgstore.NameSQLite: slowPutStore{st, 3 * hb}}},
	})
	require.NoError(t, err)
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var history []chat.Message
	for i := 1; i <= 40; i++ { // over the inline size, and more than the messages kept inline
		history = append(history, chat.Message{MessageID: fmt.Sprintf("m%d", i), Role: chat.RoleUser, CreatedAt: at,
			Contents: []chat.Content{chat.Text(strings.Repeat("x", 16<<10))}})
	}
	doc, _, err := chatstate.Encode(chatstate.Document{SchemaVersion: 1, ChatID: "src", ExportedAt: at,
		Source: chatstate.Source{Namespace: "default", WorkflowID: "src"}, History: history,
		Participants: []chatstate.Participant{}, Channels: []chatstate.Channel{},
		Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential"},
			Termination: chatstate.Strategy{Type: "maxIterations"}}})
	require.NoError(t, err)

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	env.RegisterActivity(acts.ImportChat)
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second,
			HeartbeatTimeout: hb, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		var page wire.ImportPage
		return workflow.ExecuteActivity(ctx, acts.ImportChat, wire.ImportPageInput{
			Source: wire.DocumentSource{Document: doc}}).Get(ctx, &page)
	}, workflow.RegisterOptions{Name: "importOnce"})
	env.ExecuteWorkflow("importOnce")
	require.NoError(t, env.GetWorkflowError(), "a write 3× the heartbeat timeout long is not a dead worker")
}
