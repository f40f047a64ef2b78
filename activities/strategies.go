package activities

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/activity"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// SelectFunc is a Go selection strategy: given the participants and the recent
// history, it returns the id of the agent to speak next ("" to let the fallback decide).
type SelectFunc func(ctx context.Context, candidates []wire.Candidate, history []chat.Message) (string, error)

// JudgeFunc is a Go termination strategy: it reports whether the chat has reached its
// goal, given the recent history.
type JudgeFunc func(ctx context.Context, history []chat.Message) (bool, error)

// Prompts of the llm strategies, sent as the system message after the agent's own
// instructions.
const (
	selectPrompt = "You choose who speaks next in a group conversation. The participants are: %s. " +
		"Reply with the id of the one participant who should speak next, and nothing else."
	judgePrompt = "Decide whether the conversation has reached its goal and should end. Reply yes or no, and nothing else."
)

// verdict finds the judge's answer: its first yes/no word (a model may say more, or
// quote itself).
var verdict = regexp.MustCompile(`(?i)\b(yes|no|not|true|false|done)\b`)

// saysYes reports whether the first yes/no word of text is yes, true or done.
func saysYes(text string) bool {
	m := verdict.FindStringSubmatch(text)
	return m != nil && (strings.EqualFold(m[1], "yes") || strings.EqualFold(m[1], "true") || strings.EqualFold(m[1], "done"))
}

// SelectSpeaker implements Activities.SelectSpeaker.
func (m *models) SelectSpeaker(ctx context.Context, in wire.SelectInput) (wire.SelectResult, error) {
	history, err := m.historyFor(ctx, in.History)
	if err != nil {
		return wire.SelectResult{}, err
	}
	if in.Function != "" {
		f, ok := m.selectors[in.Function]
		if !ok {
			return wire.SelectResult{}, m.unknowns.here(ctx, wire.KindSelectionFunction, []string{in.Function}, names(m.selectors),
				fmt.Sprintf("selection function %q is not registered on this worker", in.Function))
		}
		id, err := f(ctx, in.Candidates, history)
		return wire.SelectResult{AgentID: id, Said: id}, err
	}
	var list []string
	for _, c := range in.Candidates {
		list = append(list, fmt.Sprintf("%s (%s)", c.ID, c.Name))
	}
	said, err := m.ask(ctx, in.Agent, in.History.ChatID, in.History.TurnID, fmt.Sprintf(selectPrompt, strings.Join(list, ", ")), history)
	if err != nil {
		return wire.SelectResult{}, err
	}
	return wire.SelectResult{AgentID: matchCandidate(said, in.Candidates), Said: said}, nil
}

// matchCandidate returns the candidate whose id or name the text names first.
func matchCandidate(text string, cs []wire.Candidate) string {
	best, at := "", len(text)+1
	for _, c := range cs {
		for _, word := range []string{c.ID, c.Name} {
			if word == "" {
				continue
			}
			re := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(word) + `\b`)
			if loc := re.FindStringIndex(text); loc != nil && loc[0] < at {
				best, at = c.ID, loc[0]
			}
		}
	}
	return best
}

// JudgeTermination implements Activities.JudgeTermination.
func (m *models) JudgeTermination(ctx context.Context, in wire.JudgeInput) (wire.JudgeResult, error) {
	history, err := m.historyFor(ctx, in.History)
	if err != nil {
		return wire.JudgeResult{}, err
	}
	if in.Function != "" {
		f, ok := m.judges[in.Function]
		if !ok {
			return wire.JudgeResult{}, m.unknowns.here(ctx, wire.KindTerminationFunction, []string{in.Function}, names(m.judges),
				fmt.Sprintf("termination function %q is not registered on this worker", in.Function))
		}
		done, err := f(ctx, history)
		return wire.JudgeResult{Done: done}, err
	}
	said, err := m.ask(ctx, in.Agent, in.History.ChatID, in.History.TurnID, judgePrompt, history)
	if err != nil {
		return wire.JudgeResult{}, err
	}
	return wire.JudgeResult{Done: saysYes(said), Said: said}, nil
}

// ask makes one Chat Completions call as agent id, with prompt after its instructions,
// and returns the reply text. The call is traced and measured as a model call of turn
// turnID (tracedInvoke); its usage is not in State's totals.
func (m *models) ask(ctx context.Context, id, chatID, turnID, prompt string, history []chat.Message) (string, error) {
	def, err := m.agent(ctx, id)
	if err != nil {
		return "", err
	}
	instructions := strings.TrimSpace(def.Instructions + "\n\n" + prompt)
	call := &callInfo{agentID: def.ID, chatID: chatID}
	ctx = withCall(ctx, call)
	res, err := m.tracedInvoke(ctx, def, wire.InvokeInput{ChatID: chatID, TurnID: turnID}, history,
		func(ctx context.Context) (wire.InvokeResult, error) {
			res, err := withinBudget(ctx, def, instructions, history, func(sent []chat.Message) (wire.InvokeResult, error) {
				return completeOnce(ctx, m.endpoints[def.Endpoint], openai.ChatCompletionRequest{
					Model: def.Model, Messages: chatMessages(instructions, sent)})
			})
			if err != nil {
				return res, providerError(ctx, err, call.retryAfter)
			}
			return withUsage(res, m.registry.Config(), def, res.Usage), nil
		})
	if err != nil {
		return "", err
	}
	return chat.Message{Contents: res.Contents}.Text(), nil
}

// summarizePrompt asks for a summary that can replace the messages it covers.
const summarizePrompt = "Summarize the conversation above in a few sentences for your own later use: " +
	"keep names, facts, numbers, decisions and open questions. Reply with the summary only."

// Summarize implements Activities.Summarize.
func (m *models) Summarize(ctx context.Context, in wire.SummarizeInput) (wire.SummarizeResult, error) {
	history, err := m.historyFor(ctx, in.History)
	if err != nil {
		return wire.SummarizeResult{}, err
	}
	if in.Previous != "" {
		history = append([]chat.Message{chat.TextMessage("summary", chat.RoleSystem, "", strategies.SummaryPrefix+in.Previous)}, history...)
	}
	said, err := m.ask(ctx, in.Agent, in.History.ChatID, in.History.TurnID, summarizePrompt, history)
	if err != nil {
		return wire.SummarizeResult{}, err
	}
	summary := strings.TrimSpace(said)
	if wire.TextBytes(summary) > wire.SummaryLimit {
		activity.GetLogger(ctx).Warn("summary cut to SummaryLimit", "agent", in.Agent, "bytes", wire.TextBytes(summary), "limit", wire.SummaryLimit)
		summary = cutToBytes(summary, wire.SummaryLimit-wire.TextBytes(wire.SummaryCutMark)) + wire.SummaryCutMark
	}
	return wire.SummarizeResult{Summary: summary}, nil
}

// cutToBytes returns the longest prefix of s, cut at a character boundary, whose JSON
// string encoding (TextBytes) takes at most n bytes.
func cutToBytes(s string, n int) string {
	total := 0
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		w := wire.TextBytes(s[i : i+size])
		if total+w > n {
			return s[:i]
		}
		total, i = total+w, i+size
	}
	return s
}
