package integration_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/storeurl"
	"github.com/agentchat/agentchat/wire"
)

// A worker killed with SIGKILL while it writes pages at continue-as-new. When the run
// hands over, the test holds the worker's store so that the WritePages activity waits
// in it; once the activity has started, the worker is killed, the store released and
// another worker started, which runs the activity again. On SQLite the test holds the
// file's write lock (the attempt killed wrote no page); on PostgreSQL it holds, in a
// transaction of its own, the row of the hand-over's second page (the attempt killed
// wrote the first page, which the next attempt finds as it would write it). Then the
// chat goes on (the turn sent during the crash is answered in the new run), holds every
// message once and in order, the store holds exactly the pages the chat's index names
// (none orphaned, none doubled), a retry of a paged turn is answered as replayed, and
// a new turn works.
func TestWorkerKilledWhileItWritesPagesAtContinueAsNew(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "messages.db")
		db, err := sql.Open("sqlite", "file:"+path+"?_busy_timeout=5000") // the store's own driver
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		killWhileWritingPages(t, heldStore{url: "sqlite://" + path, rows: sqlRows{db, "?"}, written: 0,
			hold: func(t *testing.T, _ string, _ wire.PageRef) func() { return sqliteWriteLock(t, db) }})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := testenv.SharedPostgresDSN(t)
		db, err := sql.Open("pgx", dsn)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		killWhileWritingPages(t, heldStore{url: dsn, rows: sqlRows{db, "$1"}, written: 1,
			hold: func(t *testing.T, chatID string, page wire.PageRef) func() {
				return postgresPageLock(t, db, chatID, page)
			}})
	})
}

// heldStore is the worker's message store in killWhileWritingPages.
type heldStore struct {
	url string // the worker's --message-store
	// hold makes the chat's writes of page (and of the pages after it) wait until the
	// function it returns is called; the pages before it may be written.
	hold func(t *testing.T, chatID string, page wire.PageRef) (release func())
	// written is how many of the hand-over's pages the attempt killed has written:
	// those before the page held, or none when hold holds every write.
	written int64
	rows    sqlRows
}

