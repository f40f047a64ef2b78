package integration_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// growthTurns is the length of the history-growth measurement (the 2,000 turns
// of 1 KB messages). `go test -run HistoryGrowth -v ./integration` prints the table in README.md.
const growthTurns = 2000

// A chat's event history grows with each turn's own messages, never with the whole
// conversation: measured on a 2,000-turn chat with 1 KB messages.
func TestHistoryGrowthIsLinear(t *testing.T) { historyGrowth(t, false) }

// The same with every turn streamed (SendStream: its events published to the chat's
// stream and read by a subscriber): the history still grows by each turn's own
// events, and the stream carried at continue-as-new stays within its bound.
func TestHistoryGrowthIsLinearStreamed(t *testing.T) { historyGrowth(t, true) }

func historyGrowth(t *testing.T, streamed bool) {
	if testing.Short() {
		t.Skip("the 2,000-turn measurement is skipped with -short")
	}
	kb := strings.Repeat("x", 1000)
	replies := make([]offline.Reply, growthTurns)
	for i := range replies {
		replies[i] = offline.Reply{Text: fmt.Sprintf("reply %d %s", i, kb)}
	}
	// The helper sees the latest 64 messages, as a long chat's agent would (a model's
	// context is finite); the workflow still holds and carries the whole chat.
	h := testenv.New(t, testenv.Options{Config: `
agents:
  - {id: helper, name: Helper, model: offline, reducer: {type: truncate, maxMessages: 64}}
`, Model: offline.Options{Scripts: map[string][]offline.Reply{"helper": replies}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)

	perTurn := map[int]int64{}
	for i := 1; i <= growthTurns; i++ {
		measure := i == 100 || i == growthTurns
		var before runInfo
		if measure {
			before = currentRun(t, h, id)
		}
		msg := agentchat.SendMessageInput{MessageID: fmt.Sprintf("t%d", i), Text: fmt.Sprintf("turn %d %s", i, kb)}
		if streamed {
			done := 0
			for ev, err := range h.Client.SendStream(ctxFor(t), id, msg) {
				require.NoError(t, err, "turn %d", i)
				if ev.Type == wire.EventMessageDone {
					done++
				}
			}
			require.Equal(t, 1, done, "turn %d", i)
		} else {
			res, err := h.Client.Send(ctxFor(t), id, msg)
			require.NoError(t, err, "turn %d", i)
			require.Len(t, res.Messages, 1)
		}
		if measure {
			after := currentRun(t, h, id)
			if after.runID == before.runID {
				perTurn[i] = after.bytes - before.bytes
			}
		}
	}

	runs := allRuns(t, h, id)
	var maxBytes, maxEvents, maxPayload int64
	for _, r := range runs {
		maxBytes, maxEvents = max(maxBytes, r.bytes), max(maxEvents, r.events)
		maxPayload = max(maxPayload, largestPayload(t, h, id, r.runID))
	}
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	t.Logf("history growth, %d turns of 1 KB messages, streamed %v, store %q:", growthTurns, streamed, st.Store)
	t.Logf("| runs | largest run: bytes | largest run: events | bytes added by turn 100 | by turn %d | largest payload |", growthTurns)
	t.Logf("| %d | %d | %d | %d | %d | %d |", len(runs), maxBytes, maxEvents, perTurn[100], perTurn[growthTurns], maxPayload)

	assert.Equal(t, 2*growthTurns, st.MessageCount)
	assert.Less(t, maxBytes, int64(10<<20), "no run passes Temporal's 10 MB history warning")
	assert.Less(t, maxEvents, int64(10240), "no run passes Temporal's 10,240-event warning")
	assert.Less(t, maxPayload, int64(2<<20), "no payload passes Temporal's 2 MB limit")
	require.NotZero(t, perTurn[100], "turn 100 was measured within one run")
	require.NotZero(t, perTurn[growthTurns], "turn %d was measured within one run", growthTurns)
	assert.Less(t, float64(perTurn[growthTurns]), 1.5*float64(perTurn[100]),
		"turn %d adds about what turn 100 adds: each turn adds its own messages only", growthTurns)
	bound := int64(24 << 10)
	if streamed {
		bound = 48 << 10 // the turn's events, published and polled, on top
	}
	assert.Less(t, perTurn[growthTurns], bound, "a turn of 2 KB of messages adds a few KB, not the chat")
}
