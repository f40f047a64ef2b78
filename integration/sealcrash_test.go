package integration_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/sqlite"
	"github.com/agentchat/agentchat/wire"
)

// A worker killed with SIGKILL while it writes pages at continue-as-new. The test
// holds the write lock of the worker's SQLite file when the run hands over, so the
// WritePages activity waits in the store; once it has started, the worker is killed,
// the lock released and another worker started, which runs the activity again. Then
// the chat goes on (the turn sent during the crash is answered in the new run), holds
// every message once and in order, the store holds exactly the pages the chat's index
// names (none orphaned, none doubled), a retry of a paged turn is answered as
// replayed, and a new turn works.
func TestWorkerKilledWhileItWritesPagesAtContinueAsNew(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "messages.db")
	opts := testenv.ProcessOptions{TaskQueue: testenv.TaskQueue(t), Config: deployConfig("helper"),
		Args: []string{"--offline", "--message-store", "sqlite://" + dbPath}}
	first := testenv.StartWorkerProcess(t, opts) // it creates the file
	st, err := sqlite.Open(dbPath)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	db, err := sql.Open("sqlite", "file:"+dbPath) // the store's own driver, for the lock and the rows
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
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

	release := sqliteWriteLock(t, db)
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
	first.Kill()
	d, err := tc.DescribeWorkflowExecution(ctxFor(t), id, "")
	require.NoError(t, err)
	require.Len(t, d.GetPendingActivities(), 1)
	pending := d.GetPendingActivities()[0]
	assert.Equal(t, wire.WritePagesActivity, pending.GetActivityType().GetName())
	assert.Equal(t, enumspb.PENDING_ACTIVITY_STATE_STARTED, pending.GetState())
	require.EqualValues(t, 1, pending.GetAttempt(), "killed in its first attempt, while the store was locked: %v", pending.GetLastFailure())
	assert.Nil(t, pending.GetHeartbeatDetails(), "no page was written before the kill")
	crashed := d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	release()
	testenv.StartWorkerProcess(t, opts)
	select {
	case err := <-sent:
		require.NoError(t, err, "the turn sent during the crash")
	case <-ctx.Done():
		require.FailNow(t, "the turn sent during the crash was not answered")
	}
	t.Logf("killed the worker during the hand-over of run %s; %d turns in all (%d messages paged before)", crashed, turns, before.PagedMessages)

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
	paged := int64(0)
	for i, ref := range refs {
		assert.Equal(t, run.GetRunID(), ref.Lineage, "%s: one lineage, the first run's", ref)
		assert.EqualValues(t, i, ref.Seq, "%s", ref)
		assert.Equal(t, paged, ref.First, "%s", ref)
		paged += ref.Count
	}
	assert.EqualValues(t, after.PagedMessages, paged)
	assert.Equal(t, refs, storedPages(t, db, id), "the store holds the pages the index names, each once")
	var ids int64
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM chat_message_ids WHERE chat_id = ?", id).Scan(&ids))
	assert.Equal(t, paged, ids, "one id row per paged message")

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

// storedPages returns the page rows of the chat in the SQLite file, as references.
func storedPages(t *testing.T, db *sql.DB, id string) []wire.PageRef {
	t.Helper()
	rows, err := db.Query("SELECT lineage, level, seq, first_index, count, body FROM chat_pages WHERE chat_id = ? ORDER BY lineage, level, seq", id)
	require.NoError(t, err)
	defer rows.Close()
	var refs []wire.PageRef
	for rows.Next() {
		var r wire.PageRef
		var body []byte
		require.NoError(t, rows.Scan(&r.Lineage, &r.Level, &r.Seq, &r.First, &r.Count, &body))
		r.Bytes, r.Digest = len(body), msgstore.PageDigest(body)
		refs = append(refs, r)
	}
	require.NoError(t, rows.Err())
	return refs
}
