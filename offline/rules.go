package offline

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// The request rules OpenAI enforces, which the server enforces too, so that a request
// the project builds wrongly fails in its own tests as it would against OpenAI. The
// messages, params and codes are OpenAI's, as its API answers them (HTTP 400, type
// invalid_request_error); see https://platform.openai.com/docs/guides/error-codes.

// Violation is a request the server refused because it breaks one of OpenAI's request
// rules (Validate, and the Responses rules of createResponse): the answer it sent.
type Violation struct {
	// Path is the endpoint, e.g. "/v1/chat/completions" or "/v1/responses"; empty for
	// what Validate returns.
	Path string `json:"path,omitempty"`
	// Agent and Chat are the request's AgentHeader and wire.ChatHeader; empty for
	// what Validate returns.
	Agent string `json:"agent,omitempty"`
	Chat  string `json:"chat,omitempty"`
	// Status is the HTTP status answered: 400, or 404 for an unknown previous_response_id,
	// or 413 for a body over 8 MiB.
	Status int `json:"status"`
	// Param names the offending field as OpenAI does: "messages.[3].role",
	// "messages[2].name", "tools[0].function.name", "input"; empty when none.
	Param string `json:"param,omitempty"`
	// Code is OpenAI's error code ("invalid_value", "string_above_max_length", …);
	// empty where OpenAI answers null.
	Code string `json:"code,omitempty"`
	// Message is the error message, in OpenAI's words.
	Message string `json:"message"`
}

// Error is the message, with the param when there is one.
func (v *Violation) Error() string {
	if v.Param == "" {
		return "offline: " + v.Message
	}
	return "offline: " + v.Message + " (param " + v.Param + ")"
}

// body is v as OpenAI's error body.
func (v *Violation) body() apiError {
	d := apiErrorDetail{Message: v.Message, Type: "invalid_request_error"}
	if v.Param != "" {
		d.Param = &v.Param
	}
	if v.Code != "" {
		d.Code = &v.Code
	}
	return apiError{Error: d}
}

// chatRoles are the message roles Chat Completions knows, in the order OpenAI lists them.
var chatRoles = []string{"system", "assistant", "user", "function", "tool", "developer"}

// responsesRoles are the message roles Responses input items take.
var responsesRoles = []string{"assistant", "system", "developer", "user"}

// Validate checks a Chat Completions request against OpenAI's rules and returns the
// first breach (the tools first, then the messages in order) as a *Violation (Status
// 400), or nil:
//
//   - messages is not empty;
//   - every role is system, assistant, user, function, tool or developer
//     (param "messages[i].role", code "invalid_value");
//   - every name (a message's, a tool call's function name, a tool's function name)
//     matches ^[a-zA-Z0-9_-]{1,64}$ ("messages[i].name",
//     "messages[i].tool_calls[j].function.name", "tools[i].function.name");
//   - an assistant message has content or tool calls ("messages.[i].content");
//   - tool call ids are at most MaxCallIDLen bytes ("messages[i].tool_calls[j].id",
//     "messages[i].tool_call_id");
//   - image parts are only in user messages ("messages.[i].content");
//   - a tool message answers a tool_call_id, not answered yet, of the assistant message
//     just before the run of tool messages it is in ("messages.[i].role");
//   - every tool call of an assistant message is answered before the next message that
//     is not a tool message, or the end ("messages.[i].role", i the assistant message);
//   - the messages fit the model's context window, ContextWindowTokens (param
//     "messages", code "context_length_exceeded"), counted as ContextTokens counts them.
func Validate(req openai.ChatCompletionRequest) error {
	if v := validateChat(req); v != nil {
		return v
	}
	return nil
}