func killWhileWritingPages(t *testing.T, store heldStore) {
	opts := testenv.ProcessOptions{TaskQueue: testenv.TaskQueue(t), Config: deployConfig("helper"),
		Args: []string{"--offline", "--message-store", store.url}}
	first := testenv.StartWorkerProcess(t, opts) // it creates the tables
	st, err := storeurl.Open(context.Background(), store.url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	ps, ok := st.(msgstore.PageStore)
	require.True(t, ok)
	tc := testenv.Dial(t, "")
	c := agentchat.NewClient(tc, agentchat.ClientOptions{TaskQueue: opts.TaskQueue,
		MessageStores: map[string]msgstore.Store{st.Name(): st}})

	id := testenv.ChatID(t)
	in := wire.AgentChatInput{Version: wire.InputVersion, Participants: []string{"helper"},
		History:       &wire.HistoryWindow{WindowMessages: 8, PageMessages: 4},
		HistoryBudget: wire.HistoryBudget{MaxEvents: 60}}
	run, err := tc.ExecuteWorkflow(ctxFor(t), client.StartWorkflowOptions{ID: id, TaskQueue: opts.TaskQueue}, wire.WorkflowType, in)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tc.TerminateWorkflow(context.Background(), id, "", "test over") })
	turns := 0
	send := func(ctx context.Context) error {
		_, err := c.Send(ctx, id, agentchat.SendMessageInput{MessageID: fmt.Sprintf("m%d", turns), Text: fmt.Sprintf("turn %d", turns)})
		if err == nil {
			turns++
		}
		return err
	}
	// A first hand-over writes pages as usual, so that the crash comes at a later one,
	// whose pages follow those in the same lineage.
	for {
		require.NoError(t, send(ctxFor(t)), "turn %d", turns)
		state, err := c.State(ctxFor(t), id)
		require.NoError(t, err)
		if state.PagedMessages > 0 {
			break
		}
		require.Less(t, turns, 40, "no pages written after %d turns", turns)
	}
	before, err := c.State(ctxFor(t), id)
	require.NoError(t, err)
	pagesBefore := int64(len(pageRefs(t, tc, id)))

	release := store.hold(t, id, wire.PageRef{Lineage: run.GetRunID(), Seq: pagesBefore + store.written})
	stop, sent := make(chan struct{}), make(chan error, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	go func() { // turns until the hand-over; the one in flight then waits for the new run
		for {
			select {
			case <-stop:
				sent <- nil
				return
			default:
			}
			if err := send(ctx); err != nil {
				sent <- err
				return
			}
		}
	}()
	waitRunning(t, c, id, wire.WritePagesActivity)
	close(stop)
	if store.written > 0 { // the pages before the one held are written, then it waits
		require.Eventually(t, func() bool {
			_, err := ps.GetPage(context.Background(), id, msgstore.PageKey{Lineage: run.GetRunID(), Seq: pagesBefore + store.written - 1})
			return err == nil
		}, 10*time.Second, 10*time.Millisecond, "the hand-over's first pages are written")
	}
	first.Kill()
	d, err := tc.DescribeWorkflowExecution(ctxFor(t), id, "")
	require.NoError(t, err)
	require.Len(t, d.GetPendingActivities(), 1)
	pending := d.GetPendingActivities()[0]
	assert.Equal(t, wire.WritePagesActivity, pending.GetActivityType().GetName())
	assert.Equal(t, enumspb.PENDING_ACTIVITY_STATE_STARTED, pending.GetState())
	require.EqualValues(t, 1, pending.GetAttempt(), "killed in its first attempt, while the store was held: %v", pending.GetLastFailure())
	crashed := d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	stored := store.rows.pages(t, id)
	require.Len(t, stored, int(pagesBefore+store.written), "pages in the store at the kill")
	release()
	testenv.StartWorkerProcess(t, opts)
	select {
	case err := <-sent:
		require.NoError(t, err, "the turn sent during the crash")
	case <-ctx.Done():
		require.FailNow(t, "the turn sent during the crash was not answered")
	}
	t.Logf("killed the worker during the hand-over of run %s, with %d of its pages written; %d turns in all (%d messages paged before)",
		crashed, int64(len(stored))-pagesBefore, turns, before.PagedMessages)
	scheduled, completed, attempts := activityRunsIn(t, tc, id, crashed, wire.WritePagesActivity)
	assert.Equal(t, []int{1, 1, 2}, []int{scheduled, completed, attempts},
		"the crashed run's WritePages: scheduled once, completed by its second attempt")

	after, err := c.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, 2*turns, after.MessageCount)
	assert.Greater(t, after.Runs, before.Runs, "the chat continued as new after the crash")
	assert.Greater(t, after.PagedMessages, before.PagedMessages, "the pages of the hand-over were written")
	hist, err := c.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, hist.Messages, 2*turns)
	for i := range turns {
		assert.Equal(t, fmt.Sprintf("m%d", i), hist.Messages[2*i].MessageID)
		assert.Equal(t, fmt.Sprintf("turn %d", i), hist.Messages[2*i].Text())
		assert.Equal(t, fmt.Sprintf("m%d/1", i), hist.Messages[2*i+1].MessageID)
	}

	refs := pageRefs(t, tc, id)
	require.Greater(t, int64(len(refs)), pagesBefore+1, "the hand-over wrote more than one page")
	paged := int64(0)
	for i, ref := range refs {
		assert.Equal(t, run.GetRunID(), ref.Lineage, "%s: one lineage, the first run's", ref)
		assert.EqualValues(t, i, ref.Seq, "%s", ref)
		assert.Equal(t, paged, ref.First, "%s", ref)
		paged += ref.Count
	}
	assert.EqualValues(t, after.PagedMessages, paged)
	assert.Equal(t, refs, store.rows.pages(t, id), "the store holds the pages the index names, each once")
	assert.Equal(t, paged, store.rows.ids(t, id), "one id row per paged message")

	again, err := c.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m1", Text: "turn 1"})
	require.NoError(t, err, "a retry of a paged turn")
	assert.True(t, again.Replayed)
	require.Len(t, again.Messages, 1)
	assert.Equal(t, hist.Messages[3], again.Messages[0], "its first answer, from the pages")
	res, err := c.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "after", Text: "after the crash"})
	require.NoError(t, err)
	require.Len(t, res.Messages, 1)
	assert.False(t, res.Replayed)
	final, err := c.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, final.Messages, 2*turns+2)
	assert.Equal(t, hist.Messages, final.Messages[:2*turns])
	assert.Equal(t, "after", final.Messages[2*turns].MessageID)
}

