package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// invokeResponses runs one reply of a responses agent (ResponsesAgent): one call of
// OpenAI's Responses API, not streamed, heartbeating while it waits. The service keeps
// the conversation as a chain of stored responses; the channel state
// (wire.ResponsesThreadState) names the chain's latest response and the last primary
// message the chain holds.
//
// The request carries previous_response_id (none for a new channel), input = the
// messages given (history, after syncedThrough if it holds that message: the workflow
// sends only what the service has not seen, a new channel everything), instructions =
// the agent's instructions on every call (the Responses API does not carry them across
// previous_response_id), store: true, and the agent's tools as function tools. See
// responsesInput for how messages become input items.
//
// The reply is the output's text and function calls. The new state names the new
// response and, as the watermark, in.ReplyID (the reply's messageId): the reply is part
// of the chain, so it is never sent again. A retried call sends the same request from
// the same previous response, so the chain forks and nothing is sent twice.
//
// Errors: InvalidInput (not retryable) for a malformed channel state or a missing
// replyId; ServiceThreadLost (not retryable, naming the response) when the service no
// longer knows previous_response_id (chainLost), on which the workflow sends the
// primary history again as a new chain; other provider errors as providerError,
// prefixed with the previous response's id; a response that failed, by its error code
// (serviceFailure). A new state keeps the input state's lostResponseId, as a record.
func (m *models) invokeResponses(ctx context.Context, def agents.Definition, in wire.InvokeInput,
	history []chat.Message) (wire.InvokeResult, error) {
	var st wire.ResponsesThreadState
	if err := checkServiceInput(def, in, &st); err != nil {
		return wire.InvokeResult{}, err
	}
	store := true
	req := openai.CreateResponseRequest{
		Model: def.Model, Instructions: def.Instructions, PreviousResponseID: st.PreviousResponseID,
		Input: responsesInput(def.ID, unsynced(history, st.SyncedThrough)), Store: &store,
		Tools: responseTools(m.tools.offeredTools(def, in.Tools)),
	}
	if in.ToolChoice != "" && len(req.Tools) > 0 {
		req.ToolChoice = in.ToolChoice
	}
	where := wire.ChannelResponsesThread + ": new chain"
	if st.PreviousResponseID != "" {
		where = fmt.Sprintf("%s: previous response %q", wire.ChannelResponsesThread, st.PreviousResponseID)
	}
	call := &callInfo{agentID: def.ID, chatID: in.ChatID, reply: true, author: OpenAIName(def.Name)}
	ctx = withCall(ctx, call)
	stop := heartbeatWhileWaiting(ctx)
	resp, err := m.endpoints[def.Endpoint].CreateResponse(ctx, req)
	stop()
	if err != nil {
		if st.PreviousResponseID != "" && chainLost(err) {
			return wire.InvokeResult{}, threadLost(where, "response", err)
		}
		return wire.InvokeResult{}, serviceError(ctx, err, call.retryAfter, where)
	}
	contents, err := responseContents(resp)
	if err != nil {
		return wire.InvokeResult{}, err
	}
	state, err := json.Marshal(wire.ResponsesThreadState{PreviousResponseID: resp.ID, SyncedThrough: in.ReplyID,
		LostResponseID: st.LostResponseID})
	if err != nil {
		return wire.InvokeResult{}, err
	}
	return wire.InvokeResult{Contents: contents, Model: resp.Model, ChannelState: state,
		Usage: responseUsage(resp.Model, resp.Usage)}, nil
}

// chainLost reports whether err is the service's answer to a previous_response_id it
// does not know: a 404 (notFound), or OpenAI's previous_response_not_found code (which
// it may send with a 400) on the previous_response_id parameter.
func chainLost(err error) bool {
	if notFound(err) {
		return true
	}
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusBadRequest {
		return false
	}
	return apiErr.Code == "previous_response_not_found" || apiErr.Param != nil && *apiErr.Param == "previous_response_id"
}

