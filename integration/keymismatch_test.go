package integration_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/wire"
)

// A client whose key ring differs from the workers' in any way: it lacks the key the
// workers encrypt with, the workers lack its current key, both, or it holds a key of
// the same id with other bytes. Every call fails with ErrKeyMismatch and names the
// key id at fault, never only "Encoded failure". A start, import or temporary thread
// leaves nothing (the chat it created is deleted) and its id can be started again
// with the right ring; a chat that exists keeps what it had.
func TestAClientWithAnotherKeyRingGetsAnErrorNamingTheKeyAndLocksNoID(t *testing.T) {
	workers, err := keyring.Generate("k1", "k2") // k2 current
	require.NoError(t, err)
	ring := func(f keyring.File) *keyring.Ring {
		r, err := keyring.New(f)
		require.NoError(t, err)
		return r
	}
	h := testenv.New(t, testenv.Options{Keys: ring(workers)})
	id := testenv.ChatID(t)
	_, err = h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	send(t, h, id, "m1", "Hello")
	doc, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)

	other, err := keyring.Generate("k3", "k2") // a k2 of other bytes, current
	require.NoError(t, err)
	fresh, err := keyring.Generate("k3")
	require.NoError(t, err)
	cases := []struct {
		name string
		ring keyring.File
		key  string // the key id the error names (its start)
		// taken: the workers read what the client sent, so a turn runs; only its
		// answer does not open here.
		taken bool
	}{
		{"client lacks the workers' current key", keyring.File{Current: "k1", Keys: map[string]string{"k1": workers.Keys["k1"]}}, "k2", true},
		{"workers lack the client's current key", keyring.File{Current: "k3", Keys: map[string]string{"k2": workers.Keys["k2"], "k3": fresh.Keys["k3"]}}, "k3", false},
		{"no key in common", fresh, "k", false},
		{"same key id, other bytes", keyring.File{Current: "k2", Keys: map[string]string{"k2": other.Keys["k2"]}}, "k2", false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := keyedClient(t, h, ring(tc.ring))
			mismatch := func(what string, err error) {
				t.Helper()
				require.Error(t, err, what)
				assert.ErrorIs(t, err, agentchat.ErrKeyMismatch, "%s: %v", what, err)
				assert.Contains(t, err.Error(), `key id "`+tc.key, "%s names the key id", what)
				assert.NotContains(t, err.Error(), "Encoded failure", what)
				assert.NotContains(t, err.Error(), "codec:", "%s: the cause chain stays out of the message", what)
			}
			newID := id + "-new" + string(rune('a'+i))
			_, err := c.Start(ctxFor(t), agentchat.StartOptions{ChatID: newID, Participants: []string{"helper"}})
			mismatch("start", err)
			_, err = c.Import(ctxFor(t), agentchat.ImportOptions{ChatID: newID + "-import", Document: doc})
			mismatch("import", err)
			_, err = c.Run(ctxFor(t), agentchat.RunOptions{ChatID: newID + "-run", Agents: []string{"helper"}}, agentchat.SendMessageInput{Text: "Hi"})
			mismatch("run", err)
			// The ids are free for the right ring at once: a chat the workers ran is
			// deleted, one that failed on its input did nothing and is started again.
			_, err = h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: newID, Participants: []string{"helper"}})
			require.NoError(t, err, "the right ring starts the id again")
			_, err = h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: newID + "-import", Document: doc})
			require.NoError(t, err, "the right ring imports into the id again")

			_, err = c.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m-" + newID, Text: "Are you there?"})
			mismatch("send", err)
			if tc.taken {
				assert.Contains(t, err.Error(), `the chat took it (messageId "m-`+newID+`")`, "what the call left is named")
			} else {
				assert.Contains(t, err.Error(), "nothing was sent", "a turn the workers cannot open is not taken")
			}
			var streamed error
			for _, err := range c.SendStream(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "s-" + newID, Text: "Streamed"}) {
				if err != nil {
					streamed = err
					break
				}
			}
			if tc.key != "k3" { // else the chat's answer to its first look opens here
				mismatch("send streamed", streamed)
				assert.Contains(t, streamed.Error(), "nothing was sent", "a streamed send asks the chat first")
			}
			_, err = c.Post(ctxFor(t), id, agentchat.SendMessageInput{Text: "Posted, never to be dropped unseen"})
			mismatch("post", err)
			assert.Contains(t, err.Error(), "nothing was sent", "a signal the workers cannot open is not sent")
			_, err = c.History(ctxFor(t), id, agentchat.HistoryInput{})
			mismatch("history", err)
			_, _, err = c.Export(ctxFor(t), id)
			mismatch("export", err)
			if tc.key != "k3" { // the workers' answers open here when only the client's key is theirs to lack
				_, err = c.State(ctxFor(t), id)
				mismatch("state", err)
			}
		})
	}
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, 4, st.MessageCount, "only the turn of the client whose key the workers have was taken")
}

// keyedClient is a client of h's task queue whose codec uses ring.
func keyedClient(t *testing.T, h *testenv.Harness, ring *keyring.Ring) *agentchat.Client {
	t.Helper()
	c, err := agentchat.Dial(ctxFor(t), agentchat.DialOptions{Address: testenv.Address(t), TaskQueue: h.TaskQueue, Keys: ring,
		WorkerWait: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// A chat whose first workflow task never completes (here: its input is not a chat's)
// answers no query: State says that the chat has not started and that its workers fail
// its first task, not the SDK's "unknown queryType".
func TestStateOfAChatWhoseFirstTaskFailsSaysSo(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Temporal.ExecuteWorkflow(ctxFor(t), client.StartWorkflowOptions{ID: id, TaskQueue: h.TaskQueue},
		wire.WorkflowType, "not a chat's input")
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := h.Client.State(ctxFor(t), id)
		require.Error(c, err)
		assert.Contains(c, err.Error(), "the chat has not started: its workflow ended (failed) before its first workflow task completed")
		assert.NotContains(c, err.Error(), "queryType")
	}, 30*time.Second, 500*time.Millisecond)
}
