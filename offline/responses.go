package offline

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// responsesRequest is the part of a Responses API request body the server reads
// (https://platform.openai.com/docs/api-reference/responses/create).
type responsesRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       string          `json:"instructions"`
	PreviousResponseID string          `json:"previous_response_id"`
	Store              *bool           `json:"store"`
	Stream             bool            `json:"stream"`
	Metadata           map[string]any  `json:"metadata"`
	Tools              []responsesTool `json:"tools"`
}

// responsesTool is the part of a Responses tool the server checks.
type responsesTool struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// inputItem is one item of a request's input list: a message ({"role","content"},
// "type" optional), a function_call or a function_call_output.
type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// contentPart is one part of a message's content list.
type contentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL string `json:"image_url"`
}

// storedResponse is a response kept for previous_response_id: the conversation it
// added (its input, as chat messages, then its output) and the response returned.
type storedResponse struct {
	prev   string
	input  []openai.ChatCompletionMessage
	output openai.ChatCompletionMessage
	resp   openai.CreateResponseResponse
}

// createResponse answers POST /v1/responses. It counts the request, decodes the body
// (400/413 when malformed; "stream": true is refused), checks it by OpenAI's rules
// (function names, roles; recorded in Violations), rebuilds the conversation from the
// previous_response_id chain (404 for an unknown id, a violation too) plus this input,
// checks that every function call has exactly its output and no output lacks its call
// (400, as OpenAI does), takes the agent's scripted reply for this conversation
// (responsesPosition), waits Options.Latency plus the reply's Delay, then answers the
// scripted error or the reply. The reply is computed from the whole conversation after
// a system message with this request's instructions: the Responses API does not carry
// instructions across previous_response_id. Unless "store" is false, the response is
// kept, for GET /v1/responses/{id} and as a later previous_response_id.
func (s *Server) createResponse(w http.ResponseWriter, r *http.Request) {
	agent := agentOf(r)
	seq := s.ledger.count(agent)
	log := s.log.With("agent", agent, "request", seq)

	var req responsesRequest
	body, ok := s.decodeBody(w, r, &req)
	if !ok {
		return
	}
	if req.Stream {
		badRequest(w, "stream", "offline: streamed Responses are not supported; send \"stream\": false.")
		return
	}
	if v := validateResponsesTools(req.Tools); v != nil {
		s.refuse(w, r, v)
		return
	}
	items, v := decodeInput(req.Input)
	if v != nil {
		s.refuse(w, r, v)
		return
	}
	s.svc.mu.Lock()
	s.svc.lastResponse[agent] = body
	conv, found := s.svc.conversation(req.PreviousResponseID)
	s.svc.mu.Unlock()
	if !found {
		s.refuse(w, r, &Violation{Status: http.StatusNotFound, Param: "previous_response_id", Code: "previous_response_not_found",
			Message: fmt.Sprintf("Previous response with id '%s' not found.", req.PreviousResponseID)})
		return
	}
	conv = append(conv, items...)
	if v := checkCallPairs(conv); v != nil {
		s.refuse(w, r, v)
		return
	}
	reply := s.ledger.reply(agent, chatOf(r), responsesPosition(r, conv))

	if !s.awaitReply(w, r, reply, log) {
		return
	}
	ans := buildAnswer(agent, reply, openai.ChatCompletionRequest{Model: req.Model,
		Messages: withInstructions(req.Instructions, conv)}, seq, func() string { return conversationKey(conv) })
	log.Debug("offline: response", "previous", req.PreviousResponseID, "items", len(items), "conversation", len(conv))
	s.reported.add(agent, ans.usage)
	writeJSON(w, http.StatusOK, s.svc.storeResponse(req, items, ans))
}