// checkServiceInput decodes the channel state of a service-thread call into st and
// checks that the call names its reply (the channel's next watermark).
func checkServiceInput(def agents.Definition, in wire.InvokeInput, st any) error {
	if err := wire.DecodeChannelState(in.ChannelState, st); err != nil {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("agent %q (kind %s): %v", def.ID, def.Kind, err), wire.ErrTypeInvalidInput, nil)
	}
	if in.ReplyID == "" {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("agent %q (kind %s): replyId is required: it becomes the channel's watermark", def.ID, def.Kind),
			wire.ErrTypeInvalidInput, nil)
	}
	return nil
}

// unsynced is the part of history the service has not seen: the messages after the one
// whose id is syncedThrough when history holds it (a caller that sent more than
// needed), else all of history.
func unsynced(history []chat.Message, syncedThrough string) []chat.Message {
	if syncedThrough == "" {
		return history
	}
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].MessageID == syncedThrough {
			return history[i+1:]
		}
	}
	return history
}

// fromOtherAgent reports whether m is an assistant message another agent (not agentID)
// wrote, which the service must not take for the agent's own words.
func fromOtherAgent(agentID string, m chat.Message) bool {
	return m.Role == chat.RoleAssistant && m.AgentID != agentID
}

// attributed is m's text, prefixed with "<author>: " when another agent wrote it. The
// author is its authorName, else its agentId; with neither, the text is left as it is.
func attributed(agentID string, m chat.Message) string {
	text := m.Text()
	if text == "" || !fromOtherAgent(agentID, m) {
		return text
	}
	author := m.AuthorName
	if author == "" {
		author = m.AgentID
	}
	if author == "" {
		return text
	}
	return author + ": " + text
}

// responsesInput maps primary messages to Responses input items, for agent agentID:
//   - user and system messages: {"type":"message","role":…,"content":text}, or with
//     images a list of input_text and input_image parts;
//   - assistant messages: {"type":"message","role":"assistant","content":text}, the
//     text of another agent's message prefixed with "<AuthorName>: " (the Responses API
//     has no author field, and takes assistant-role input as the model's own earlier
//     output; the prefix tells the model who said it), then a function_call item per
//     functionCall content;
//   - tool messages: a function_call_output item per functionResult ("error: …" for an
//     error result).
//
// Messages with nothing the API can take (unknown content types only) are left out;
// they stay in the history. The result is never nil, so "input" is [] rather than null
// when nothing is new.
func responsesInput(agentID string, msgs []chat.Message) []any {
	items := []any{}
	for _, m := range msgs {
		switch m.Role {
		case chat.RoleTool:
			for _, c := range m.Contents {
				if c.Type == chat.ContentFunctionResult {
					items = append(items, openai.ResponseFunctionCallOutput{Type: "function_call_output",
						CallID: wireCallID(c.CallID), Output: toolResultText(c)})
				}
			}
		case chat.RoleAssistant:
			if text := attributed(agentID, m); text != "" {
				items = append(items, openai.ResponseInputMessage{Type: "message", Role: openai.ChatMessageRoleAssistant, Content: text})
			}
			for _, c := range m.FunctionCalls() {
				items = append(items, openai.ResponseOutputItem{Type: "function_call", CallID: wireCallID(c.CallID),
					Name: c.Name, Arguments: c.Arguments})
			}
		default: // user, system
			if content := responsesContent(m); content != nil {
				items = append(items, openai.ResponseInputMessage{Type: "message", Role: string(m.Role), Content: content})
			}
		}
	}
	return items
}

// responsesContent is a user or system message's content: its text, or text and
// image parts when it has an image; nil when it has neither.
func responsesContent(m chat.Message) any {
	if !hasImage(m) {
		if text := m.Text(); text != "" {
			return text
		}
		return nil
	}
	var parts []any
	for _, c := range m.Contents {
		switch c.Type {
		case chat.ContentText:
			parts = append(parts, openai.ResponseInputText{Type: "input_text", Text: c.Text})
		case chat.ContentImage:
			parts = append(parts, openai.ResponseInputImage{Type: "input_image", ImageURL: imageURL(c)})
		}
	}
	return parts
}

// responseTools turns Chat Completions function tools into the Responses API's form.
func responseTools(tools []openai.Tool) []openai.ResponseTool {
	var out []openai.ResponseTool
	for _, t := range tools {
		if t.Function != nil {
			out = append(out, openai.NewResponseFunctionTool(*t.Function))
		}
	}
	return out
}

