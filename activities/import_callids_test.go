package activities_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/sqlite"
	"github.com/agentchat/agentchat/wire"
)

// A large document's older messages reach the importing chat as stubs; the page says
// which call ids those stubs hold, so that the chat never gives a new call one of them
// (it would share that call's idempotency key).
func TestImportPageNamesTheCallIDsOfItsStubs(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "m.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(agents.Config{}),
		Stores: activities.StoreConfig{MessageStores: map[string]msgstore.Store{msgstore.NameSQLite: st}},
	})
	require.NoError(t, err)

	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	history := []chat.Message{
		{MessageID: "m0", Role: chat.RoleUser, CreatedAt: at, Contents: []chat.Content{chat.Text("look it up")}},
		{MessageID: "m0/1", Role: chat.RoleAssistant, AgentID: "clerk", CreatedAt: at,
			Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: "call_old", Name: "lookup", Arguments: `{}`}}},
		{MessageID: "m0/2", Role: chat.RoleTool, AgentID: "clerk", CreatedAt: at,
			Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: "call_old", Result: "found"}}},
	}
	for i := 1; i <= 40; i++ { // over the inline size, and more than the messages kept inline
		history = append(history,
			chat.Message{MessageID: fmt.Sprintf("m%d", i), Role: chat.RoleUser, CreatedAt: at,
				Contents: []chat.Content{chat.Text(strings.Repeat("x", 16<<10))}},
			chat.Message{MessageID: fmt.Sprintf("m%d/1", i), Role: chat.RoleAssistant, AgentID: "clerk", CreatedAt: at,
				Contents: []chat.Content{chat.Text("ok")}})
	}
	doc, _, err := chatstate.Encode(chatstate.Document{SchemaVersion: 1, ChatID: "src", ExportedAt: at,
		Source: chatstate.Source{Namespace: "default", WorkflowID: "src"}, History: history,
		Participants: []chatstate.Participant{{ID: "clerk", Name: "Clerk", Type: "chat_completion"}},
		Channels:     []chatstate.Channel{},
		Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential"},
			Termination: chatstate.Strategy{Type: "maxIterations"}}})
	require.NoError(t, err)

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(acts.ImportChat)
	v, err := env.ExecuteActivity(acts.ImportChat, wire.ImportPageInput{Source: wire.DocumentSource{Document: doc}})
	require.NoError(t, err)
	var page wire.ImportPage
	require.NoError(t, v.Get(&page))
	require.Nil(t, page.Messages[1].Contents, "the call's message is a stub")
	assert.True(t, page.CallIDs.MayHave("call_old"))
	assert.False(t, page.CallIDs.MayHave("call_new"))
}
