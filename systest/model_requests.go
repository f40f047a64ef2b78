package systest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentchat/agentchat/offline"
)

// checkModelRequests returns what is wrong with the model requests of a round: every
// request the project builds must be valid by OpenAI's rules. The rules are stated once,
// in the strict offline model (offline.Validate, and its record of refused requests,
// which Runner.checkModel reads too); here:
//   - the model refused no request except by the script (a 400, 404 or 422, or a 403
//     other than the script's Refusal, is the model saying the request broke a rule);
//   - offline.Validate, run by the recorder on each full Chat Completions body
//     (ModelRequest.Problems).
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

// chatCompletionRules checks a Chat Completions request body against OpenAI's rules with
// offline.Validate, and returns what it finds (nil for a valid body, or for a body that
// is not JSON: the model itself answers that).
func chatCompletionRules(body []byte) []string {
	var req openai.ChatCompletionRequest
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	if err := offline.Validate(req); err != nil {
		return []string{err.Error()}
	}
	return nil
}
