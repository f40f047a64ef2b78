package strategies_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
)

// Fault 6, the two examples: truncate sent a tool result without its call. Imported
// system messages left room for one message, the result the model was about to read;
// and an approval answered one of a reply's two calls in a tool message of its own.
// When the history ends in a tool round, the cut moves back to the calls.
func TestTruncateKeepsTheCallsOfTheResultsItEndsWith(t *testing.T) {
	call := func(id string, calls ...string) chat.Message {
		m := chat.Message{MessageID: id, Role: chat.RoleAssistant}
		for _, c := range calls {
			m.Contents = append(m.Contents, chat.Content{Type: chat.ContentFunctionCall, CallID: c, Name: "refund", Arguments: "{}"})
		}
		return m
	}
	result := func(id string, calls ...string) chat.Message {
		m := chat.Message{MessageID: id, Role: chat.RoleTool}
		for _, c := range calls {
			m.Contents = append(m.Contents, chat.Content{Type: chat.ContentFunctionResult, CallID: c, Result: "ok"})
		}
		return m
	}
	systems := []chat.Message{
		chat.TextMessage("s1", chat.RoleSystem, "", "imported one"),
		chat.TextMessage("s2", chat.RoleSystem, "", "imported two"),
		chat.TextMessage("u", chat.RoleUser, "", "refund, please"),
		call("call", "c1"),
		result("result", "c1"),
	}
	r := strategies.Reducer{Type: strategies.ReducerTruncate, MaxMessages: 3}
	assert.Equal(t, []string{"s1", "s2", "call", "result"}, ids(r.Reduce(systems)))

	approval := []chat.Message{
		chat.TextMessage("u", chat.RoleUser, "", "refund and look up"),
		call("calls", "approved", "plain"),
		result("plain-result", "plain"),
		result("approved-result", "approved"),
	}
	r = strategies.Reducer{Type: strategies.ReducerTruncate, MaxMessages: 2}
	assert.Equal(t, []string{"calls", "plain-result", "approved-result"}, ids(r.Reduce(approval)))
}