// responsesPosition is scriptPosition for a Responses conversation: the number of its
// assistant messages (the Responses API takes no author names, so in a group chat
// other agents' messages count too); -1 without AuthorHeader.
func responsesPosition(r *http.Request, conv []openai.ChatCompletionMessage) int {
	if _, ok := r.Header[http.CanonicalHeaderKey(AuthorHeader)]; !ok {
		return -1
	}
	n := 0
	for _, m := range conv {
		if m.Role == openai.ChatMessageRoleAssistant {
			n++
		}
	}
	return n
}

// getResponse answers GET /v1/responses/{id} with a stored response.
func (s *Server) getResponse(w http.ResponseWriter, id string) {
	s.svc.mu.Lock()
	stored, ok := s.svc.responses[id]
	s.svc.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, requestError("not_found", "", fmt.Sprintf("Response with id '%s' not found.", id)))
		return
	}
	writeJSON(w, http.StatusOK, stored.resp)
}

// conversation is the conversation up to and including response id (empty for ""):
// every stored response of its chain, oldest first, each its input then its output. It
// reports false when id is not stored. v.mu must be held.
func (v *services) conversation(id string) ([]openai.ChatCompletionMessage, bool) {
	var chain []*storedResponse
	for id != "" {
		stored, ok := v.responses[id]
		if !ok {
			return nil, false
		}
		chain = append(chain, stored)
		id = stored.prev
	}
	var conv []openai.ChatCompletionMessage
	for i := len(chain) - 1; i >= 0; i-- {
		conv = append(conv, chain[i].input...)
		conv = append(conv, chain[i].output)
	}
	return conv, true
}

// storeResponse makes the response for ans and, unless req.Store is false, keeps it.
func (v *services) storeResponse(req responsesRequest, input []openai.ChatCompletionMessage, ans answer) openai.CreateResponseResponse {
	v.mu.Lock()
	defer v.mu.Unlock()
	id := v.newID("resp")
	var output []any
	if ans.content != "" {
		output = append(output, openai.ResponseOutputItem{ID: v.newID("msg"), Type: "message", Status: "completed",
			Role: openai.ChatMessageRoleAssistant,
			Content: []openai.ResponseOutputContent{{Type: "output_text", Text: ans.content,
				Annotations: []openai.ResponseAnnotation{}}}})
	}
	for _, tc := range ans.toolCalls {
		output = append(output, openai.ResponseOutputItem{ID: v.newID("fc"), Type: "function_call", Status: "completed",
			CallID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if output == nil {
		output = []any{}
	}
	store := req.Store == nil || *req.Store
	completed := time.Now().Unix()
	resp := openai.CreateResponseResponse{
		ID: id, Object: "response", Created: ans.created, CompletedAt: &completed,
		Status: openai.ResponseStatusCompleted, Model: ans.model, Output: output,
		PreviousResponseID: req.PreviousResponseID, Store: store, Metadata: req.Metadata,
		Usage: &openai.ResponseUsage{InputTokens: ans.usage.PromptTokens, OutputTokens: ans.usage.CompletionTokens,
			TotalTokens: ans.usage.TotalTokens},
	}
	if req.Instructions != "" {
		resp.Instructions = req.Instructions
	}
	if store {
		v.responses[id] = &storedResponse{prev: req.PreviousResponseID, input: input, resp: resp,
			output: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: ans.content, ToolCalls: ans.toolCalls}}
	}
	return resp
}

// decodeInput turns a request's input (a string: one user message; or a list of
// items) into chat messages: a message item keeps its role ("developer" counts as
// system) and its text and image parts; a function_call becomes a tool call of the
// assistant message just before it when that came from this input, else an assistant
// message of its own (so a message with calls counts once, as in chat completions); a
// function_call_output becomes a tool message. A missing input, or an item or role the
// server does not know, is an error.
func decodeInput(raw json.RawMessage) ([]openai.ChatCompletionMessage, *Violation) {
	bad := func(param, format string, a ...any) *Violation {
		return &Violation{Status: http.StatusBadRequest, Param: param, Code: "invalid_value", Message: fmt.Sprintf(format, a...)}
	}
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, &Violation{Status: http.StatusBadRequest, Param: "input", Code: "missing_required_parameter",
			Message: "Missing required parameter: 'input'."}
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}}, nil
	}
	var items []inputItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, bad("input", "Invalid 'input': a string or a list of items expected: %v", err)
	}
	var out []openai.ChatCompletionMessage
	for i, it := range items {
		switch it.Type {
		case "", "message":
			if !slices.Contains(responsesRoles, it.Role) {
				return nil, unknownRole(fmt.Sprintf("input[%d].role", i), it.Role, responsesRoles)
			}
			m, err := inputMessage(it)
			if err != nil {
				return nil, bad(fmt.Sprintf("input[%d].content", i), "Invalid 'input[%d].content': %v", i, err)
			}
			out = append(out, m)
		case "function_call":
			if it.CallID == "" {
				return nil, bad(fmt.Sprintf("input[%d].call_id", i), "Missing required parameter: 'input[%d].call_id'.", i)
			}
			if v := checkName(fmt.Sprintf("input[%d].name", i), it.Name); v != nil {
				return nil, v
			}
			call := openai.ToolCall{ID: it.CallID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: it.Name, Arguments: it.Arguments}}
			if n := len(out); n > 0 && out[n-1].Role == openai.ChatMessageRoleAssistant {
				out[n-1].ToolCalls = append(out[n-1].ToolCalls, call)
			} else {
				out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{call}})
			}
		case "function_call_output":
			if it.CallID == "" {
				return nil, bad(fmt.Sprintf("input[%d].call_id", i), "Missing required parameter: 'input[%d].call_id'.", i)
			}
			out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: it.CallID,
				Content: outputText(it.Output)})
		default:
			return nil, bad(fmt.Sprintf("input[%d].type", i), "Invalid 'input[%d].type': offline: input item type %q is not supported.", i, it.Type)
		}
	}
	return out, nil
}

