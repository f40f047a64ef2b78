package offline_test

import (
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat/offline"
)

// refundRequest is the clerk's request after its refund call: the user's message, the
// call, and the call's result as agentchat sends it (an error result reads "error: ...").
func refundRequest(result string) openai.ChatCompletionRequest {
	req := chatRequest("Refund order 1002, please")
	req.Messages = append(req.Messages,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{ID: "call_refund",
			Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "refund", Arguments: `{"order":"1002"}`}}}},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: "call_refund", Content: result})
	return req
}

// A scripted text answer to tool results is given as scripted only when every result it
// answers succeeded: after a rejected or failed call, the offline model says what the
// result says, never the success its script assumed. Streaming or not, alike.
func TestScriptedAnswerFollowsTheToolResultItGets(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{"clerk": {{Text: "The kettle of order 1002 is refunded."}}}})
	answer := func(result string, stream bool) string {
		s.SetScript("clerk", []offline.Reply{{Text: "The kettle of order 1002 is refunded."}})
		if stream {
			return completeStream(t, newClient(s, "clerk"), refundRequest(result)).text
		}
		return complete(t, newClient(s, "clerk"), refundRequest(result)).Choices[0].Message.Content
	}
	for _, stream := range []bool{false, true} {
		assert.Equal(t, "[offline] clerk: The kettle of order 1002 is refunded.", answer("refunded $42.50 for order 1002", stream))

		rejected := answer("error: rejected by a person: over the limit", stream)
		assert.NotContains(t, rejected, "is refunded")
		assert.Contains(t, rejected, "[offline] clerk: ")
		assert.Contains(t, rejected, "refund")
		assert.Contains(t, rejected, "rejected by a person: over the limit")

		failed := answer("error: payments service down", stream)
		assert.NotContains(t, failed, "is refunded")
		assert.Contains(t, failed, "payments service down")
	}
}

// Of two results, one rejected: the answer says what each did.
func TestScriptedAnswerToMixedResultsSaysWhatEachDid(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{"clerk": {{Text: "Both refunded."}}}})
	req := chatRequest("Refund orders 1001 and 1003")
	req.Messages = append(req.Messages,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{
			{ID: "call_a", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "refund", Arguments: `{"order":"1001"}`}},
			{ID: "call_b", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "refund", Arguments: `{"order":"1003"}`}}}},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: "call_a", Content: "refunded $42.50 for order 1001"},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: "call_b", Content: "error: rejected by a person"})
	assert.Equal(t, "[offline] clerk: Partly done: refund (call_a): refunded $42.50 for order 1001; refund (call_b) failed: rejected by a person.",
		complete(t, newClient(s, "clerk"), req).Choices[0].Message.Content)
}

// The Responses API answers alike: a rejected call's output is what the reply says.
func TestResponsesScriptedAnswerFollowsTheToolResultItGets(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{"clerk": {{Text: "The kettle of order 1002 is refunded."}}}})
	resp := respond(t, newClient(s, "clerk"), openai.CreateResponseRequest{Model: "m", Input: []any{
		msgItem("user", "Refund order 1002, please"),
		openai.ResponseOutputItem{Type: "function_call", CallID: "call_refund", Name: "refund", Arguments: `{"order":"1002"}`},
		openai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: "call_refund", Output: "error: rejected by a person: no"},
	}})
	assert.Equal(t, "[offline] clerk: Not done: refund (call_refund) failed: rejected by a person: no.", resp.GetOutputText())
}