// sqliteWriteLock takes the write lock of db's file (BEGIN IMMEDIATE on a connection
// of its own) and returns the function that releases it; the test's end releases it
// too. Other writers of the file wait for it, up to sqlite.BusyTimeout.
func sqliteWriteLock(t *testing.T, db *sql.DB) (release func()) {
	t.Helper()
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	_, err = conn.ExecContext(context.Background(), "BEGIN IMMEDIATE")
	require.NoError(t, err)
	var once sync.Once
	release = func() {
		once.Do(func() {
			_, err := conn.ExecContext(context.Background(), "ROLLBACK")
			assert.NoError(t, err, "release the write lock")
			_ = conn.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// postgresPageLock inserts the row of page into chat_pages in a transaction it keeps
// open, and returns the function that rolls it back; the test's end rolls it back too.
// A writer of the same page waits for that transaction (its INSERT ... ON CONFLICT
// waits on the key), up to msgstore.OpTimeout; other pages are not held.
func postgresPageLock(t *testing.T, db *sql.DB, chatID string, page wire.PageRef) (release func()) {
	t.Helper()
	tx, err := db.BeginTx(context.Background(), nil)
	require.NoError(t, err)
	_, err = tx.Exec("INSERT INTO chat_pages (chat_id, lineage, level, seq, first_index, count, body) VALUES ($1, $2, 0, $3, 0, 1, $4)",
		chatID, page.Lineage, page.Seq, []byte("held by the test"))
	require.NoError(t, err)
	var once sync.Once
	release = func() { once.Do(func() { assert.NoError(t, tx.Rollback(), "release page %s", page) }) }
	t.Cleanup(release)
	return release
}

// pageRefs returns the references of all the chat's pages, read from its History
// answers below the window.
func pageRefs(t *testing.T, tc client.Client, id string) []wire.PageRef {
	t.Helper()
	var refs []wire.PageRef
	for offset := 0; ; {
		v, err := tc.QueryWorkflow(ctxFor(t), id, "", wire.HistoryQuery, wire.HistoryInput{Offset: offset})
		require.NoError(t, err)
		var page wire.HistoryResult
		require.NoError(t, v.Get(&page))
		if len(page.Pages) == 0 {
			return refs
		}
		refs = append(refs, page.Pages...)
		last := page.Pages[len(page.Pages)-1]
		offset = int(last.First + last.Count)
	}
}

// sqlRows reads a store's tables through database/sql; param is the driver's
// placeholder for the chat id ("?" SQLite, "$1" PostgreSQL).
type sqlRows struct {
	db    *sql.DB
	param string
}

// pages returns the page rows of the chat, as references.
func (r sqlRows) pages(t *testing.T, id string) []wire.PageRef {
	t.Helper()
	rows, err := r.db.Query("SELECT lineage, level, seq, first_index, count, body FROM chat_pages WHERE chat_id = "+r.param+
		" ORDER BY lineage, level, seq", id)
	require.NoError(t, err)
	defer rows.Close()
	var refs []wire.PageRef
	for rows.Next() {
		var ref wire.PageRef
		var body []byte
		require.NoError(t, rows.Scan(&ref.Lineage, &ref.Level, &ref.Seq, &ref.First, &ref.Count, &body))
		ref.Bytes, ref.Digest = len(body), msgstore.PageDigest(body)
		refs = append(refs, ref)
	}
	require.NoError(t, rows.Err())
	return refs
}

// ids counts the id rows of the chat.
func (r sqlRows) ids(t *testing.T, id string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, r.db.QueryRow("SELECT COUNT(*) FROM chat_message_ids WHERE chat_id = "+r.param, id).Scan(&n))
	return n
}
