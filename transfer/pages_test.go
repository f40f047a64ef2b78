package transfer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/sqlite"
	"github.com/agentchat/agentchat/wire"
)

// pagesFixture is a SQLite message store (path) holding level-0 pages of chat "c",
// lineage "L", written through st (the store, or Sealed over it): refs are their index
// entries, as a History answer gives them, and msgs the messages they hold.
type pagesFixture struct {
	path string
	st   msgstore.PageStore
	refs []wire.PageRef
	msgs []chat.Message
}

const testLineage = "L"

func openPages(t *testing.T, ring *keyring.Ring) *pagesFixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "messages.db")
	raw, err := sqlite.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { raw.Close() })
	f := &pagesFixture{path: path, st: raw}
	if ring != nil {
		f.st = msgstore.Sealed(raw, ring).(msgstore.PageStore)
	}
	return f
}

// put writes msgs as the next page (bodies over wire.PageBodyBytes in their own row,
// the page holding the stub) and appends its ref.
func (f *pagesFixture) put(t *testing.T, msgs ...chat.Message) {
	t.Helper()
	ctx := context.Background()
	seq, first := int64(len(f.refs)), int64(len(f.msgs))
	inPage := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		inPage[i] = m
		if len(m.Text()) > wire.PageBodyBytes {
			body := chat.Message{MessageID: m.MessageID, Role: m.Role, AgentID: m.AgentID, Contents: m.Contents}
			require.NoError(t, f.st.Put(ctx, "c", []chat.Message{body}))
			inPage[i].Contents = nil
		}
	}
	body, err := msgstore.EncodePageBody(msgstore.PageBody{ChatID: "c", Lineage: testLineage, Seq: seq, First: first, Messages: inPage})
	require.NoError(t, err)
	p := msgstore.Page{Lineage: testLineage, Seq: seq, First: first, Count: int64(len(msgs)), Body: body}
	digest, err := f.st.PutPage(ctx, "c", p)
	require.NoError(t, err)
	f.refs = append(f.refs, wire.PageRef{Seq: seq, First: first, Count: p.Count, Bytes: len(body), Digest: digest, Lineage: testLineage})
	f.msgs = append(f.msgs, msgs...)
}

// pageOf puts n messages "m<i>" as the next page.
func (f *pagesFixture) pageOf(t *testing.T, n int) {
	t.Helper()
	msgs := make([]chat.Message, n)
	for k := range msgs {
		i := len(f.msgs) + k
		msgs[k] = text(fmt.Sprintf("m%d", i), fmt.Sprintf("message %d", i))
	}
	f.put(t, msgs...)
}

func (f *pagesFixture) stores() map[string]msgstore.Store {
	return map[string]msgstore.Store{"sqlite": f.st}
}

// setRow replaces the stored row of page seq behind the store's back.
func (f *pagesFixture) setRow(t *testing.T, seq int64, row []byte) {
	t.Helper()
	db, err := sql.Open("sqlite", f.path)
	require.NoError(t, err)
	defer db.Close()
	res, err := db.Exec("UPDATE chat_pages SET body = ? WHERE chat_id = 'c' AND lineage = ? AND level = 0 AND seq = ?", row, testLineage, seq)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
}

func (f *pagesFixture) row(t *testing.T, seq int64) []byte {
	t.Helper()
	db, err := sql.Open("sqlite", f.path)
	require.NoError(t, err)
	defer db.Close()
	var row []byte
	require.NoError(t, db.QueryRow("SELECT body FROM chat_pages WHERE chat_id = 'c' AND lineage = ? AND level = 0 AND seq = ?", testLineage, seq).Scan(&row))
	return row
}

func ids(msgs []chat.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.MessageID
	}
	return out
}

// requireUnreadable fails t unless err is the non-retryable HistoryPageUnreadable
// wrapping sentinel, and returns its message.
func requireUnreadable(t *testing.T, err error, sentinel error) string {
	t.Helper()
	require.ErrorIs(t, err, sentinel)
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	assert.Equal(t, wire.ErrTypeHistoryPageUnreadable, app.Type())
	assert.True(t, app.NonRetryable())
	return app.Message()
}

