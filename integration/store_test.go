package integration_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/cli"
	"github.com/agentchat/agentchat/internal/devserver"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// playTurns sends n turns "t<i>" and returns the last reply's text.
func playTurns(t *testing.T, h *testenv.Harness, id string, from, n int) string {
	t.Helper()
	var last string
	for i := from; i < from+n; i++ {
		res := send(t, h, id, fmt.Sprintf("t%d", i), fmt.Sprintf("turn %d", i))
		last = res.Messages[0].Text()
	}
	return last
}

// A chat on the PostgreSQL store moves its older bodies there at each continue-as-new;
// the workflow keeps stubs, the model still gets the whole chat, and an export is
// complete whether the client can read the store or not.
func TestChatOnThePostgresStore(t *testing.T) {
	h := testenv.New(t, testenv.Options{MessageStore: msgstore.NamePostgres})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"},
		Store: msgstore.NamePostgres, HistoryBudget: wire.HistoryBudget{MaxEvents: 80}})
	require.NoError(t, err)
	last := playTurns(t, h, id, 1, 40)
	assert.Contains(t, last, "received 80 messages", "the model saw every earlier message")

	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, "postgres", st.Store)
	assert.GreaterOrEqual(t, st.Runs, 1)

	raw, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Equal(t, 80, raw.Total)
	assert.Equal(t, "postgres", raw.Store)
	assert.Nil(t, raw.Messages[0].Contents, "older bodies are stubs in the workflow")
	assert.Equal(t, "t1", raw.Messages[0].MessageID)

	withStore := agentchat.NewClient(h.Temporal, agentchat.ClientOptions{TaskQueue: h.TaskQueue,
		MessageStores: map[string]msgstore.Store{"postgres": h.MessageStore}})
	full, err := withStore.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, "turn 1", full.Messages[0].Text())

	for name, c := range map[string]*agentchat.Client{"through the worker": h.Client, "from the store": withStore} {
		b, _, err := c.Export(ctxFor(t), id)
		require.NoError(t, err, name)
		doc, _, err := chatstate.Decode(b)
		require.NoError(t, err, name)
		require.Len(t, doc.History, 80, name)
		for _, m := range doc.History {
			require.NotEmpty(t, m.Contents, "%s: %s has its body", name, m.MessageID)
		}
	}
}

// pgServer is a PostgreSQL server of one test's own, that it can stop and start.
type pgServer struct {
	dir, port, script string
}

func startPostgres(t *testing.T) *pgServer {
	addr, err := devserver.FreeAddress()
	require.NoError(t, err)
	dir, err := os.MkdirTemp("", "agentchat-pg-")
	require.NoError(t, err)
	s := &pgServer{dir: dir, port: addr[strings.LastIndex(addr, ":")+1:], script: "../scripts/postgres.sh"}
	s.start(t)
	t.Cleanup(func() { _ = exec.Command(s.script, "stop", s.dir).Run(); _ = os.RemoveAll(dir) })
	return s
}

func (s *pgServer) start(t *testing.T) string {
	out, err := exec.Command(s.script, "start", s.dir, s.port).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

func (s *pgServer) stop(t *testing.T) {
	require.NoError(t, exec.Command(s.script, "stop", s.dir).Run())
}

// A store that cannot be reached fails the turn with a clear, retryable error; the
// turn leaves nothing behind, and once the store is back the same turn goes through
// with nothing lost.
func TestUnreachableStoreFailsTheTurnAndLosesNothing(t *testing.T) {
	pg := startPostgres(t)
	dsn := pg.start(t)
	h := testenv.New(t, testenv.Options{MessageStoreURL: dsn})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"},
		Store: msgstore.NamePostgres, HistoryBudget: wire.HistoryBudget{MaxEvents: 80}})
	require.NoError(t, err)
	playTurns(t, h, id, 1, 40)
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	require.GreaterOrEqual(t, st.Runs, 1, "older bodies are in the store")
	raw, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Nil(t, raw.Messages[0].Contents, "older bodies are in the store (store %q)", st.Store)

	pg.stop(t)
	h.RestartWorkerCold(t) // a new worker process: the store is the only place of the older bodies
	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "t41", Text: "turn 41"})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, wire.ErrTypeStoreUnavailable, app.Type(), "the caller sees what to do: retry")
	assert.Contains(t, err.Error(), "message store unavailable")
	assert.Contains(t, err.Error(), "send it again")
	var out, errOut strings.Builder
	code := cli.Execute(ctxFor(t), []string{"--address", testenv.Address(t), "--task-queue", h.TaskQueue,
		"send", "--chat", id, "--id", "t41", "turn 41"}, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut.String(), "message store unavailable")
	assert.Contains(t, errOut.String(), "starter send --chat "+id+" --id t41", "the CLI says how to send it again")
	st, err = h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	require.NotNil(t, st.LastError)
	assert.Equal(t, wire.ErrTypeStoreUnavailable, st.LastError.Type)
	assert.Equal(t, 80, st.MessageCount, "the failed turn left nothing")

	pg.start(t)
	res := send(t, h, id, "t41", "turn 41")
	assert.Contains(t, res.Messages[0].Text(), "received 82 messages")
	st, err = h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Nil(t, st.LastError, "turn t41 has been answered since it failed")
	b, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	doc, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	assert.Len(t, doc.History, 82)
}

// A reply too large for a Temporal payload goes to the message store; the workflow
// keeps a reference and no event carries the megabytes.
func TestOversizeReplyGoesToTheStore(t *testing.T) {
	big := strings.Repeat("y", 1500<<10)
	h := testenv.New(t, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{"helper": {{Text: big}}}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	res := send(t, h, id, "m1", "Write me a book")
	require.Len(t, res.Messages, 1)
	assert.Nil(t, res.Messages[0].Contents, "the reply is a reference")

	hist, err := storeClient(h).History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, "[offline] helper: "+big, hist.Messages[1].Text())
	assert.Less(t, largestPayload(t, h, id, currentRun(t, h, id).runID), int64(64<<10))

	next := send(t, h, id, "m2", "Thanks")
	assert.Contains(t, next.Messages[0].Text(), "received 4 messages", "the model still got the big reply as context")
}