// responseContents is a response's reply: the text of its output messages
// (output_text, and refusals), then its function calls. A failed response is an error
// by its code; an incomplete one is a reply if it has any content.
func responseContents(resp openai.CreateResponseResponse) ([]chat.Content, error) {
	where := fmt.Sprintf("%s: response %q", wire.ChannelResponsesThread, resp.ID)
	switch resp.Status {
	case openai.ResponseStatusFailed:
		code, msg := "", "no error given"
		if resp.Error != nil {
			code, msg = resp.Error.Code, resp.Error.Message
		}
		return nil, serviceFailure(where, code, msg)
	case openai.ResponseStatusQueued, openai.ResponseStatusInProgress, openai.ResponseStatusCancelled,
		openai.ResponseStatusCancelling:
		return nil, temporal.NewApplicationError(fmt.Sprintf("%s is %s, not completed", where, resp.Status),
			wire.ErrTypeModelUnavailable)
	}
	var (
		text  strings.Builder
		calls []openai.ToolCall
	)
	for _, raw := range resp.Output {
		item, err := outputItem(raw)
		if err != nil {
			return nil, temporal.NewApplicationError(fmt.Sprintf("%s: unreadable output item: %v", where, err),
				wire.ErrTypeModelUnavailable)
		}
		switch item.Type {
		case "message":
			for _, c := range item.Content {
				switch c.Type {
				case "output_text":
					text.WriteString(c.Text)
				case "refusal":
					text.WriteString(c.Refusal)
				}
			}
		case "function_call":
			calls = append(calls, openai.ToolCall{ID: item.CallID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: item.Name, Arguments: item.Arguments}})
		}
	}
	contents := replyContents(text.String(), calls)
	if len(contents) == 0 && resp.Status == openai.ResponseStatusIncomplete {
		reason := "no reason given"
		if resp.IncompleteDetails != nil && resp.IncompleteDetails.Reason != "" {
			reason = resp.IncompleteDetails.Reason
		}
		return nil, temporal.NewApplicationError(fmt.Sprintf("%s is incomplete (%s) and has no content", where, reason),
			wire.ErrTypeModelUnavailable)
	}
	return contents, nil
}

// outputItem decodes one element of a response's output (go-openai keeps them as any).
func outputItem(raw any) (openai.ResponseOutputItem, error) {
	var item openai.ResponseOutputItem
	b, err := json.Marshal(raw)
	if err == nil {
		err = json.Unmarshal(b, &item)
	}
	return item, err
}

// serviceError is providerError with where (the service object the call was about,
// e.g. `assistant_thread: thread "thread_…"`) in front of its message, so an error
// about an unknown thread or response names it whatever the provider's text says.
func serviceError(ctx context.Context, err error, retryAfter time.Duration, where string) error {
	perr := providerError(ctx, err, retryAfter)
	var app *temporal.ApplicationError
	if !errors.As(perr, &app) {
		return perr // the activity's own deadline or cancellation
	}
	return temporal.NewApplicationErrorWithOptions(where+": "+app.Message(), app.Type(), temporal.ApplicationErrorOptions{
		NonRetryable: app.NonRetryable(), NextRetryDelay: app.NextRetryDelay()})
}

// serviceFailure is the error of a response or run that the service reports as failed
// with an error code (OpenAI API reference: a response's error, a run's last_error).
// The code is classified like an HTTP status by providerError's rule:
// rate_limit_exceeded as 429, server_error, vector_store_timeout and a missing code as
// 500 (all retryable, ModelUnavailable); any other code (invalid_prompt, invalid_image,
// …) as 400 (not retryable, ModelRequestRejected).
func serviceFailure(where, code, message string) error {
	status := 400
	switch code {
	case string(openai.RunErrorRateLimitExceeded):
		status = 429
	case string(openai.RunErrorServerError), "vector_store_timeout", "":
		status = 500
	}
	text := fmt.Sprintf("%s failed", where)
	if code != "" {
		text += " (" + code + ")"
	}
	text += ": " + message
	if !retryableStatus(status) {
		return temporal.NewNonRetryableApplicationError(text, wire.ErrTypeModelRejected, nil)
	}
	return temporal.NewApplicationError(text, wire.ErrTypeModelUnavailable)
}
