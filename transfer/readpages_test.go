package transfer

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/wire"
)

// pagedChat is fakeChat whose messages below base are in pages: a History query from
// below base is answered with the refs of the pages from the one holding the offset
// (at most perAnswer of them), no messages, Offset the one asked and Store "sqlite", as
// a chat's workflow answers for the part of its history below its window.
type pagedChat struct {
	*fakeChat
	refs      []wire.PageRef
	base      int
	perAnswer int
}

func (f *pagedChat) QueryWorkflow(ctx context.Context, wid, rid string, name string, args ...any) (converter.EncodedValue, error) {
	if name != wire.HistoryQuery || args[0].(wire.HistoryInput).Offset >= f.base {
		return f.fakeChat.QueryWorkflow(ctx, wid, rid, name, args...)
	}
	in := args[0].(wire.HistoryInput)
	f.asked = append(f.asked, in)
	var refs []wire.PageRef
	for _, r := range f.refs {
		if r.First+r.Count > int64(in.Offset) && len(refs) < f.perAnswer {
			refs = append(refs, r)
		}
	}
	p, err := converter.GetDefaultDataConverter().ToPayloads(wire.HistoryResult{Offset: in.Offset, Total: len(f.history), Store: "sqlite", Pages: refs})
	if err != nil {
		return nil, err
	}
	return client.NewValue(p), nil
}

// newPagedChat returns a chat of 14 messages: pages of 4, 3 and 4 messages (0 to 10)
// in a SQLite store, and 3 in the window (11 to 13), answered 2 at a time.
func newPagedChat(t *testing.T) (*pagedChat, *pagesFixture) {
	t.Helper()
	pf := openPages(t, nil)
	pf.pageOf(t, 4)
	pf.pageOf(t, 3)
	pf.pageOf(t, 4)
	history := append([]chat.Message(nil), pf.msgs...)
	history = append(history, text("m11", "w"), text("m12", "x"), text("m13", "y"))
	f := &pagedChat{fakeChat: &fakeChat{page: 2, history: history, snap: wire.Snapshot{ChatID: "c", HistoryLength: 14}},
		refs: pf.refs, base: 11, perAnswer: 2}
	return f, pf
}

func TestReadHistoryFollowsPagesThenMessages(t *testing.T) {
	ctx := context.Background()
	f, pf := newPagedChat(t)
	got, err := ReadHistory(ctx, f, "c", "r", 2, 13, PagesFrom(pf.stores()))
	require.NoError(t, err)
	assert.Equal(t, []string{"m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10", "m11", "m12"}, ids(got))
	assert.Equal(t, "message 9", got[7].Text())
	var offsets []int
	for _, in := range f.asked {
		offsets = append(offsets, in.Offset)
	}
	assert.Equal(t, []int{2, 7, 11}, offsets, "pages 0 and 1, page 2, then the window; each from after the last")

	f, _ = newPagedChat(t)
	got, err = ReadHistory(ctx, f, "c", "r", 5, 6, PagesFrom(pf.stores()))
	require.NoError(t, err)
	assert.Equal(t, []string{"m5"}, ids(got), "sliced to what was asked")
}

func TestReadHistoryWithoutTheStoreNamesTheFirstPage(t *testing.T) {
	f, _ := newPagedChat(t)
	_, err := ReadHistory(context.Background(), f, "c", "r", 5, 14, nil)
	require.ErrorIs(t, err, ErrStoredMessages)
	assert.Contains(t, err.Error(), `chat "c": history page 1 (messages 4 to 6, lineage L) is in message store "sqlite"`)
}

func TestBuildDocumentReadsPages(t *testing.T) {
	ctx := context.Background()
	f, pf := newPagedChat(t)
	doc, err := BuildDocument(ctx, f, "c", "", Source{}, nil, PagesFrom(pf.stores()))
	require.NoError(t, err)
	assert.Equal(t, ids(f.history), ids(doc.History))

	f, _ = newPagedChat(t)
	_, err = BuildDocument(ctx, f, "c", "", Source{}, nil, nil)
	require.ErrorIs(t, err, ErrStoredMessages, "the client exports through the worker then")

	f, pf = newPagedChat(t)
	row := pf.row(t, 2)
	row[len(row)-3] ^= 1
	pf.setRow(t, 2, row)
	_, err = BuildDocument(ctx, f, "c", "", Source{}, nil, PagesFrom(pf.stores()))
	requireUnreadable(t, err, msgstore.ErrPageMismatch)
}
