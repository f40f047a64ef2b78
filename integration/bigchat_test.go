package integration_test

// Export and import of a 10,000-message chat through a real worker and dev server.
//
// Run the benchmark (slow by nature: each iteration exports a 10k-message chat through
// its queries and restores it into a new chat through the ImportChat activity):
//
//	go test -run=^$ -bench=ExportImport10k -benchtime=3x ./integration
//
// It reports, per iteration: export-ms (Client.Export: the ExportSnapshot query and the
// History query in pages, then Encode), import-ms (Client.Import of the exported bytes
// by file into a fresh chat: Decode on the client, then the ImportChat activity in pages
// and the workflow's restore, until the Describe update answers), doc-bytes, and the
// baseline json.Marshal / json.Unmarshal of the same []chat.Message (marshal-ms,
// unmarshal-ms) with the ratios export/marshal and import/unmarshal. ns/op is export
// plus import; the baseline runs with the timer stopped.
//
// TestExportImport10kRoundTrip is one such round as a test (go test -run 10k ./integration).

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/bench"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// bigChatMessages is the size of the chats of this file.
const bigChatMessages = 10_000

// bigChatDocument is the document of a helper thread with n messages, as an export of
// a chat with the default strategies writes it.
func bigChatDocument(n int) chatstate.Document {
	d := bench.Document(bench.History(n))
	d.ChatID, d.Source.WorkflowID = "big-chat", "big-chat"
	return d
}

// sameHeader returns d with the members that differ between exports of different
// chats (chatId, exportedAt, source) set to ref's, and no digest.
func sameHeader(d, ref chatstate.Document) chatstate.Document {
	d.ChatID, d.ExportedAt, d.Source, d.Digest = ref.ChatID, ref.ExportedAt, ref.Source, ""
	return d
}

func TestExportImport10kRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // about 70 s under -race
	defer cancel()
	h := testenv.New(t, testenv.Options{})
	orig := bigChatDocument(bigChatMessages)
	enc, digest, err := chatstate.Encode(orig)
	require.NoError(t, err)
	t.Logf("document: %d messages, %d bytes", len(orig.History), len(enc))

	lap := time.Now()
	step := func(what string) {
		t.Logf("%-28s %v", what, time.Since(lap).Round(time.Millisecond))
		lap = time.Now()
	}
	src := testenv.ChatID(t)
	st := importBytes(t, ctx, h, src, enc)
	step("import the generated doc")
	assert.Equal(t, bigChatMessages, st.MessageCount)
	assert.Equal(t, bigChatMessages/2, st.TurnCount)
	assert.Equal(t, digest, st.RestoredDigest)
	// The bodies went to the message store: the snapshot says so, and the client, which
	// has no store, exports through the worker without reading the history first.
	v, err := h.Temporal.QueryWorkflow(ctx, src, "", wire.SnapshotQuery)
	require.NoError(t, err)
	var snap wire.Snapshot
	require.NoError(t, v.Get(&snap))
	assert.True(t, snap.Stubbed)

	b1, d1, err := h.Client.Export(ctx, src)
	require.NoError(t, err)
	step("export it")
	dst := src + "-again"
	st = importBytes(t, ctx, h, dst, b1)
	step("import the export")
	assert.Equal(t, d1, st.RestoredDigest)
	b2, d2, err := h.Client.Export(ctx, dst)
	require.NoError(t, err)
	step("export that")
	// Every page of the import is an activity result in the restored chat's event
	// history; the pages carry stubs for all but the latest 32 messages, so it stays far
	// below the document's size (Temporal warns at 10 MB, fails at 50 MB).
	desc, err := h.Temporal.DescribeWorkflowExecution(ctx, dst, "")
	require.NoError(t, err)
	t.Logf("event history of the restored chat: %d events, %d bytes",
		desc.GetWorkflowExecutionInfo().GetHistoryLength(), desc.GetWorkflowExecutionInfo().GetHistorySizeBytes())
	assert.Less(t, desc.GetWorkflowExecutionInfo().GetHistorySizeBytes(), int64(len(enc)/4), "stubs, not bodies, in the event history")

	doc1, _, err := chatstate.Decode(b1)
	require.NoError(t, err)
	doc2, _, err := chatstate.Decode(b2)
	require.NoError(t, err)
	assert.Equal(t, d1, doc1.Digest)
	assert.Equal(t, d2, doc2.Digest)
	assert.NotEqual(t, d1, d2, "two chats' documents differ in chatId, source and exportedAt")
	require.Len(t, doc2.History, bigChatMessages)
	assert.True(t, historiesEqual(orig.History, doc1.History), "the first export holds the generated history")
	assert.True(t, historiesEqual(orig.History, doc2.History), "the re-exported history is the generated one")
	assert.Equal(t, src, doc1.ChatID)
	assert.Equal(t, dst, doc2.ChatID)

	// Digests of the two exports with the same header: the same, and the generated
	// document's, so history, participants, channels and strategies all came through.
	h1, err := chatstate.Digest(sameHeader(doc1, orig))
	require.NoError(t, err)
	h2, err := chatstate.Digest(sameHeader(doc2, orig))
	require.NoError(t, err)
	assert.Equal(t, h1, h2)
	assert.Equal(t, digest, h2)
}

