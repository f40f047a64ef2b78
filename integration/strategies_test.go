package integration_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// strategyConfig has two participants, a selector and a judge.
const strategyConfig = `
agents:
  - {id: writer, name: Writer, model: offline, call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: reviewer, name: Reviewer, model: offline, call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: moderator, name: Moderator, model: offline, instructions: "You moderate."}
  - {id: judge, name: Judge, model: offline, instructions: "You judge."}
`

// Each selection and termination strategy, against the offline model and Go functions
// on a real worker.
func TestSelectionAndTerminationStrategies(t *testing.T) {
	var judged counter
	var selections [][]wire.Candidate
	var selMu sync.Mutex
	h := testenv.New(t, testenv.Options{Config: strategyConfig,
		Selectors: map[string]activities.SelectFunc{
			// addressed picks the participant the last message names, other than its author.
			"addressed": func(_ context.Context, cs []wire.Candidate, history []chat.Message) (string, error) {
				selMu.Lock()
				selections = append(selections, cs)
				selMu.Unlock()
				last := history[len(history)-1]
				for _, c := range cs {
					if c.ID != last.AgentID && strings.Contains(last.Text(), c.ID+",") {
						return c.ID, nil
					}
				}
				return "", nil
			},
		},
		Judges: map[string]activities.JudgeFunc{
			// twoReplies: done once the current turn has two agent replies.
			"twoReplies": func(_ context.Context, history []chat.Message) (bool, error) {
				judged.add("twoReplies")
				n := 0
				for i := len(history) - 1; i >= 0 && history[i].Role != chat.RoleUser; i-- {
					n++
				}
				return n >= 2, nil
			},
			"always": func(context.Context, []chat.Message) (bool, error) {
				judged.add("always")
				return true, nil
			},
		},
	})
	script := func(scripts map[string][]offline.Reply) {
		for _, a := range []string{"writer", "reviewer", "moderator", "judge"} {
			h.Model.SetScript(a, scripts[a])
		}
	}
	start := func(t *testing.T, sel agentchat.SelectionStrategy, term agentchat.TerminationStrategy) string {
		id := testenv.ChatID(t)
		_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"writer", "reviewer"},
			Selection: sel, Termination: term})
		require.NoError(t, err)
		return id
	}
	speakers := func(res agentchat.TurnResult) []string {
		var out []string
		for _, m := range res.Messages {
			out = append(out, m.AgentID)
		}
		return out
	}

	t.Run("llm selection, then the sequential fallback", func(t *testing.T) {
		script(map[string][]offline.Reply{"moderator": {{Text: "reviewer"}, {Text: "the moon"}}})
		id := start(t, agentchat.SelectionStrategy{Type: strategies.SelectionLLM, Agent: "moderator"},
			agentchat.TerminationStrategy{MaxIterations: 2})
		res := send(t, h, id, "t1", "A slogan for tea")
		assert.Equal(t, []string{"reviewer", "writer"}, speakers(res), "the moderator's pick, then the next in order")
		assert.Equal(t, 2, h.Model.Requests("moderator"))
		req, ok := h.Model.LastRequest("moderator")
		require.True(t, ok)
		assert.Contains(t, req.Messages[0].Content, "You moderate.")
		assert.Contains(t, req.Messages[0].Content, "The participants are: writer (Writer), reviewer (Reviewer).")
		assert.Equal(t, "[offline] reviewer received 1 message. First user message: \"A slogan for tea\". Last user message: \"A slogan for tea\".",
			req.Messages[len(req.Messages)-1].Content, "the second pick read the reviewer's reply")
	})

	t.Run("function selection", func(t *testing.T) {
		script(map[string][]offline.Reply{"reviewer": {{Text: "writer, draft one"}}, "writer": {{Text: "reviewer, check this"}}})
		id := start(t, agentchat.SelectionStrategy{Type: strategies.SelectionFunction, Function: "addressed"},
			agentchat.TerminationStrategy{MaxIterations: 3})
		res := send(t, h, id, "t1", "reviewer, what makes a good slogan?")
		assert.Equal(t, []string{"reviewer", "writer", "reviewer"}, speakers(res), "not the sequential order")
		selMu.Lock()
		defer selMu.Unlock()
		require.Len(t, selections, 3)
		assert.Equal(t, []wire.Candidate{{ID: "writer", Name: "Writer"}, {ID: "reviewer", Name: "Reviewer"}}, selections[0])
	})

	t.Run("selection fallback error", func(t *testing.T) {
		script(map[string][]offline.Reply{"moderator": {{Text: "the moon"}}})
		id := start(t, agentchat.SelectionStrategy{Type: strategies.SelectionLLM, Agent: "moderator", Fallback: strategies.FallbackError},
			agentchat.TerminationStrategy{})
		_, err := h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "t1", Text: "A slogan for tea"})
		var app *temporal.ApplicationError
		require.True(t, errors.As(err, &app), "%v", err)
		assert.Equal(t, wire.ErrTypeTurnFailed, app.Type())
		assert.Contains(t, err.Error(), `the selection strategy named no participant (it said "[offline] moderator: the moon"; participants: [writer reviewer])`)
		assert.Zero(t, h.Model.Requests("writer")+h.Model.Requests("reviewer"), "nobody spoke")
		st, err := h.Client.State(ctxFor(t), id)
		require.NoError(t, err)
		assert.Zero(t, st.MessageCount, "the failed turn left nothing")
		require.NotNil(t, st.LastError)
		assert.Equal(t, "(selection)", st.LastError.AgentID)
	})

	t.Run("llm termination", func(t *testing.T) {
		script(map[string][]offline.Reply{"judge": {{Text: "no"}, {Text: "yes"}}})
		id := start(t, agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{Type: strategies.TerminationLLM, Agent: "judge", MaxIterations: 10})
		res := send(t, h, id, "t1", "A slogan for tea")
		assert.Equal(t, []string{"writer", "reviewer"}, speakers(res), "the judge said no, then yes")
		assert.True(t, res.IsComplete)
		assert.Equal(t, 2, h.Model.Requests("judge"))
		req, ok := h.Model.LastRequest("judge")
		require.True(t, ok)
		assert.Contains(t, req.Messages[0].Content, "You judge.")
		assert.Contains(t, req.Messages[0].Content, "Reply yes or no")
		require.Eventually(t, func() bool {
			return workflowStatus(t, h, id) == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
		}, 10*time.Second, 50*time.Millisecond, "a complete chat without autoReset closes")
	})

	t.Run("function termination", func(t *testing.T) {
		script(nil)
		before := judged.get("twoReplies")
		id := start(t, agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{Type: strategies.TerminationFunction, Function: "twoReplies", MaxIterations: 10})
		res := send(t, h, id, "t1", "A slogan for tea")
		assert.Equal(t, []string{"writer", "reviewer"}, speakers(res))
		assert.True(t, res.IsComplete)
		assert.Equal(t, 2, judged.get("twoReplies")-before, "asked after each reply")
	})

	t.Run("any: the regex completes before the judge agrees", func(t *testing.T) {
		script(map[string][]offline.Reply{"reviewer": {{Text: "APPROVED"}}, "judge": {{Text: "no"}, {Text: "no"}}})
		id := start(t, agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{Type: strategies.TerminationAny, MaxIterations: 10,
			Strategies: []strategies.TerminationStrategy{
				{Type: strategies.TerminationRegex, Pattern: `\bAPPROVED\b`, Agents: []string{"reviewer"}},
				{Type: strategies.TerminationLLM, Agent: "judge"},
			}})
		res := send(t, h, id, "t1", "A slogan for tea")
		assert.Equal(t, []string{"writer", "reviewer"}, speakers(res))
		assert.True(t, res.IsComplete)
		assert.Equal(t, 1, h.Model.Requests("judge"), "asked after the writer; the regex decided after the reviewer")
	})

	t.Run("all: both parts must agree", func(t *testing.T) {
		script(map[string][]offline.Reply{"reviewer": {{Text: "needs work"}, {Text: "APPROVED"}}})
		before := judged.get("always")
		id := start(t, agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{Type: strategies.TerminationAll, MaxIterations: 10,
			Strategies: []strategies.TerminationStrategy{
				{Type: strategies.TerminationRegex, Pattern: `\bAPPROVED\b`, Agents: []string{"reviewer"}},
				{Type: strategies.TerminationFunction, Function: "always"},
			}})
		res := send(t, h, id, "t1", "A slogan for tea")
		assert.Equal(t, []string{"writer", "reviewer", "writer", "reviewer"}, speakers(res), "the function always agrees; the regex decides")
		assert.True(t, res.IsComplete)
		assert.Equal(t, 1, judged.get("always")-before, "asked only once the regex matched")
	})

	t.Run("all: the judge says no", func(t *testing.T) {
		script(map[string][]offline.Reply{"reviewer": {{Text: "APPROVED"}, {Text: "APPROVED"}}, "judge": {{Text: "no"}, {Text: "yes"}}})
		id := start(t, agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{Type: strategies.TerminationAll, MaxIterations: 10,
			Strategies: []strategies.TerminationStrategy{
				{Type: strategies.TerminationRegex, Pattern: `\bAPPROVED\b`, Agents: []string{"reviewer"}},
				{Type: strategies.TerminationLLM, Agent: "judge"},
			}})
		res := send(t, h, id, "t1", "A slogan for tea")
		assert.Equal(t, []string{"writer", "reviewer", "writer", "reviewer"}, speakers(res), "APPROVED and no, then APPROVED and yes")
		assert.True(t, res.IsComplete)
		assert.Equal(t, 2, h.Model.Requests("judge"))
	})

	t.Run("autoReset", func(t *testing.T) {
		script(map[string][]offline.Reply{"reviewer": {{Text: "APPROVED"}}})
		id := start(t, agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{Type: strategies.TerminationRegex,
			Pattern: `\bAPPROVED\b`, MaxIterations: 2, AutoReset: true})
		first := send(t, h, id, "t1", "A slogan for tea")
		assert.True(t, first.IsComplete)
		st, err := h.Client.State(ctxFor(t), id)
		require.NoError(t, err)
		assert.True(t, st.IsComplete)
		assert.Equal(t, wire.StatusRunning, st.Status, "the chat stays open")
		assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, workflowStatus(t, h, id))

		second := send(t, h, id, "t2", "Another one")
		assert.Equal(t, []string{"writer", "reviewer"}, speakers(second))
		assert.False(t, second.IsComplete, "the next turn reset isComplete and nothing matched")
		st, err = h.Client.State(ctxFor(t), id)
		require.NoError(t, err)
		assert.False(t, st.IsComplete)
		assert.Equal(t, 2, st.TurnCount)
	})
}
