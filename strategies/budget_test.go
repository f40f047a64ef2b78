package strategies

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
)

func jsonBytes(m chat.Message) int {
	b, _ := json.Marshal(m)
	return len(b)
}

func viewTokens(msgs []chat.Message) int {
	n := 0
	for _, m := range msgs {
		n += EstimateTokens(jsonBytes(m))
	}
	return n
}

// randomHistory is a seeded chat of user turns, assistant replies and tool rounds
// (a call message, then its results), with system messages here and there.
func randomHistory(r *rand.Rand, n int) []chat.Message {
	var out []chat.Message
	for i := 0; len(out) < n; i++ {
		text := strings.Repeat("x", r.IntN(2000))
		switch r.IntN(5) {
		case 0:
			out = append(out, chat.TextMessage(fmt.Sprintf("s%d", i), chat.RoleSystem, "", "rules "+text))
		case 1:
			calls := 1 + r.IntN(3)
			m := chat.Message{MessageID: fmt.Sprintf("a%d", i), Role: chat.RoleAssistant}
			for c := range calls {
				m.Contents = append(m.Contents, chat.Content{Type: chat.ContentFunctionCall, CallID: fmt.Sprintf("c%d-%d", i, c), Name: "f", Arguments: "{}"})
			}
			out = append(out, m)
			for c := range calls {
				out = append(out, chat.Message{MessageID: fmt.Sprintf("t%d-%d", i, c), Role: chat.RoleTool,
					Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: fmt.Sprintf("c%d-%d", i, c), Result: text}}})
			}
		case 2:
			out = append(out, chat.TextMessage(fmt.Sprintf("r%d", i), chat.RoleAssistant, "A", text))
		default:
			out = append(out, chat.TextMessage(fmt.Sprintf("u%d", i), chat.RoleUser, "", text))
		}
	}
	return out
}

// pairSafe reports whether every tool result in msgs follows the message with its
// call, and every call has all its results.
func pairSafe(t *testing.T, msgs []chat.Message) {
	t.Helper()
	calls := map[string]bool{}
	results := map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.Contents {
			switch c.Type {
			case chat.ContentFunctionCall:
				calls[c.CallID] = true
			case chat.ContentFunctionResult:
				require.True(t, calls[c.CallID], "result %s without its call", c.CallID)
				results[c.CallID] = true
			}
		}
	}
	for id := range calls {
		require.True(t, results[id], "call %s without its results", id)
	}
}

// Over seeded random chats and budgets: the view fits the budget (unless the latest
// round alone passes it), keeps every system message and the latest message, is a
// suffix of the non-system messages, and never splits a call from its results.
func TestBudgetKeepsTheLatestMessagesPairSafe(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 26))
	for n := range 400 {
		h := randomHistory(r, 1+r.IntN(60))
		tokens := MinContextTokens + r.IntN(20_000)
		got := Budget(h, tokens, jsonBytes)
		name := fmt.Sprintf("case %d: %d messages, budget %d", n, len(h), tokens)
		if viewTokens(h) <= tokens {
			assert.Equal(t, h, got, name)
			continue
		}
		var system, rest []chat.Message
		for _, m := range h {
			if m.Role == chat.RoleSystem {
				system = append(system, m)
			} else {
				rest = append(rest, m)
			}
		}
		require.GreaterOrEqual(t, len(got), len(system), name)
		assert.Equal(t, msgIDs(system), msgIDs(got[:len(system)]), name)
		kept := got[len(system):]
		require.NotEmpty(t, kept, name)
		assert.Equal(t, rest[len(rest)-len(kept):], kept, name+": not the latest messages")
		pairSafe(t, kept)
		if kept[0].Role != chat.RoleAssistant || len(kept) == 1 || kept[1].Role != chat.RoleTool {
			// Not the forced last round: the budget holds, and one more message would not fit safely.
			if viewTokens(got) > tokens {
				assert.Equal(t, 1, len(kept), name+": over the budget")
			}
		}
	}
}

func TestBudgetEdges(t *testing.T) {
	small := []chat.Message{chat.TextMessage("u1", chat.RoleUser, "", "hi")}
	assert.Equal(t, small, Budget(small, 0, jsonBytes), "zero means the default budget")
	assert.Empty(t, Budget(nil, 10, jsonBytes))
	big := chat.TextMessage("u2", chat.RoleUser, "", strings.Repeat("y", 40_000))
	h := []chat.Message{chat.TextMessage("s", chat.RoleSystem, "", "rules"), chat.TextMessage("u1", chat.RoleUser, "", "hi"), big}
	got := Budget(h, MinContextTokens, jsonBytes)
	assert.Equal(t, []string{"s", "u2"}, []string{got[0].MessageID, got[1].MessageID}, "the latest message goes even alone over the budget")
	assert.Equal(t, "u1", h[1].MessageID, "input unchanged")
}

func msgIDs(msgs []chat.Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.MessageID)
	}
	return out
}
