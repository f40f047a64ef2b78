package integration_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// 200 turns from several goroutines, updates and signals mixed, across several
// continue-as-new boundaries: every messageId is in the history exactly once, each
// followed by its own reply, and every update got its own answer.
func TestTurnsRaceAcrossContinueAsNew(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"},
		HistoryBudget: wire.HistoryBudget{MaxEvents: 200}})
	require.NoError(t, err)

	const workers, perWorker = 5, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				mid := fmt.Sprintf("w%d-%d", w, i)
				msg := agentchat.SendMessageInput{MessageID: mid, Text: "turn " + mid}
				if i%4 == 3 { // a quarter by signal
					if _, err := h.Client.Post(ctxFor(t), id, msg); err != nil {
						errs <- fmt.Errorf("%s: %w", mid, err)
					}
					continue
				}
				res, err := h.Client.Send(ctxFor(t), id, msg)
				if err != nil {
					errs <- fmt.Errorf("%s: %w", mid, err)
					continue
				}
				if len(res.Messages) != 1 || res.Messages[0].MessageID != mid+"/1" {
					errs <- fmt.Errorf("%s: got the answer of another turn: %+v", mid, res.Messages)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	var hist agentchat.HistoryResult
	require.Eventually(t, func() bool {
		hist, err = h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
		return err == nil && hist.Total == 2*workers*perWorker
	}, time.Minute, 200*time.Millisecond, "history has %d of %d messages", hist.Total, 2*workers*perWorker)
	seen := map[string]int{}
	for i := 0; i < len(hist.Messages); i += 2 {
		user, reply := hist.Messages[i], hist.Messages[i+1]
		require.Equal(t, chat.RoleUser, user.Role, "message %d", i)
		seen[user.MessageID]++
		assert.Equal(t, user.MessageID+"/1", reply.MessageID)
	}
	assert.Len(t, seen, workers*perWorker)
	for mid, n := range seen {
		assert.Equal(t, 1, n, mid)
	}
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, st.Runs, 2, "the chat continued as new at least twice")
	assert.Equal(t, workers*perWorker, st.TurnCount)
	t.Logf("%d turns in %d runs", st.TurnCount, st.Runs+1)
}
