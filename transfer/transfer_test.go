package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/wire"
)

// fakeChat answers the ExportSnapshot and History queries of one chat run, in pages of
// at most page messages; it records the History queries it was asked.
type fakeChat struct {
	client.Client // nil: only QueryWorkflow is called
	snap          wire.Snapshot
	history       []chat.Message
	page          int
	asked         []wire.HistoryInput
}

func (f *fakeChat) QueryWorkflow(_ context.Context, _, _ string, name string, args ...any) (converter.EncodedValue, error) {
	var out any
	switch name {
	case wire.SnapshotQuery:
		out = f.snap
	case wire.HistoryQuery:
		in := args[0].(wire.HistoryInput)
		f.asked = append(f.asked, in)
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

func text(id, s string) chat.Message { return chat.TextMessage(id, chat.RoleUser, "alice", s) }

func stub(id string) chat.Message {
	return chat.Message{MessageID: id, Role: chat.RoleUser, AuthorName: "alice"}
}

// bodies is a msgstore.Store that has the bodies of some message ids.
type bodies struct {
	msgstore.Store // nil: only Get is called
	have           map[string]string
	gets           int
}

func (b *bodies) Get(_ context.Context, chatID string, ids []string) ([]chat.Message, error) {
	b.gets++
	var out []chat.Message
	for _, id := range ids {
		s, ok := b.have[id]
		if !ok {
			return nil, errors.New(chatID + ": no " + id + ": " + msgstore.ErrNotFound.Error())
		}
		out = append(out, chat.Message{MessageID: id, Role: chat.RoleUser, Contents: []chat.Content{chat.Text(s)}})
	}
	return out, nil
}

func TestBuildDocumentReadsTheHistoryUpToTheSnapshotInPages(t *testing.T) {
	pending := text("q1", "queued")
	f := &fakeChat{page: 2,
		snap: wire.Snapshot{ChatID: "c", HistoryLength: 5, PendingTurns: []chat.Message{pending},
			Participants: []chatstate.Participant{{ID: "planner"}}},
		history: []chat.Message{text("m0", "a"), text("m1", "b"), text("m2", "c"), text("m3", "d"), text("m4", "e"),
			text("m5", "after the snapshot")}}
	doc, err := BuildDocument(context.Background(), f, "c", "run-1", Source{Namespace: "ns", Cluster: "east"}, nil, nil)
	require.NoError(t, err)
	var got []string
	for _, m := range doc.History {
		got = append(got, m.MessageID)
	}
	assert.Equal(t, []string{"m0", "m1", "m2", "m3", "m4"}, got, "the history up to the snapshot only")
	assert.Equal(t, []wire.HistoryInput{
		{Offset: 0, Limit: 5, MaxBytes: wire.HistoryPageBytes},
		{Offset: 2, Limit: 3, MaxBytes: wire.HistoryPageBytes},
		{Offset: 4, Limit: 1, MaxBytes: wire.HistoryPageBytes},
	}, f.asked)
	assert.Equal(t, chatstate.Source{Namespace: "ns", WorkflowID: "c", RunID: "run-1", Cluster: "east"}, doc.Source)
	assert.Equal(t, chatstate.SchemaVersion, doc.SchemaVersion)
	assert.Equal(t, "c", doc.ChatID)
	assert.Equal(t, []chat.Message{pending}, doc.PendingTurns)
	assert.Equal(t, "planner", doc.Participants[0].ID)
}

func TestBuildDocumentFillsStubsOrSaysTheyAreStored(t *testing.T) {
	ctx := context.Background()
	history := []chat.Message{stub("m0"), stub("m1"), text("m2", "latest"), text("m3", "newer")}

	t.Run("Filled", func(t *testing.T) {
		f := &fakeChat{page: 10, snap: wire.Snapshot{HistoryLength: 4, Stubbed: true}, history: history}
		st := &bodies{have: map[string]string{"m0": "first", "m1": "second"}}
		fill := func(ctx context.Context, msgs []chat.Message) ([]chat.Message, error) {
			return FillStubs(ctx, st, "c", msgs)
		}
		doc, err := BuildDocument(ctx, f, "c", "", Source{}, fill, nil)
		require.NoError(t, err)
		assert.Equal(t, []string{"first", "second", "latest", "newer"},
			[]string{doc.History[0].Text(), doc.History[1].Text(), doc.History[2].Text(), doc.History[3].Text()})
		assert.Equal(t, "alice", doc.History[0].AuthorName, "a filled stub keeps its author")
	})
	t.Run("StubbedWithoutFill", func(t *testing.T) {
		f := &fakeChat{page: 10, snap: wire.Snapshot{HistoryLength: 4, Stubbed: true}, history: history}
		_, err := BuildDocument(ctx, f, "c", "", Source{}, nil, nil)
		require.ErrorIs(t, err, ErrStoredMessages)
		assert.Empty(t, f.asked, "the snapshot says so: no history is read")
	})
	t.Run("StubsOfAChatThatPredatesStubbed", func(t *testing.T) {
		f := &fakeChat{page: 1, snap: wire.Snapshot{HistoryLength: 4}, history: []chat.Message{text("m0", "x"), stub("m1"), stub("m2"), text("m3", "y")}}
		_, err := BuildDocument(ctx, f, "c", "", Source{}, nil, nil)
		require.ErrorIs(t, err, ErrStoredMessages)
		assert.Contains(t, err.Error(), "from message 1 on")
		assert.Len(t, f.asked, 2, "reading stops at the page with the first stub")
	})
	t.Run("FillThatCannotFill", func(t *testing.T) {
		f := &fakeChat{page: 10, snap: wire.Snapshot{HistoryLength: 4, Stubbed: true}, history: history}
		keep := func(_ context.Context, msgs []chat.Message) ([]chat.Message, error) { return msgs, nil }
		_, err := BuildDocument(ctx, f, "c", "", Source{}, keep, nil)
		require.ErrorIs(t, err, ErrStoredMessages)
		assert.Contains(t, err.Error(), "from message 0 on")
	})
}

func TestReadHistoryFailsWhenTheHistoryEndsEarly(t *testing.T) {
	f := &fakeChat{page: 10, history: []chat.Message{text("m0", "a"), text("m1", "b")}}
	got, err := ReadHistory(context.Background(), f, "c", "r", 1, 2, nil)
	require.NoError(t, err)
	assert.Equal(t, "m1", got[0].MessageID)
	_, err = ReadHistory(context.Background(), f, "c", "r", 0, 3, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "history ended at 2 of 3 messages")
}

func TestFillStubs(t *testing.T) {
	ctx := context.Background()
	st := &bodies{have: map[string]string{"s1": "one", "s2": "two"}}
	msgs := []chat.Message{stub("s1"), text("t", "kept"), stub("s2")}
	out, err := FillStubs(ctx, st, "c", msgs)
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "kept", "two"}, []string{out[0].Text(), out[1].Text(), out[2].Text()})
	assert.True(t, IsStub(msgs[0]) && IsStub(msgs[2]), "msgs is not modified")
	assert.Equal(t, 1, st.gets, "one Get for all stubs")

	none := []chat.Message{text("t", "x")}
	out, err = FillStubs(ctx, st, "c", none)
	require.NoError(t, err)
	assert.Equal(t, none, out)
	assert.Equal(t, 1, st.gets, "no stubs: the store is not asked")

	_, err = FillStubs(ctx, st, "c", []chat.Message{stub("missing")})
	require.ErrorContains(t, err, "no missing")
}

