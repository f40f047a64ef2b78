package integration_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
)

// Found by the system test (10.S2): a Post and then, at once, a Send to an idle chat
// are answered in that order. Here both reach the chat in one workflow task (no worker
// polls while they are sent), where the update's handler runs before the main loop
// takes the signal from its channel: the posted turn is still queued first, because its
// signal is first in the workflow's history.
func TestPostThenSendAreAnsweredInArrivalOrder(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	seedThread(t, h, id)
	h.StopWorker()
	_, err := h.Client.Post(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "t2", Text: "posted first", AuthorName: "Alice"})
	require.NoError(t, err)
	type sent struct {
		res agentchat.TurnResult
		err error
	}
	done := make(chan sent, 1)
	go func() {
		res, err := h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "t3", Text: "sent second", AuthorName: "Alice"})
		done <- sent{res, err}
	}()
	time.Sleep(time.Second) // the update waits at the server for the chat's next task
	h.StartWorker(t)
	s := <-done
	require.NoError(t, s.err)
	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"m1", "m1/1", "m2", "m2/1", "t2", "t2/1", "t3", "t3/1"}, messageIDs(hist.Messages))
	require.Len(t, s.res.Messages, 1)
	assert.Equal(t, "t3/1", s.res.Messages[0].MessageID)
	assert.Contains(t, s.res.Messages[0].Text(), "received 8 messages", "t3's reply saw t2 and its answer")
}
