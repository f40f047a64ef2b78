package workflows_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// Each reply's message records its usage; State totals it per agent and per chat, a
// failed turn's spent calls included, and the totals go on in the run after a
// continue-as-new.
func TestUsageTotalsAcrossContinueAsNew(t *testing.T) {
	e := newEnv(t)
	in := wire.AgentChatInput{Version: 1, Participants: []string{"writer", "reviewer"}}
	e.model.usages["writer#1"] = chat.Usage{Model: "m", InputTokens: 100, OutputTokens: 10, CachedTokens: 64}
	e.model.usages["reviewer#1"] = chat.Usage{Model: "m", InputTokens: 200, OutputTokens: 20}
	e.model.usages["writer#2"] = chat.Usage{Model: "m", InputTokens: 7, OutputTokens: 1}
	e.model.errs["reviewer#2"] = temporal.NewNonRetryableApplicationError("no", wire.ErrTypeModelRejected, errors.New("no"))
	first := e.send(time.Second, msg("t1", "one"))
	failed := e.send(2*time.Second, msg("t2", "two"))
	var before wire.StateResult
	e.at(3*time.Second, func() { before = e.state() })
	e.at(3*time.Second+100*time.Millisecond, func() { e.env.SetContinueAsNewSuggested(true) })
	e.run(in, 0)
	require.NoError(t, first.err)
	require.Error(t, failed.err, "the reviewer's second reply fails the turn")
	require.Len(t, first.result.Messages, 2)
	assert.Equal(t, &chat.Usage{Model: "m", InputTokens: 100, OutputTokens: 10, CachedTokens: 64}, first.result.Messages[0].Usage)
	assert.Equal(t, &chat.Usage{Model: "m", InputTokens: 200, OutputTokens: 20}, first.result.Messages[1].Usage)

	want := &wire.UsageTotal{Calls: 3, InputTokens: 307, OutputTokens: 31, CachedTokens: 64, Cost: 0.307}
	wantByAgent := []wire.UsageTotal{
		{AgentID: "writer", Calls: 2, InputTokens: 107, OutputTokens: 11, CachedTokens: 64, Cost: 0.107},
		{AgentID: "reviewer", Calls: 1, InputTokens: 200, OutputTokens: 20, Cost: 0.2},
	}
	assertUsage(t, want, wantByAgent, before)

	next, _ := canInput(t, e)
	e2 := newEnv(t)
	var after wire.StateResult
	e2.at(time.Second, func() { after = e2.state() })
	e2.run(next, 2*time.Second)
	assertUsage(t, want, wantByAgent, after)
	assert.Equal(t, 1, after.Runs)
}

func assertUsage(t *testing.T, want *wire.UsageTotal, byAgent []wire.UsageTotal, st wire.StateResult) {
	t.Helper()
	require.NotNil(t, st.Usage)
	assert.InDelta(t, want.Cost, st.Usage.Cost, 1e-9)
	got := *st.Usage
	got.Cost = want.Cost
	assert.Equal(t, *want, got)
	require.Len(t, st.UsageByAgent, len(byAgent))
	for i := range byAgent {
		assert.InDelta(t, byAgent[i].Cost, st.UsageByAgent[i].Cost, 1e-9)
		g := st.UsageByAgent[i]
		g.Cost = byAgent[i].Cost
		assert.Equal(t, byAgent[i], g)
	}
}
