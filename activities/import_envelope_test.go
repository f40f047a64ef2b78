package activities_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/wire"
)

// The worker opens a document again with its own keys, which may differ from the
// client's that passed it: its refusal says that it is the worker's, so the user looks
// at the worker's AGENTCHAT_VERIFY_KEYS, not at the client's.
func TestImportChatSaysAnEnvelopeRefusalIsTheWorkers(t *testing.T) {
	doc, digest, err := chatstate.Encode(chatstate.Document{SchemaVersion: 1, ChatID: "src",
		ExportedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Source: chatstate.Source{Namespace: "default", WorkflowID: "src"},
		Participants: []chatstate.Participant{{ID: "helper", Name: "Helper", Type: "chat_completion"}},
		Channels:     []chatstate.Channel{},
		Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential"},
			Termination: chatstate.Strategy{Type: "maxIterations"}}})
	require.NoError(t, err)
	f, _, err := envelope.GenerateSigner("s1")
	require.NoError(t, err)
	signer, err := envelope.NewSigner(f)
	require.NoError(t, err)
	signed, err := envelope.Seal(doc, digest, envelope.Options{Signer: signer})
	require.NoError(t, err)

	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(agents.Config{})})
	require.NoError(t, err)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(acts.ImportChat)
	_, err = env.ExecuteActivity(acts.ImportChat, wire.ImportPageInput{Source: wire.DocumentSource{Document: signed}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `the worker could not open the document (its keys): envelope: signed by unknown key id "s1"`)
}
