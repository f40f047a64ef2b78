package agentchat

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

func largeDocument(t *testing.T, n, textBytes int, pending ...chat.Message) []byte {
	t.Helper()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var h []chat.Message
	for i := range n {
		role := chat.RoleUser
		if i%2 == 1 {
			role = chat.RoleAssistant
		}
		h = append(h, chat.Message{MessageID: fmt.Sprintf("m%d", i), Role: role, AgentID: map[bool]string{true: "clerk"}[role == chat.RoleAssistant],
			CreatedAt: at, Contents: []chat.Content{chat.Text(strings.Repeat("x", textBytes))}})
	}
	b, _, err := chatstate.Encode(chatstate.Document{SchemaVersion: 1, ChatID: "src", ExportedAt: at,
		Source: chatstate.Source{Namespace: "default", WorkflowID: "src"}, History: h, PendingTurns: pending,
		Participants: []chatstate.Participant{{ID: "clerk", Name: "Clerk", Type: "chat_completion"}},
		Channels:     []chatstate.Channel{},
		Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential"},
			Termination: chatstate.Strategy{Type: "maxIterations"}}})
	require.NoError(t, err)
	return b
}

// A plain document in a large file is checked in place, with the header and source
// that reading it whole gives; a changed byte is refused.
func TestCheckImportReadsALargeFileInPlace(t *testing.T) {
	streamAll(t)
	b := largeDocument(t, 600, 2<<10)
	require.Greater(t, len(b), wire.InlineLimit)
	path := filepath.Join(t.TempDir(), "doc.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))

	doc, src, ok, err := checkFileInPlace(path, nil)
	require.NoError(t, err)
	require.True(t, ok)
	whole, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	whole.History = nil
	assert.Equal(t, whole, doc)
	assert.Equal(t, wire.DocumentSource{URI: transfer.FileURI(path)}, src)

	c := &Client{}
	doc, src, err = c.checkImport(nil, path)
	require.NoError(t, err)
	assert.Equal(t, whole, doc)
	assert.Equal(t, transfer.FileURI(path), src.URI)

	changed := []byte(strings.Replace(string(b), "xxxx", "xxxy", 1))
	require.NoError(t, os.WriteFile(path, changed, 0o644))
	_, _, err = c.checkImport(nil, path)
	require.ErrorContains(t, err, "digest")
}

// A document the chat could not hold (here: its pending turns) is refused in place as
// it is whole; small files and envelopes are read whole.
func TestCheckImportInPlaceRefusesAWindowTooLarge(t *testing.T) {
	streamAll(t)
	b := largeDocument(t, 20, 100<<10, chat.TextMessage("next", chat.RoleUser, "", strings.Repeat("y", wire.QueuedTurnsLimit)))
	path := filepath.Join(t.TempDir(), "doc.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	whole, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	want := wire.CheckDocumentSizes(whole.History, whole.PendingTurns, wire.WindowMessages)
	require.Error(t, want)
	_, _, ok, err := checkFileInPlace(path, nil)
	assert.True(t, ok)
	assert.ErrorContains(t, err, want.Error())

	small := filepath.Join(t.TempDir(), "small.json")
	require.NoError(t, os.WriteFile(small, largeDocument(t, 2, 10), 0o644))
	_, _, ok, err = checkFileInPlace(small, nil)
	assert.False(t, ok)
	assert.NoError(t, err)

	sealed, err := envelope.Seal(b, whole.Digest, envelope.Options{Signer: testSigner(t)})
	require.NoError(t, err)
	env := filepath.Join(t.TempDir(), "env.json")
	require.NoError(t, os.WriteFile(env, sealed, 0o644))
	_, _, ok, err = checkFileInPlace(env, nil)
	assert.False(t, ok)
	assert.NoError(t, err)
}

func testSigner(t *testing.T) *envelope.Signer {
	t.Helper()
	f, _, err := envelope.GenerateSigner("s1")
	require.NoError(t, err)
	s, err := envelope.NewSigner(f)
	require.NoError(t, err)
	return s
}

// ImportInto passes a large plain file by its URI without reading it; an envelope is
// opened with the client's keys first.
func TestImportIntoSource(t *testing.T) {
	b := largeDocument(t, 600, 2<<10)
	path := filepath.Join(t.TempDir(), "doc.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	c := &Client{}
	src, err := c.importIntoSource("c", nil, path)
	require.NoError(t, err)
	assert.Equal(t, wire.DocumentSource{URI: transfer.FileURI(path)}, src)

	_, err = c.importIntoSource("c", nil, filepath.Join(t.TempDir(), "missing.json"))
	require.Error(t, err)

	whole, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	sealed, err := envelope.Seal(b, whole.Digest, envelope.Options{Signer: testSigner(t)})
	require.NoError(t, err)
	env := filepath.Join(t.TempDir(), "env.json")
	require.NoError(t, os.WriteFile(env, sealed, 0o644))
	_, err = c.importIntoSource("c", nil, env)
	require.ErrorContains(t, err, "import into chat", "signed by a key this client does not know")
}

// streamAll makes the import check read every plain file over InlineLimit in place,
// however small (StreamDocumentBytes), until the test ends.
func streamAll(t *testing.T) {
	old := streamDocumentBytes
	streamDocumentBytes = 0
	t.Cleanup(func() { streamDocumentBytes = old })
}