func testRing(t *testing.T) *keyring.Ring {
	t.Helper()
	f, err := keyring.Generate("k1")
	require.NoError(t, err)
	ring, err := keyring.New(f)
	require.NoError(t, err)
	return ring
}

func TestReadPages(t *testing.T) {
	ctx := context.Background()
	for _, sealed := range []bool{false, true} {
		name := "Plain"
		var ring *keyring.Ring
		if sealed {
			name, ring = "Sealed", testRing(t)
		}
		t.Run(name, func(t *testing.T) {
			t.Run("Whole", func(t *testing.T) {
				f := openPages(t, ring)
				f.pageOf(t, 4)
				f.pageOf(t, 3)
				f.pageOf(t, 4)
				got, err := ReadPages(ctx, f.stores(), "sqlite", "c", f.refs, 0, 0)
				require.NoError(t, err)
				assert.Equal(t, ids(f.msgs), ids(got))
				assert.Equal(t, "message 5", got[5].Text())
				assert.Equal(t, "alice", got[5].AuthorName)

				got, err = ReadPages(ctx, f.stores(), "sqlite", "c", f.refs[1:2], 4, 0)
				require.NoError(t, err)
				assert.Equal(t, []string{"m4", "m5", "m6"}, ids(got), "one page of the middle")
				got, err = ReadPages(ctx, f.stores(), "sqlite", "c", nil, 0, 0)
				require.NoError(t, err)
				assert.Empty(t, got)
			})
			t.Run("Missing", func(t *testing.T) {
				f := openPages(t, ring)
				f.pageOf(t, 4)
				gone := wire.PageRef{Seq: 1, First: 4, Count: 4, Digest: f.refs[0].Digest, Lineage: testLineage}
				_, err := ReadPages(ctx, f.stores(), "sqlite", "c", append(f.refs, gone), 0, 0)
				msg := requireUnreadable(t, err, msgstore.ErrPageMissing)
				assert.Equal(t, `chat "c": history page 1 (messages 4 to 7, lineage L) is missing from message store "sqlite"`, msg)
			})
			t.Run("TamperedRow", func(t *testing.T) {
				f := openPages(t, ring)
				f.pageOf(t, 4)
				f.pageOf(t, 4)
				row := f.row(t, 1)
				row[len(row)-3] ^= 1 // a byte of the plaintext's end, or of the seal's tag
				f.setRow(t, 1, row)
				_, err := ReadPages(ctx, f.stores(), "sqlite", "c", f.refs, 0, 0)
				msg := requireUnreadable(t, err, msgstore.ErrPageMismatch)
				assert.Equal(t, fmt.Sprintf(`chat "c": history page 1 (messages 4 to 7, lineage L) does not match its index: stored %s, indexed %s`,
					msgstore.PageDigest(row), f.refs[1].Digest), msg)
			})
			t.Run("AnotherSeqUnderTheKey", func(t *testing.T) {
				f := openPages(t, ring)
				f.pageOf(t, 4)
				// Page 1's body, written under page 0's key: its digest is the row's own.
				other := openPages(t, nil)
				other.pageOf(t, 4)
				other.pageOf(t, 4)
				body := other.row(t, 1)
				g := openPages(t, ring)
				digest, err := g.st.PutPage(ctx, "c", msgstore.Page{Lineage: testLineage, Seq: 0, First: 0, Count: 4, Body: body})
				require.NoError(t, err)
				ref := wire.PageRef{Seq: 0, First: 0, Count: 4, Bytes: len(body), Digest: digest, Lineage: testLineage}
				_, err = ReadPages(ctx, g.stores(), "sqlite", "c", []wire.PageRef{ref}, 0, 0)
				msg := requireUnreadable(t, err, msgstore.ErrPageMismatch)
				assert.Equal(t, `chat "c": history page 0 (messages 0 to 3, lineage L) does not match its index: its body is chat "c", lineage L, level 0, seq 1, 4 messages from 4`, msg)

				// A ref that says more messages than the page holds.
				long := f.refs[0]
				long.Count = 5
				_, err = ReadPages(ctx, f.stores(), "sqlite", "c", []wire.PageRef{long}, 0, 0)
				msg = requireUnreadable(t, err, msgstore.ErrPageMismatch)
				assert.Contains(t, msg, "4 messages from 0")
				// Chat c's page 0 written as chat d's.
				digest, err = g.st.PutPage(ctx, "d", msgstore.Page{Lineage: testLineage, Seq: 0, First: 0, Count: 4, Body: other.row(t, 0)})
				require.NoError(t, err)
				ref.Digest = digest
				_, err = ReadPages(ctx, g.stores(), "sqlite", "d", []wire.PageRef{ref}, 0, 0)
				msg = requireUnreadable(t, err, msgstore.ErrPageMismatch)
				assert.Contains(t, msg, `its body is chat "c", lineage L, level 0, seq 0`)
			})
			t.Run("StubOverPageBodyBytes", func(t *testing.T) {
				f := openPages(t, ring)
				big := text("big", strings.Repeat("x", wire.PageBodyBytes+1))
				f.put(t, text("m0", "small"), big, text("m2", "after"))
				assert.Less(t, f.refs[0].Bytes, wire.PageBodyBytes, "the page holds the stub")
				got, err := ReadPages(ctx, f.stores(), "sqlite", "c", f.refs, 0, 0)
				require.NoError(t, err)
				assert.Equal(t, []string{"m0", "big", "m2"}, ids(got))
				assert.Equal(t, big.Text(), got[1].Text(), "filled from its own row")
				assert.Equal(t, "alice", got[1].AuthorName, "the stub's author")
			})
		})
	}
}

