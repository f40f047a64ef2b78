package activities_test

import (
	"context"
	"fmt"
	"os"
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
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// noGetStore is a FileStore that counts its Gets: a document it can open is read in
// place, never whole.
type noGetStore struct {
	activities.FileStore
	gets *int
}

func (s noGetStore) Get(ctx context.Context, uri string) ([]byte, error) {
	*s.gets++
	return s.FileStore.Get(ctx, uri)
}

// streamHistory is a history of turns: a user message, an assistant's call, its
// result (a failed round every seventh turn), an answer (not after a failed round);
// every fifth user message is large, so that the document is over
// wire.ImportInlineBytes and bodies are stored.
func streamHistory(turns int) []chat.Message {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var h []chat.Message
	for i := range turns {
		text := fmt.Sprintf("question %d", i)
		if i%5 == 0 {
			text = strings.Repeat("x", 8<<10)
		}
		call := fmt.Sprintf("call_%d", i)
		result := chat.Content{Type: chat.ContentFunctionResult, CallID: call, Result: "found"}
		if i%7 == 3 {
			result = chat.Content{Type: chat.ContentFunctionResult, CallID: call, Error: "boom"}
		}
		h = append(h,
			chat.Message{MessageID: fmt.Sprintf("m%d", i), Role: chat.RoleUser, CreatedAt: at, Contents: []chat.Content{chat.Text(text)}},
			chat.Message{MessageID: fmt.Sprintf("m%d/1", i), Role: chat.RoleAssistant, AgentID: "clerk", CreatedAt: at,
				Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: call, Name: "lookup", Arguments: `{}`}}},
			chat.Message{MessageID: fmt.Sprintf("m%d/2", i), Role: chat.RoleTool, AgentID: "clerk", CreatedAt: at, Contents: []chat.Content{result}})
		if i%7 != 3 {
			h = append(h, chat.Message{MessageID: fmt.Sprintf("m%d/3", i), Role: chat.RoleAssistant, AgentID: "clerk", CreatedAt: at,
				Contents: []chat.Content{chat.Text("ok")}})
		}
	}
	return h
}

// importAll calls ImportChat as the restoring workflow does, page after page.
func importAll(t *testing.T, acts *activities.Activities, in wire.ImportPageInput) []wire.ImportPage {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(acts.ImportChat)
	var pages []wire.ImportPage
	offset := 0
	for {
		in.Offset = offset
		v, err := env.ExecuteActivity(acts.ImportChat, in)
		require.NoError(t, err)
		var page wire.ImportPage
		require.NoError(t, v.Get(&page))
		pages = append(pages, page)
		if offset == 0 {
			offset = page.Base
		}
		offset += len(page.Messages)
		if offset >= page.Total || len(page.Messages) == 0 {
			return pages
		}
	}
}

func pagedActivities(t *testing.T, gets *int) *activities.Activities {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "m.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(agents.Config{}),
		Stores:   activities.StoreConfig{MessageStores: map[string]msgstore.Store{msgstore.NameSQLite: st}},
		Transfer: activities.TransferConfig{Store: noGetStore{activities.FileStore{Dir: t.TempDir()}, gets}},
	})
	require.NoError(t, err)
	return acts
}

// A document given by a file the worker can open is read in place, with the answers
// of the document given inline: the same header, pages, window and stubs, whether its
// pages are written a page a batch, a few pages a batch, or all in one.
func TestImportChatReadsAFileInPlaceAsItReadsADocument(t *testing.T) {
	activities.StreamAllDocuments(t)
	type run struct {
		paging     *wire.ImportPaging
		batchBytes int
	}
	small := &wire.ImportPaging{Lineage: "run-i1", Window: wire.HistoryWindow{WindowMessages: 40, PageMessages: 16}}
	for _, r := range []run{{small, 1}, {small, 5000}, {small, 0}, {&wire.ImportPaging{Lineage: "run-i1"}, 0}, {nil, 0}} {
		paging := r.paging
		t.Run(fmt.Sprintf("paging %v batch %d", paging, r.batchBytes), func(t *testing.T) {
			if r.batchBytes > 0 {
				activities.PageBatchBytes(t, r.batchBytes)
			}
			at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			b, _, err := chatstate.Encode(chatstate.Document{SchemaVersion: 1, ChatID: "src", ExportedAt: at,
				Source: chatstate.Source{Namespace: "default", WorkflowID: "src"}, History: streamHistory(300),
				Participants: []chatstate.Participant{{ID: "clerk", Name: "Clerk", Type: "chat_completion"}},
				Channels:     []chatstate.Channel{},
				PendingTurns: []chat.Message{chat.TextMessage("next", chat.RoleUser, "", "and now?")},
				Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential"},
					Termination: chatstate.Strategy{Type: "maxIterations"}}})
			require.NoError(t, err)
			require.Greater(t, len(b), wire.ImportInlineBytes)
			path := filepath.Join(t.TempDir(), "doc.json")
			require.NoError(t, os.WriteFile(path, b, 0o644))

			in := wire.ImportPageInput{Participants: []string{"clerk"}, SelectionType: "sequential",
				TerminationType: "maxIterations", Paging: paging}
			var inlineGets, fileGets int
			in.Source = wire.DocumentSource{Document: b}
			want := importAll(t, pagedActivities(t, &inlineGets), in)
			in.Source = wire.DocumentSource{URI: transfer.FileURI(path)}
			got := importAll(t, pagedActivities(t, &fileGets), in)

			assert.Zero(t, fileGets, "the file is read in place")
			require.Len(t, got, len(want))
			for i := range want {
				assert.Equal(t, want[i], got[i], "page %d", i)
			}
			if paging != nil {
				_, perPage := paging.Window.Effective()
				assert.Positive(t, want[0].Base)
				assert.Len(t, want[0].Pages, (want[0].Base+perPage-1)/perPage)
			}
		})
	}
}