// validateChat is Validate with the breach typed, for the server.
func validateChat(req openai.ChatCompletionRequest) *Violation {
	if len(req.Messages) == 0 {
		return &Violation{Status: http.StatusBadRequest, Param: "messages",
			Message: "[] is too short - 'messages': at least one message is required"}
	}
	if req.StreamOptions != nil && !req.Stream {
		// OpenAI's API reference: stream_options "only set this when you set stream: true".
		return &Violation{Status: http.StatusBadRequest, Param: "stream_options",
			Message: "The 'stream_options' parameter is only allowed when 'stream' is enabled."}
	}
	for i, t := range req.Tools {
		if t.Function != nil {
			if v := checkName(fmt.Sprintf("tools[%d].function.name", i), t.Function.Name); v != nil {
				return v
			}
		}
	}
	var (
		caller = -1            // the assistant message whose calls the following tool messages answer
		open   map[string]bool // its calls not answered yet
		order  []string        // its call ids, in order
	)
	unanswered := func() *Violation {
		var ids []string
		for _, id := range order {
			if open[id] {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			return nil
		}
		return &Violation{Status: http.StatusBadRequest, Param: fmt.Sprintf("messages.[%d].role", caller),
			Message: "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
				"'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(ids, ", ")}
	}
	for i, m := range req.Messages {
		if v := checkMessage(i, m); v != nil {
			return v
		}
		if m.Role == openai.ChatMessageRoleTool {
			if caller < 0 || !open[m.ToolCallID] {
				return &Violation{Status: http.StatusBadRequest, Param: fmt.Sprintf("messages.[%d].role", i),
					Message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."}
			}
			open[m.ToolCallID] = false
			continue
		}
		if v := unanswered(); v != nil {
			return v
		}
		caller, open, order = -1, nil, nil
		if len(m.ToolCalls) > 0 {
			caller, open = i, make(map[string]bool, len(m.ToolCalls))
			for _, tc := range m.ToolCalls {
				open[tc.ID] = true
				order = append(order, tc.ID)
			}
		}
	}
	if v := unanswered(); v != nil {
		return v
	}
	return checkContext(req.Messages)
}

// ContextWindowTokens is the context window of the offline model, in tokens as
// ContextTokens counts them: 1,047,576, the window of OpenAI's gpt-4.1 models, the
// largest a chat's messages (up to 1 MiB each) are sent to. A request over it is
// refused as OpenAI refuses one: 400, code context_length_exceeded.
const ContextWindowTokens = 1_047_576

// ContextTokens is what the offline model counts a request's messages as: their JSON
// in the request, in bytes, divided by 4 (OpenAI's rule of thumb of about 4 bytes a
// token). A model's tokenizer counts English text at about the same rate.
func ContextTokens(msgs []openai.ChatCompletionMessage) int {
	b, _ := json.Marshal(msgs)
	return len(b) / 4
}

// checkContext refuses messages over ContextWindowTokens, in OpenAI's words. Messages
// whose JSON cannot reach the window (jsonBound) are not encoded: encoding a long
// chat's messages again was most of the offline model's work on each of its calls.
func checkContext(msgs []openai.ChatCompletionMessage) *Violation {
	if jsonBound(msgs)/4 <= ContextWindowTokens {
		return nil // ContextTokens(msgs) <= jsonBound(msgs)/4
	}
	if n := ContextTokens(msgs); n > ContextWindowTokens {
		return &Violation{Status: http.StatusBadRequest, Param: "messages", Code: "context_length_exceeded",
			Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. "+
				"Please reduce the length of the messages.", ContextWindowTokens, n)}
	}
	return nil
}

// checkMessage applies the rules about message i alone.
func checkMessage(i int, m openai.ChatCompletionMessage) *Violation {
	if !slices.Contains(chatRoles, m.Role) {
		return unknownRole(fmt.Sprintf("messages[%d].role", i), m.Role, chatRoles)
	}
	if m.Name != "" && !plainName(m.Name) {
		if v := checkName(fmt.Sprintf("messages[%d].name", i), m.Name); v != nil {
			return v
		}
	}
	for j, tc := range m.ToolCalls {
		if !plainName(tc.Function.Name) {
			if v := checkName(fmt.Sprintf("messages[%d].tool_calls[%d].function.name", i, j), tc.Function.Name); v != nil {
				return v
			}
		}
		if v := checkCallID(fmt.Sprintf("messages[%d].tool_calls[%d].id", i, j), tc.ID); v != nil {
			return v
		}
	}
	if m.Role == openai.ChatMessageRoleTool {
		if v := checkCallID(fmt.Sprintf("messages[%d].tool_call_id", i), m.ToolCallID); v != nil {
			return v
		}
	}
	if m.Role == openai.ChatMessageRoleAssistant && m.Content == "" && len(m.MultiContent) == 0 &&
		len(m.ToolCalls) == 0 && m.FunctionCall == nil {
		return &Violation{Status: http.StatusBadRequest, Param: fmt.Sprintf("messages.[%d].content", i),
			Message: "Invalid value for 'content': expected a string, got null."}
	}
	if m.Role != openai.ChatMessageRoleUser {
		for _, p := range m.MultiContent {
			if p.Type == openai.ChatMessagePartTypeImageURL {
				return &Violation{Status: http.StatusBadRequest, Param: fmt.Sprintf("messages.[%d].content", i),
					Message: "Image URLs are only allowed for messages with role 'user', but this message with role '" +
						m.Role + "' contains an image URL."}
			}
		}
	}
	return nil
}

// MaxCallIDLen is the longest tool call id OpenAI accepts (wire.MaxCallIDLen).
const MaxCallIDLen = wire.MaxCallIDLen

// checkCallID reports a tool call id that OpenAI refuses at param.
func checkCallID(param, id string) *Violation {
	if len(id) <= MaxCallIDLen {
		return nil
	}
	return &Violation{Status: http.StatusBadRequest, Param: param, Code: "string_above_max_length",
		Message: fmt.Sprintf("Invalid '%s': string too long. Expected a string with maximum length %d, but got a string with length %d instead.",
			param, MaxCallIDLen, len(id))}
}

// checkName reports a name that OpenAI refuses at param (chat.FunctionNamePattern),
// in OpenAI's words: it names the length and the characters apart, the latter as the
// pattern '^[a-zA-Z0-9_-]+$'.
func checkName(param, name string) *Violation {
	switch {
	case name == "":
		return &Violation{Status: http.StatusBadRequest, Param: param, Code: "empty_string",
			Message: fmt.Sprintf("Invalid '%s': empty string. Expected a string with minimum length 1, but got an empty string instead.", param)}
	case len(name) > chat.MaxFunctionNameLen:
		return &Violation{Status: http.StatusBadRequest, Param: param, Code: "string_above_max_length",
			Message: fmt.Sprintf("Invalid '%s': string too long. Expected a string with maximum length %d, but got a string with length %d instead.",
				param, chat.MaxFunctionNameLen, len(name))}
	case !chat.FunctionNamePattern.MatchString(name):
		return &Violation{Status: http.StatusBadRequest, Param: param, Code: "invalid_value",
			Message: fmt.Sprintf("Invalid '%s': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
				param)}
	}
	return nil
}

// plainName reports, without the pattern, that checkName takes name: 1 to
// chat.MaxFunctionNameLen bytes of [a-zA-Z0-9_-]. checkMessage asks it first, so that a
// long conversation's valid names cost neither a param string nor a regexp match each.
func plainName(name string) bool {
	if name == "" || len(name) > chat.MaxFunctionNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// unknownRole is OpenAI's answer to a role outside known, at param.
func unknownRole(param, role string, known []string) *Violation {
	quoted := make([]string, len(known))
	for i, r := range known {
		quoted[i] = "'" + r + "'"
	}
	list := strings.Join(quoted[:len(quoted)-1], ", ") + ", and " + quoted[len(quoted)-1]
	return &Violation{Status: http.StatusBadRequest, Param: param, Code: "invalid_value",
		Message: "Invalid value: '" + role + "'. Supported values are: " + list + "."}
}

// validateResponsesTools checks the function names of a Responses request's tools
// ("tools[i].name").
func validateResponsesTools(tools []responsesTool) *Violation {
	for i, t := range tools {
		if t.Type == "function" {
			if v := checkName(fmt.Sprintf("tools[%d].name", i), t.Name); v != nil {
				return v
			}
		}
	}
	return nil
}

// checkCallPairs applies the Responses API's pairing rule to a whole conversation
// (the previous_response_id chain, then this input): every function_call_output
// answers an earlier function_call, and every function_call has its output by now
// (param "input").
func checkCallPairs(conv []openai.ChatCompletionMessage) *Violation {
	calls := map[string]bool{} // call id -> answered
	var order []string
	for _, m := range conv {
		for _, tc := range m.ToolCalls {
			if _, seen := calls[tc.ID]; !seen {
				order = append(order, tc.ID)
			}
			calls[tc.ID] = false
		}
		if m.Role == openai.ChatMessageRoleTool {
			if _, ok := calls[m.ToolCallID]; !ok {
				return &Violation{Status: http.StatusBadRequest, Param: "input",
					Message: fmt.Sprintf("No tool call found for function call output with call_id %s.", m.ToolCallID)}
			}
			calls[m.ToolCallID] = true
		}
	}
	for _, id := range order {
		if !calls[id] {
			return &Violation{Status: http.StatusBadRequest, Param: "input",
				Message: fmt.Sprintf("No tool output found for function call %s.", id)}
		}
	}
	return nil
}

// jsonBound is at least len(json.Marshal(msgs)), counted without encoding them: every
// string at 6 bytes a byte (a byte encoded as \u00XX, or an invalid one as \ufffd)
// plus its quotes, and for every message, part and call more than its members' names,
// punctuation and numbers take.
func jsonBound(msgs []openai.ChatCompletionMessage) int {
	str := func(s string) int { return 2 + 6*len(s) }
	n := len("null") // no messages; "[]" and its commas are within the messages' margin
	for _, m := range msgs {
		n += 192 + str(m.Role) + str(m.Content) + str(m.Refusal) + str(m.Name) + str(m.ReasoningContent) + str(m.ToolCallID)
		if f := m.FunctionCall; f != nil {
			n += 64 + str(f.Name) + str(f.Arguments)
		}
		for _, p := range m.MultiContent {
			n += 96 + str(string(p.Type)) + str(p.Text)
			if u := p.ImageURL; u != nil {
				n += 64 + str(u.URL) + str(string(u.Detail))
			}
		}
		for _, c := range m.ToolCalls {
			n += 160 + str(c.ID) + str(string(c.Type)) + str(c.Function.Name) + str(c.Function.Arguments)
		}
	}
	return n
}
