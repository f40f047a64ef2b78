package systest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// checkModelRequests returns what is wrong with the model requests of a round: every
// request the project builds must be valid by OpenAI's rules.
//
// LEAD: once the strict offline model (offline.Server's validator and its record of
// refused requests) is merged, wire this function to that record, so that the rules
// are stated once, in the offline model. Until then it checks from the outside:
//   - the model refused no request except by the script (a 400, 404 or 422, or a 403
//     other than the script's Refusal, is the model saying the request broke a rule);
//   - the interim checks of chatCompletionRules, run by the recorder on each full
//     Chat Completions body (ModelRequest.Problems).
func checkModelRequests(reqs []ModelRequest) []string {
	var out []string
	for _, q := range reqs {
		where := fmt.Sprintf("%s %s (agent %s, chat %s)", q.Method, q.Path, q.Agent, q.Chat)
		switch {
		case q.Status == http.StatusForbidden && strings.Contains(q.ErrorBody, Refusal):
		case q.Status >= 400 && q.Status < 500 && q.Status != http.StatusRequestTimeout && q.Status != http.StatusTooManyRequests:
			out = append(out, fmt.Sprintf("%s refused with %d: %s", where, q.Status, firstLine(q.ErrorBody)))
		}
		for _, p := range q.Problems {
			out = append(out, fmt.Sprintf("%s: %s", where, p))
		}
	}
	return out
}

// namePattern is OpenAI's rule for a message's name.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// chatCompletionRules checks a Chat Completions request body against OpenAI's rules on
// the conversation: known roles; an assistant message has content or tool calls; a
// tool message answers a call of the assistant message before it; every call is
// answered before the next non-tool message; names match namePattern. It returns the
// problems found (nil for a valid body, or a body that is not JSON: the model itself
// answers that).
func chatCompletionRules(body []byte) []string {
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			Name       string          `json:"name"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var out []string
	open := map[string]bool{}
	for i, m := range req.Messages {
		if m.Role != "tool" && len(open) > 0 {
			out = append(out, fmt.Sprintf("messages[%d] (%s) comes before the results of tool calls %v", i, m.Role, keys(open)))
			open = map[string]bool{}
		}
		if m.Name != "" && !namePattern.MatchString(m.Name) {
			out = append(out, fmt.Sprintf("messages[%d].name %q does not match %s", i, m.Name, namePattern))
		}
		switch m.Role {
		case "system", "developer", "user":
		case "assistant":
			if emptyContent(m.Content) && len(m.ToolCalls) == 0 {
				out = append(out, fmt.Sprintf("messages[%d]: an assistant message with neither content nor tool_calls", i))
			}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case "tool":
			if !open[m.ToolCallID] {
				out = append(out, fmt.Sprintf("messages[%d]: tool message for %q, which the preceding assistant message did not call (or was answered)", i, m.ToolCallID))
			}
			delete(open, m.ToolCallID)
		default:
			out = append(out, fmt.Sprintf("messages[%d].role %q is unknown", i, m.Role))
		}
	}
	if len(open) > 0 {
		out = append(out, fmt.Sprintf("the request ends with tool calls %v unanswered", keys(open)))
	}
	return out
}

func emptyContent(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null" || s == `""` || s == "[]"
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
