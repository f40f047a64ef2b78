package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/wire"
)

// doc50kMessages is the length of the document of TestA50kMessageDocument.
const doc50kMessages = 50_000

// A document of 50,000 messages, with the default window (the import writes all but
// its last turns as pages of 256 messages), goes through a chat's whole life: it is
// imported, takes a turn, is read by History from its first message to its last, is
// exported with every message as it came in plus the new turn, and migrates to another
// namespace, where it answers a retry of its first turn from the pages and takes a new
// turn, and its History is whole. On SQLite, on PostgreSQL and with encryption at rest.
// Its speed is the bench's (the long row), not a timed test's: each step logs its time.
func TestA50kMessageDocument(t *testing.T) {
	doc, enc := doc50k()
	t.Run("sqlite", func(t *testing.T) { doc50kLife(t, testenv.Options{}, doc, enc) })
	t.Run("postgres", func(t *testing.T) {
		doc50kLife(t, testenv.Options{MessageStore: msgstore.NamePostgres}, doc, enc)
	})
	t.Run("encrypted", func(t *testing.T) { doc50kLife(t, testenv.Options{Keys: testRing(t, "k1")}, doc, enc) })
}

func doc50kLife(t *testing.T, opts testenv.Options, doc chatstate.Document, enc []byte) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	lap := time.Now()
	step := func(what string) {
		t.Logf("%-26s %v", what, time.Since(lap).Round(time.Millisecond))
		lap = time.Now()
	}
	a := testenv.New(t, opts)
	opts.Namespace, opts.TaskQueue = "agentchat-test-b", a.TaskQueue
	b := testenv.New(t, opts)
	id := testenv.ChatID(t)
	t.Cleanup(func() { _ = b.Temporal.TerminateWorkflow(context.Background(), id, "", "test over") })

	st := importBytes(t, ctx, a, id, enc)
	step("import")
	require.Equal(t, doc50kMessages, st.MessageCount)
	turns := 0
	for _, m := range doc.History {
		if m.Role == chat.RoleUser {
			turns++
		}
	}
	assert.Equal(t, turns, st.TurnCount)
	assert.Equal(t, doc50kMessages-wire.ImportBoundary(doc.History, wire.WindowMessages), st.MessageCount-st.PagedMessages,
		"the import keeps the default window and pages the rest")
	assertPagesStored(t, ctx, a, id, opts.Keys != nil)

	turn, err := a.Client.Send(ctx, id, agentchat.SendMessageInput{MessageID: "after-import", Text: "What did we say first?", AuthorName: "Alice"})
	require.NoError(t, err)
	require.Len(t, turn.Messages, 1)
	step("a turn")

	want := append(append([]chat.Message(nil), doc.History...), chat.Message{}, turn.Messages[0])
	hist, err := a.StoreClient().History(ctx, id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, hist.Messages, doc50kMessages+2)
	want[doc50kMessages] = hist.Messages[doc50kMessages]
	assert.Equal(t, "after-import", want[doc50kMessages].MessageID)
	assert.Equal(t, "What did we say first?", want[doc50kMessages].Text())
	sameMessages(t, "History", want, hist.Messages)
	step("History")

	out, _, err := a.Client.Export(ctx, id)
	require.NoError(t, err, "a client without the store exports through the worker")
	exported, _, err := chatstate.Decode(out)
	require.NoError(t, err)
	sameMessages(t, "the export", want, exported.History)
	step("export")

	_, err = a.Client.Migrate(ctx, id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err)
	step("migrate")
	again, err := b.Client.Send(ctx, id, agentchat.SendMessageInput{MessageID: doc.History[0].MessageID,
		Text: doc.History[0].Text(), AuthorName: doc.History[0].AuthorName})
	require.NoError(t, err, "a retry of the first turn, in a page")
	assert.True(t, again.Replayed, "the retry of a paged turn is answered as replayed")
	sameMessages(t, "the replayed turn", doc.History[1:2], again.Messages)
	there, err := b.Client.Send(ctx, id, agentchat.SendMessageInput{MessageID: "after-migrate", Text: "And now?", AuthorName: "Alice"})
	require.NoError(t, err)
	require.Len(t, there.Messages, 1)
	moved, err := b.StoreClient().History(ctx, id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, moved.Messages, doc50kMessages+4)
	assert.Equal(t, "after-migrate", moved.Messages[doc50kMessages+2].MessageID)
	sameMessages(t, "History after the move", append(want, moved.Messages[doc50kMessages+2], there.Messages[0]), moved.Messages)
	step("turns and History there")

	for _, h := range []*testenv.Harness{a, b} {
		assertNoRunFailed(t, h, id)
	}
}