func TestFileURIAndPathOf(t *testing.T) {
	uri := FileURI("/var/lib/agent chat/x%y.json")
	assert.Equal(t, "file:///var/lib/agent%20chat/x%25y.json", uri)
	p, err := PathOf(uri)
	require.NoError(t, err)
	assert.Equal(t, "/var/lib/agent chat/x%y.json", p)
	p, err = PathOf("file://localhost/tmp/d.json")
	require.NoError(t, err)
	assert.Equal(t, "/tmp/d.json", p)
	for _, bad := range []string{"https://example.com/d.json", "file://host/tmp/d.json", "file:relative.json", "s3://b/k", "%"} {
		_, err := PathOf(bad)
		assert.ErrorContains(t, err, "is not a file:// URI of an absolute path", bad)
	}
}

// StreamDocument gives what BuildDocument does, the history one answer at a time: an
// Encoder writes the bytes Encode writes of BuildDocument's document.
func TestStreamDocumentIsBuildDocumentReadAnAnswerAtATime(t *testing.T) {
	ctx := context.Background()
	newChat := func() *fakeChat {
		return &fakeChat{page: 2,
			snap: wire.Snapshot{ChatID: "c", HistoryLength: 5, PendingTurns: []chat.Message{text("q1", "queued")}, Stubbed: true,
				Participants: []chatstate.Participant{{ID: "planner", Name: "Planner", Type: "chat_completion"}}, Channels: []chatstate.Channel{},
				Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential", State: json.RawMessage(`{}`)},
					Termination: chatstate.Strategy{Type: "maxIterations", State: json.RawMessage(`{}`)}}},
			history: []chat.Message{stub("m0"), text("m1", "b"), stub("m2"), text("m3", "d"), text("m4", "e"), text("m5", "after the snapshot")}}
	}
	st := &bodies{have: map[string]string{"m0": "first", "m2": "third"}}
	fill := func(ctx context.Context, msgs []chat.Message) ([]chat.Message, error) {
		return FillStubs(ctx, st, "c", msgs)
	}
	whole, err := BuildDocument(ctx, newChat(), "c", "run-1", Source{Namespace: "ns"}, fill, nil)
	require.NoError(t, err)
	f := newChat()
	head, history, err := StreamDocument(ctx, f, "c", "run-1", Source{Namespace: "ns"}, fill, nil)
	require.NoError(t, err)
	assert.Nil(t, head.History)
	head.ExportedAt, whole.ExportedAt = whole.ExportedAt.Truncate(time.Second), whole.ExportedAt.Truncate(time.Second)
	want, _, err := chatstate.Encode(whole)
	require.NoError(t, err)
	var buf writerAt
	n, _, err := chatstate.NewEncoder(&buf).Encode(head, history)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(buf.b[:n]))
	assert.Len(t, f.asked, 3, "one query an answer of two messages")

	_, history, err = StreamDocument(ctx, newChat(), "c", "", Source{}, func(_ context.Context, m []chat.Message) ([]chat.Message, error) { return m, nil }, nil)
	require.NoError(t, err)
	err = history(func(chat.Message) error { return nil })
	require.ErrorIs(t, err, ErrStoredMessages)
	assert.Contains(t, err.Error(), "from message 0 on")
	_, _, err = StreamDocument(ctx, newChat(), "c", "", Source{}, nil, nil)
	require.ErrorIs(t, err, ErrStoredMessages)
}

// writerAt is an in-memory io.WriterAt.
type writerAt struct{ b []byte }

func (w *writerAt) WriteAt(p []byte, off int64) (int, error) {
	if end := int(off) + len(p); end > len(w.b) {
		w.b = append(w.b, make([]byte, end-len(w.b))...)
	}
	return copy(w.b[off:], p), nil
}