func TestReadPagesOfASealedStoreReadWithoutItsRing(t *testing.T) {
	f := openPages(t, testRing(t))
	f.pageOf(t, 4)
	raw, err := sqlite.Open(f.path)
	require.NoError(t, err)
	defer raw.Close()
	_, err = ReadPages(context.Background(), map[string]msgstore.Store{"sqlite": raw}, "sqlite", "c", f.refs, 0, 0)
	require.ErrorIs(t, err, msgstore.ErrEncrypted)
	assert.Contains(t, err.Error(), "history page 0 (messages 0 to 3, lineage L)")
	var app *temporal.ApplicationError
	assert.False(t, errors.As(err, &app), "not an integrity failure: the store's error")
}

func TestReadPagesWithoutTheStore(t *testing.T) {
	f := openPages(t, nil)
	f.pageOf(t, 4)
	for name, stores := range map[string]map[string]msgstore.Store{
		"None":        nil,
		"AnotherName": {"postgres": f.st},
		"NoPages":     {"sqlite": &bodies{}},
	} {
		_, err := ReadPages(context.Background(), stores, "sqlite", "c", f.refs, 0, 0)
		require.ErrorIs(t, err, ErrStoredMessages, name)
		assert.Contains(t, err.Error(), `chat "c": history page 0 (messages 0 to 3, lineage L) is in message store "sqlite"`, name)
	}
}

// fold writes the index pages of f's pages for fanout (wire.FoldIndex) and returns the
// chat's index, as the workflow carries it (each ref with its lineage).
func (f *pagesFixture) fold(t *testing.T, fanout int) []wire.PageRef {
	t.Helper()
	index, err := wire.FoldIndex(f.refs, fanout, func(level int, seq int64, refs []wire.PageRef) (wire.PageRef, error) {
		b := msgstore.IndexBody{ChatID: "c", Lineage: testLineage, Level: level, Seq: seq, First: refs[0].First}
		for _, r := range refs {
			b.Refs = append(b.Refs, msgstore.IndexEntry{Level: r.Level, Seq: r.Seq, First: r.First, Count: r.Count, Bytes: r.Bytes, Digest: r.Digest})
		}
		body, err := msgstore.EncodeIndexBody(b)
		require.NoError(t, err)
		p := msgstore.Page{Lineage: testLineage, Level: level, Seq: seq, First: b.First, Count: b.Count(), Body: body}
		digest, err := f.st.PutPage(context.Background(), "c", p)
		require.NoError(t, err)
		return wire.PageRef{Level: level, Seq: seq, First: p.First, Count: p.Count, Bytes: len(body), Digest: digest, Lineage: testLineage}, nil
	})
	require.NoError(t, err)
	return index
}