// assertPagesStored checks the pages of the chat's first History answer against the
// harness's store: each row is there and matches its digest, and is sealed when the
// harness encrypts.
func assertPagesStored(t *testing.T, ctx context.Context, h *testenv.Harness, id string, sealed bool) {
	t.Helper()
	v, err := h.Temporal.QueryWorkflow(ctx, id, "", wire.HistoryQuery, wire.HistoryInput{})
	require.NoError(t, err)
	var first wire.HistoryResult
	require.NoError(t, v.Get(&first))
	require.Len(t, first.Pages, wire.HistoryAnswerPages, "the first answer is all pages")
	ps, ok := h.MessageStore.(msgstore.PageStore)
	require.True(t, ok)
	for _, ref := range first.Pages {
		row, err := ps.GetPage(ctx, id, msgstore.PageKey{Lineage: ref.Lineage, Seq: ref.Seq})
		require.NoError(t, err, "%s", ref)
		assert.Equal(t, ref.Digest, msgstore.PageDigest(row), "%s", ref)
		if sealed {
			assert.NotContains(t, string(row), "Alice", "%s is sealed", ref)
		}
	}
}

// sameMessages fails t at the first message of got that differs from want's, or when
// their lengths differ, naming what was read (a diff of 50,000 messages would be
// unreadable).
func sameMessages(t *testing.T, what string, want, got []chat.Message) {
	t.Helper()
	for i := range min(len(want), len(got)) {
		if !reflect.DeepEqual(want[i], got[i]) {
			w, _ := json.Marshal(want[i])
			g, _ := json.Marshal(got[i])
			t.Errorf("%s: message %d differs:\n got %s\nwant %s", what, i, g, w)
			return
		}
	}
	assert.Len(t, got, len(want), "%s: messages", what)
}

var doc50kOnce = sync.OnceValues(func() (chatstate.Document, []byte) {
	d := bigChatDocument(0)
	d.ChatID, d.Source.WorkflowID = "long-chat", "long-chat"
	d.History = history50k(doc50kMessages)
	enc, _, err := chatstate.Encode(d)
	if err != nil {
		panic(err)
	}
	return d, enc
})

// doc50k returns the 50,000-message document (built once per test binary) and
// its encoding.
func doc50k() (chatstate.Document, []byte) { return doc50kOnce() }

// history50k is a helper thread of n messages that has what a real one has: texts
// of 20 to 400 bytes, some not ASCII; replies with usage; every 25th turn a tool
// round (a call, its result, the reply); and three replies over wire.PageBodyBytes,
// which a page holds as stubs (their bodies are rows of their own). It ends on a reply.
func history50k(n int) []chat.Message {
	at := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	words := strings.Fields("the order ships on Monday; your refund of €12.50 is on its way — naïve café résumé 東京 ok")
	text := func(i, size int) string {
		var b strings.Builder
		for k := i; b.Len() < size; k++ {
			b.WriteString(words[k%len(words)])
			b.WriteByte(' ')
		}
		return fmt.Sprintf("%d: %s", i, b.String())
	}
	ms := make([]chat.Message, 0, n)
	add := func(m chat.Message) {
		m.CreatedAt = at.Add(time.Duration(len(ms)) * time.Second)
		ms = append(ms, m)
	}
	for i := 0; len(ms) < n; i++ {
		id := fmt.Sprintf("turn-%05d", i)
		add(chat.TextMessage(id, chat.RoleUser, "Alice", text(i, 20+i*37%380)))
		reply := 1
		if i%25 == 7 && n-len(ms) > 3 {
			call := chat.Message{MessageID: id + "/1", Role: chat.RoleAssistant, AuthorName: "Helper", AgentID: "helper",
				Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: fmt.Sprintf("call-%d", i), Name: "lookup_order",
					Arguments: fmt.Sprintf(`{"order":"%d"}`, i)}}}
			result := chat.Message{MessageID: id + "/2", Role: chat.RoleTool, AgentID: "helper",
				Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: fmt.Sprintf("call-%d", i),
					Result: fmt.Sprintf(`{"status":"shipped","order":"%d"}`, i)}}}
			add(call)
			add(result)
			reply = 3
		}
		size := 20 + i*53%380
		if i == 100 || i == 5_000 || i == 12_000 {
			size = wire.PageBodyBytes + 1_000
		}
		r := chat.TextMessage(fmt.Sprintf("%s/%d", id, reply), chat.RoleAssistant, "Helper", text(i+1, size))
		r.AgentID = "helper"
		if i%3 == 0 {
			r.Usage = &chat.Usage{Model: "offline", InputTokens: 100 + i, OutputTokens: 10 + i%90}
		}
		add(r)
	}
	return ms
}