// Export pages the history by bytes: messages of 9 KB (500 of them, a page by count
// before, are over gRPC's 4 MiB limit), after 20 short ones that would make a page
// sized from the first one far too large.
func TestExportOfLargeMessages(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // about 25 s under -race
	defer cancel()
	h := testenv.New(t, testenv.Options{})
	orig := bigChatDocument(600)
	r := rand.New(rand.NewPCG(7, 7))
	for i := range orig.History {
		n := 9000
		if i < 20 {
			n = 50
		}
		orig.History[i].Contents = []chat.Content{chat.Text(bench.Prose(r, n))}
	}
	enc, digest, err := chatstate.Encode(orig)
	require.NoError(t, err)
	id := testenv.ChatID(t)
	importBytes(t, ctx, h, id, enc)

	b, _, err := h.Client.Export(ctx, id)
	require.NoError(t, err)
	doc, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	assert.True(t, historiesEqual(orig.History, doc.History))
	same, err := chatstate.Digest(sameHeader(doc, orig))
	require.NoError(t, err)
	assert.Equal(t, digest, same)
}

// historiesEqual compares two histories by their canonical JSON, so that equal times
// in different representations compare equal.
func historiesEqual(a, b []chat.Message) bool {
	if len(a) != len(b) {
		return false
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

func BenchmarkExportImport10k(b *testing.B) {
	ctx := context.Background()
	h := testenv.New(b, testenv.Options{})
	doc := bigChatDocument(bigChatMessages)
	enc, _, err := chatstate.Encode(doc)
	require.NoError(b, err)
	src := testenv.ChatID(b)
	importBytes(b, ctx, h, src, enc)

	var exportTime, importTime, marshalTime, unmarshalTime time.Duration
	var docBytes, plainBytes, n int
	for b.Loop() {
		start := time.Now()
		exp, _, err := h.Client.Export(ctx, src)
		require.NoError(b, err)
		exportTime += time.Since(start)
		docBytes = len(exp)

		// The file write is part of importing a document this size.
		start = time.Now()
		st := importBytes(b, ctx, h, fmt.Sprintf("%s-%d", src, n), exp)
		importTime += time.Since(start)
		require.Equal(b, bigChatMessages, st.MessageCount)

		b.StopTimer()
		start = time.Now()
		plain, err := json.Marshal(doc.History)
		require.NoError(b, err)
		marshalTime += time.Since(start)
		start = time.Now()
		var back []chat.Message
		require.NoError(b, json.Unmarshal(plain, &back))
		unmarshalTime += time.Since(start)
		plainBytes = len(plain)
		b.StartTimer()
		n++
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(n) }
	b.ReportMetric(ms(exportTime), "export-ms")
	b.ReportMetric(ms(importTime), "import-ms")
	b.ReportMetric(ms(marshalTime), "marshal-ms")
	b.ReportMetric(ms(unmarshalTime), "unmarshal-ms")
	b.ReportMetric(float64(exportTime)/float64(marshalTime), "export/marshal")
	b.ReportMetric(float64(importTime)/float64(unmarshalTime), "import/unmarshal")
	b.ReportMetric(float64(docBytes), "doc-bytes")
	b.ReportMetric(float64(docBytes)/float64(plainBytes), "size-ratio")
}
