package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// A run that passes its history budget hands everything to the next run: history,
// strategy state, counts, and the signals still queued; State and History read the same.
func TestContinueAsNewCarriesTheWholeChat(t *testing.T) {
	e := newEnv(t)
	in := wire.AgentChatInput{Participants: []string{"writer", "reviewer"}}
	var outs []*outcome
	for i, id := range []string{"t1", "t2", "t3", "t4", "t5", "t6"} {
		outs = append(outs, e.send(time.Duration(i+1)*time.Second, msg(id, "turn "+id)))
	}
	var before wire.StateResult
	var hist []chat.Message
	e.at(6*time.Second+500*time.Millisecond, func() {
		before, hist = e.state(), e.history()
		e.env.SignalWorkflow(wire.UserMessageSignal, msg("late", "queued at the hand-over"))
	})
	e.at(6*time.Second+600*time.Millisecond, func() { e.env.SetContinueAsNewSuggested(true) }) // as Temporal would
	e.run(in, 0)

	next, _ := canInput(t, e)
	for _, o := range outs {
		require.True(t, o.done)
		require.NoError(t, o.err)
	}

	// The next run, from the carried input.
	require.NotNil(t, next.Carry)
	assert.Equal(t, 1, next.Carry.Runs)
	e2 := newEnv(t)
	var after wire.StateResult
	var hist2 []chat.Message
	e2.at(time.Second, func() { after, hist2 = e2.state(), e2.history() })
	e2.run(next, 2*time.Second)

	assert.Equal(t, before.TurnCount+1, after.TurnCount, "the signal's turn was answered once, in one run or the other")
	assert.Equal(t, hist, hist2[:len(hist)], "History reads the same across runs")
	require.Len(t, hist2, len(hist)+3)
	assert.Equal(t, []string{"late", "late/1", "late/2"}, ids(hist2[len(hist):]))
	assert.Equal(t, 1, after.Runs)
	assert.Equal(t, before.Participants, after.Participants)
}

func converterFor() converter.DataConverter { return converter.GetDefaultDataConverter() }