// inputMessage is a message item as a chat message.
func inputMessage(it inputItem) (openai.ChatCompletionMessage, error) {
	m := openai.ChatCompletionMessage{Role: it.Role}
	switch it.Role {
	case openai.ChatMessageRoleUser, openai.ChatMessageRoleAssistant, openai.ChatMessageRoleSystem:
	case openai.ChatMessageRoleDeveloper:
		m.Role = openai.ChatMessageRoleSystem
	default:
		return m, fmt.Errorf("unknown role %q; use user, assistant, system or developer", it.Role)
	}
	if json.Unmarshal(it.Content, &m.Content) == nil {
		return m, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(it.Content, &parts); err != nil {
		return m, errors.New("content must be a string or a list of parts")
	}
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			m.MultiContent = append(m.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: p.Text})
		case "input_image":
			m.MultiContent = append(m.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL,
				ImageURL: &openai.ChatMessageImageURL{URL: p.ImageURL}})
		}
	}
	if m.MultiContent == nil {
		m.MultiContent = []openai.ChatMessagePart{} // a message, even if none of its parts is readable here
	}
	return m, nil
}

// outputText is a function_call_output's output: a string, or the text of its parts,
// or else the JSON as it came.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []contentPart
	if json.Unmarshal(raw, &parts) == nil {
		texts := make([]string, 0, len(parts))
		for _, p := range parts {
			texts = append(texts, p.Text)
		}
		return strings.Join(texts, " ")
	}
	return string(raw)
}

// LastResponseRequest is the body of the last Responses request agent sent that
// decoded, as go-openai's request type (Input as decoded JSON: a string or a []any of
// map[string]any items), and whether there was one.
func (s *Server) LastResponseRequest(agent string) (openai.CreateResponseRequest, bool) {
	s.svc.mu.Lock()
	body, ok := s.svc.lastResponse[agent]
	s.svc.mu.Unlock()
	var req openai.CreateResponseRequest
	if !ok || json.Unmarshal(body, &req) != nil {
		return openai.CreateResponseRequest{}, false
	}
	return req, true
}