// A file that is not a document is refused as the inline bytes are: InvalidDocument.
func TestImportChatRefusesAFileThatIsNotADocument(t *testing.T) {
	activities.StreamAllDocuments(t)
	path := filepath.Join(t.TempDir(), "doc.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"channels":[],"chatId":"x"}`), 0o644))
	var gets int
	acts := pagedActivities(t, &gets)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(acts.ImportChat)
	_, err := env.ExecuteActivity(acts.ImportChat, wire.ImportPageInput{Source: wire.DocumentSource{URI: transfer.FileURI(path)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), wire.ErrTypeInvalidDocument)
}

// failingPages refuses the page of seq failAt (ErrConflict, as a store holding another
// page there does). It writes one page at a time (it hides the SQLite store's
// PutPages), so the pages before failAt are written.
type failingPages struct {
	msgstore.PageStore
	failAt int64
}

func (f failingPages) PutPage(ctx context.Context, chatID string, p msgstore.Page) (string, error) {
	if p.Level == 0 && p.Seq == f.failAt {
		return "", fmt.Errorf("%w: page %d", msgstore.ErrConflict, p.Seq)
	}
	return f.PageStore.PutPage(ctx, chatID, p)
}

// An import whose first call fails after it wrote pages deletes them before it
// answers, read whole or in place: no page of its lineage is left.
func TestImportChatThatFailsAfterWritingPagesLeavesNone(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		t.Run(fmt.Sprintf("streamed %v", streamed), func(t *testing.T) {
			if streamed {
				activities.StreamAllDocuments(t)
			}
			st, err := sqlite.Open(filepath.Join(t.TempDir(), "m.db"))
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(agents.Config{}),
				Stores: activities.StoreConfig{MessageStores: map[string]msgstore.Store{msgstore.NameSQLite: failingPages{st, 3}}}})
			require.NoError(t, err)
			at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			b, _, err := chatstate.Encode(chatstate.Document{SchemaVersion: 1, ChatID: "src", ExportedAt: at,
				Source: chatstate.Source{Namespace: "default", WorkflowID: "src"}, History: streamHistory(300),
				Participants: []chatstate.Participant{{ID: "clerk", Name: "Clerk", Type: "chat_completion"}},
				Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential"},
					Termination: chatstate.Strategy{Type: "maxIterations"}}})
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "doc.json")
			require.NoError(t, os.WriteFile(path, b, 0o644))
			in := wire.ImportPageInput{Participants: []string{"clerk"}, SelectionType: "sequential", TerminationType: "maxIterations",
				Source: wire.DocumentSource{URI: transfer.FileURI(path)},
				Paging: &wire.ImportPaging{Lineage: "run-i1", Window: wire.HistoryWindow{WindowMessages: 40, PageMessages: 16}}}
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			env.RegisterActivity(acts.ImportChat)
			_, err = env.ExecuteActivity(acts.ImportChat, in)
			require.ErrorContains(t, err, "page 3")
			for seq := range 3 {
				_, err := st.GetPage(context.Background(), "default-test-workflow-id", msgstore.PageKey{Lineage: "run-i1", Seq: int64(seq)})
				require.ErrorIs(t, err, msgstore.ErrPageMissing, "page %d was written, then deleted", seq)
			}
		})
	}
}