// countingPages counts the page rows read through it.
type countingPages struct {
	msgstore.PageStore
	reads int
}

func (c *countingPages) GetPageRow(ctx context.Context, chatID string, key msgstore.PageKey) (msgstore.PageRow, error) {
	c.reads++
	return c.PageStore.GetPageRow(ctx, chatID, key)
}

// Pages under index pages (levels 1 to 3 with a fanout of 2) read as the pages
// themselves, from every message and for every number of pages asked, and a reader
// reads only the index pages on the path to the pages it returns.
func TestReadPagesThroughIndexPages(t *testing.T) {
	ctx := context.Background()
	for _, sealed := range []bool{false, true} {
		var ring *keyring.Ring
		if sealed {
			ring = testRing(t)
		}
		f := openPages(t, ring)
		for i := range 11 {
			f.pageOf(t, 1+i%3)
		}
		index := f.fold(t, 2)
		require.Equal(t, 3, index[0].Level, "11 pages of fanout 2: 8 under a level-3 page, then 2 and 1")
		require.Len(t, index, 3)
		for from := range len(f.msgs) {
			for _, pages := range []int{0, 1, 2, 5} {
				counted := &countingPages{PageStore: f.st}
				got, err := ReadPages(ctx, map[string]msgstore.Store{"sqlite": counted}, "sqlite", "c", index, int64(from), pages)
				require.NoError(t, err, "from %d, %d pages", from, pages)
				end := len(f.msgs)
				if pages > 0 {
					at := slices.IndexFunc(f.refs, func(r wire.PageRef) bool { return r.First+r.Count > int64(from) })
					last := f.refs[min(at+pages, len(f.refs))-1]
					end = int(last.First + last.Count)
				}
				require.Equal(t, ids(f.msgs[from:end]), ids(got), "from %d, %d pages", from, pages)
				if pages == 1 {
					assert.LessOrEqual(t, counted.reads, 4, "from %d: the path down (at most 3 index pages) and the page", from)
				}
			}
		}

		// An index page that does not match its reference is refused, naming it.
		tampered := slices.Clone(index)
		tampered[0].Digest = f.refs[0].Digest
		_, err := ReadPages(ctx, f.stores(), "sqlite", "c", tampered, 0, 1)
		msg := requireUnreadable(t, err, msgstore.ErrPageMismatch)
		assert.Contains(t, msg, `chat "c": history index page 0 of level 3 (messages 0 to 14, lineage L) does not match its index: stored sha256:`)
		// A ref that says more messages than the pages under it hold.
		long := slices.Clone(index)
		long[1].Count++
		_, err = ReadPages(ctx, f.stores(), "sqlite", "c", long[1:2], long[1].First, 1)
		msg = requireUnreadable(t, err, msgstore.ErrPageMismatch)
		assert.Contains(t, msg, "its body is chat \"c\", lineage L, level 1")
		// An index page missing from the store.
		gone := index[0]
		gone.Seq = 9
		_, err = ReadPages(ctx, f.stores(), "sqlite", "c", []wire.PageRef{gone}, 0, 1)
		msg = requireUnreadable(t, err, msgstore.ErrPageMissing)
		assert.Contains(t, msg, "history index page 9 of level 3")
		// A level-0 page read where an index page is named: refused as not an index page.
		wrong := f.refs[0]
		wrong.Level = 1
		_, err = ReadPages(ctx, f.stores(), "sqlite", "c", []wire.PageRef{wrong}, 0, 1)
		requireUnreadable(t, err, msgstore.ErrPageMismatch)
		// From outside the refs given.
		_, err = ReadPages(ctx, f.stores(), "sqlite", "c", index[1:], 0, 1)
		assert.ErrorContains(t, err, "message 0 is not in the pages given")
	}
}
