package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// fakeStrategies answers SelectSpeaker and JudgeTermination from scripts, in order.
type fakeStrategies struct {
	mu       sync.Mutex
	picks    []string
	verdicts []bool
	selects  []wire.SelectInput
	judged   int
}

func (f *fakeStrategies) sel(_ context.Context, in wire.SelectInput) (wire.SelectResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.selects = append(f.selects, in)
	pick := ""
	if len(f.picks) > 0 {
		pick, f.picks = f.picks[0], f.picks[1:]
	}
	for _, c := range in.Candidates {
		if c.ID == pick {
			return wire.SelectResult{AgentID: pick, Said: pick}, nil
		}
	}
	return wire.SelectResult{Said: pick}, nil
}

func (f *fakeStrategies) judge(_ context.Context, in wire.JudgeInput) (wire.JudgeResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.judged++
	v := false
	if len(f.verdicts) > 0 {
		v, f.verdicts = f.verdicts[0], f.verdicts[1:]
	}
	return wire.JudgeResult{Done: v}, nil
}

func newStrategyEnv(t *testing.T) (*env, *fakeStrategies) {
	e := newEnv(t)
	f := &fakeStrategies{}
	e.env.RegisterActivityWithOptions(f.sel, activity.RegisterOptions{Name: wire.SelectActivity})
	e.env.RegisterActivityWithOptions(f.judge, activity.RegisterOptions{Name: wire.JudgeActivity})
	return e, f
}

func TestLLMSelectionFollowsTheSelectorAndFallsBack(t *testing.T) {
	e, f := newStrategyEnv(t)
	f.picks = []string{"reviewer", "nobody", "reviewer"} // "nobody" is no participant: sequential fallback
	in := wire.AgentChatInput{Participants: []string{"writer", "reviewer"},
		Selection:   strategies.SelectionStrategy{Type: strategies.SelectionLLM, Agent: "helper"},
		Termination: strategies.TerminationStrategy{MaxIterations: 3}}
	o := e.send(time.Second, msg("m1", "go"))
	e.run(in, 2*time.Second)

	require.NoError(t, o.err)
	assert.Equal(t, []string{"assistant:reviewer", "assistant:writer", "assistant:reviewer"}, authors(o.result.Messages))
	require.Len(t, f.selects, 3)
	assert.Equal(t, "helper", f.selects[0].Agent)
	assert.Equal(t, []wire.Candidate{{ID: "writer", Name: "Writer"}, {ID: "reviewer", Name: "Reviewer"}}, f.selects[0].Candidates)
}

func TestSelectionFallbackErrorFailsTheTurnClearly(t *testing.T) {
	e, f := newStrategyEnv(t)
	f.picks = []string{"the moon"}
	in := wire.AgentChatInput{Participants: []string{"writer", "reviewer"},
		Selection: strategies.SelectionStrategy{Type: strategies.SelectionFunction, Function: "byTopic", Fallback: strategies.FallbackError}}
	o := e.send(time.Second, msg("m1", "go"))
	ok := e.send(2*time.Second, msg("m2", "again"))
	e.run(in, 3*time.Second)

	require.Error(t, o.err)
	assert.Contains(t, o.err.Error(), `named no participant (it said "the moon"`)
	require.Error(t, ok.err, "the selector still names nobody")
	assert.Equal(t, "byTopic", f.selects[0].Function)
}

func TestLLMTerminationCompletesTheChat(t *testing.T) {
	e, f := newStrategyEnv(t)
	f.verdicts = []bool{false, true}
	in := wire.AgentChatInput{Participants: []string{"writer", "reviewer"},
		Termination: strategies.TerminationStrategy{Type: strategies.TerminationLLM, Agent: "helper", MaxIterations: 10}}
	o := e.send(time.Second, msg("m1", "go"))
	e.run(in, 0)

	require.NoError(t, o.err)
	assert.Len(t, o.result.Messages, 2)
	assert.True(t, o.result.IsComplete)
	assert.Equal(t, 2, f.judged)
	assert.True(t, e.env.IsWorkflowCompleted())
}

func TestAnyAndAllCombineStrategies(t *testing.T) {
	regex := strategies.TerminationStrategy{Type: strategies.TerminationRegex, Pattern: "reviewer#2"}
	judge := strategies.TerminationStrategy{Type: strategies.TerminationLLM, Agent: "helper"}
	for name, c := range map[string]struct {
		term     strategies.TerminationStrategy
		verdicts []bool
		replies  int
	}{
		"any: the regex fires first": {strategies.TerminationStrategy{Type: strategies.TerminationAny, MaxIterations: 10,
			Strategies: []strategies.TerminationStrategy{regex, judge}}, nil, 4},
		"any: the judge fires first": {strategies.TerminationStrategy{Type: strategies.TerminationAny, MaxIterations: 10,
			Strategies: []strategies.TerminationStrategy{regex, judge}}, []bool{false, true}, 2},
		"all: both are needed": {strategies.TerminationStrategy{Type: strategies.TerminationAll, MaxIterations: 10,
			Strategies: []strategies.TerminationStrategy{regex, judge}}, []bool{true, true, true, true, true}, 4},
	} {
		t.Run(name, func(t *testing.T) {
			e, f := newStrategyEnv(t)
			f.verdicts = c.verdicts
			o := e.send(time.Second, msg("m1", "go"))
			e.run(wire.AgentChatInput{Participants: []string{"writer", "reviewer"}, Termination: c.term}, 0)
			require.NoError(t, o.err)
			assert.Len(t, o.result.Messages, c.replies)
			assert.True(t, o.result.IsComplete)
		})
	}
}

func TestAutoResetKeepsTheChatOpen(t *testing.T) {
	e, _ := newStrategyEnv(t)
	e.model.replies["reviewer#1"] = "APPROVED"
	in := wire.AgentChatInput{Participants: []string{"writer", "reviewer"},
		Termination: strategies.TerminationStrategy{Type: strategies.TerminationRegex, Pattern: "APPROVED", MaxIterations: 4, AutoReset: true}}
	first := e.send(time.Second, msg("m1", "first"))
	var between wire.StateResult
	e.at(2*time.Second, func() { between = e.state() })
	second := e.send(3*time.Second, msg("m2", "second"))
	e.run(in, 4*time.Second)

	require.NoError(t, first.err)
	assert.True(t, first.result.IsComplete)
	assert.True(t, between.IsComplete)
	assert.Equal(t, wire.StatusRunning, between.Status)
	require.NoError(t, second.err, "the chat took another turn")
	assert.Len(t, second.result.Messages, 4)
	assert.False(t, second.result.IsComplete)
}

func TestUnknownSelectorAgentFailsTheChatAtStart(t *testing.T) {
	e, _ := newStrategyEnv(t)
	e.run(wire.AgentChatInput{Participants: []string{"writer"},
		Selection: strategies.SelectionStrategy{Type: strategies.SelectionLLM, Agent: "ghost"}}, 0)
	require.Error(t, e.env.GetWorkflowError())
	assert.Contains(t, e.env.GetWorkflowError().Error(), "ghost")
}
