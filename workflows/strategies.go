package workflows

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// strategyTimeout bounds one selector or judge call.
const strategyTimeout = 2 * time.Minute

// judgeWindow is how many recent messages a selector or judge reads.
const judgeWindow = 30

// selectNext returns the agent that speaks next: in order (sequential), or as the
// selector agent or function names it, with the configured fallback when it names no
// participant.
func (s *chatState) selectNext(ctx workflow.Context, t *turn) (wire.Participant, error) {
	sel := s.in.Selection
	ids := s.ids()
	if sel.Type != strategies.SelectionLLM && sel.Type != strategies.SelectionFunction {
		return s.participant(sel.Next(ids, &s.Selection)), nil
	}
	if sel.InitialAgent != "" && s.TurnCount == 0 && s.Termination.Iterations == 0 {
		return s.participant(sel.InitialAgent), nil
	}
	in := wire.SelectInput{History: s.strategyView(ctx, t), Agent: sel.Agent, Function: sel.Function}
	for _, p := range s.Participants {
		in.Candidates = append(in.Candidates, wire.Candidate{ID: p.ID, Name: p.Name})
	}
	var res wire.SelectResult
	err := s.agentActivity(workflow.WithActivityOptions(ctx, strategyOptions()), wire.SelectActivity, in, &res)
	if err != nil {
		return wire.Participant{}, unwrapActivityError(err)
	}
	if slices.Contains(ids, res.AgentID) {
		return s.participant(res.AgentID), nil
	}
	if sel.Fallback == strategies.FallbackError {
		return wire.Participant{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the selection strategy named no participant (it said %q; participants: %v)", res.Said, ids), wire.ErrTypeInvalidInput, nil)
	}
	return s.participant(sel.Next(ids, &s.Selection)), nil
}

// terminates reports whether msg completes the chat under strategy st: regex here,
// llm and function by asking the worker, any/all over their parts.
func (s *chatState) terminates(ctx workflow.Context, st strategies.TerminationStrategy, t *turn, msg chat.Message) (bool, error) {
	switch st.Type {
	case strategies.TerminationLLM, strategies.TerminationFunction:
		if !st.Applies(msg.AgentID) {
			return false, nil
		}
		var res wire.JudgeResult
		err := s.agentActivity(workflow.WithActivityOptions(ctx, strategyOptions()), wire.JudgeActivity,
			wire.JudgeInput{History: s.strategyView(ctx, t), Agent: st.Agent, Function: st.Function}, &res)
		if err != nil {
			return false, unwrapActivityError(err)
		}
		return res.Done, nil
	case strategies.TerminationAny, strategies.TerminationAll:
		for _, part := range st.Strategies {
			ok, err := s.terminates(ctx, part, t, msg)
			if err != nil {
				return false, err
			}
			if ok == (st.Type == strategies.TerminationAny) {
				return ok, nil
			}
		}
		return st.Type == strategies.TerminationAll, nil
	}
	return st.ShouldTerminate(msg), nil
}

// strategyView describes the recent history a selector or judge reads.
func (s *chatState) strategyView(ctx workflow.Context, t *turn) wire.InvokeInput {
	p := wire.Participant{ID: "strategy", Reducer: strategies.Reducer{Type: strategies.ReducerTruncate, MaxMessages: judgeWindow}}
	return s.invokeInput(ctx, p, t)
}

func strategyOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{StartToCloseTimeout: strategyTimeout, HeartbeatTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second, MaximumAttempts: 5,
			NonRetryableErrorTypes: []string{wire.ErrTypeModelRejected, wire.ErrTypeUnknownAgent, wire.ErrTypeInvalidInput}}}
}
