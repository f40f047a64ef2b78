package activities

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/strategies"
)

// requestSeeds is how many generated histories the property tests try; -request.seeds
// tries more.
var requestSeeds = flag.Int("request.seeds", 300, "generated histories per model-request property test")

// genHistory is a seeded history as chats make and import them, at a point where a
// model call is made: system messages between turns (imported ones too), user
// messages, agent replies with text, with parallel tool calls, or with both; the
// results of one reply's calls in one tool message or split over several (a call that
// waited for approval is answered in a tool message of its own, after the others); in
// a group chat, replies of other agents. It ends where a model call happens: after a
// user message, after the results of a tool round, or after another agent's reply.
func genHistory(rng *rand.Rand) []chat.Message {
	var h []chat.Message
	n, calls := 0, 0
	id := func() string { n++; return fmt.Sprintf("m%d", n) }
	authors := []string{"Clerk", "Tea Shop Writer", "Réviseur", ""}
	reply := func() {
		author := authors[rng.IntN(len(authors))]
		m := chat.Message{MessageID: id(), Role: chat.RoleAssistant, AuthorName: author, AgentID: "a"}
		if rng.IntN(2) == 0 {
			m.Contents = append(m.Contents, chat.Text("a reply"))
		}
		var ids []string
		if rng.IntN(2) == 0 {
			for range 1 + rng.IntN(3) {
				calls++
				cid := fmt.Sprintf("c%d", calls)
				ids = append(ids, cid)
				m.Contents = append(m.Contents, chat.Content{Type: chat.ContentFunctionCall, CallID: cid, Name: "lookup", Arguments: "{}"})
			}
		}
		if len(m.Contents) == 0 {
			m.Contents = []chat.Content{chat.Text("a reply")}
		}
		h = append(h, m)
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		for len(ids) > 0 { // one tool message per group of results; a split is an approval
			k := 1 + rng.IntN(len(ids))
			t := chat.Message{MessageID: id(), Role: chat.RoleTool, AuthorName: "tools"}
			for _, cid := range ids[:k] {
				t.Contents = append(t.Contents, chat.Content{Type: chat.ContentFunctionResult, CallID: cid, Result: "42"})
			}
			h = append(h, t)
			ids = ids[k:]
		}
	}
	for range 1 + rng.IntN(12) {
		for range rng.IntN(3) / 2 * (1 + rng.IntN(3)) {
			h = append(h, chat.TextMessage(id(), chat.RoleSystem, "", "an imported system message"))
		}
		h = append(h, chat.TextMessage(id(), chat.RoleUser, "Ada Lovelace", "a question"))
		for range rng.IntN(4) {
			reply()
		}
	}
	return h
}

// reducers is every reducer setting a chat_history agent can have, and the selector's
// and judge's window.
func reducers() []strategies.Reducer {
	out := []strategies.Reducer{{}, {Type: strategies.ReducerNone}, {Type: strategies.ReducerTruncate, MaxMessages: 30}}
	for max := 2; max <= 9; max++ {
		out = append(out, strategies.Reducer{Type: strategies.ReducerTruncate, MaxMessages: max})
		for keep := 0; keep < max; keep += 2 {
			out = append(out, strategies.Reducer{Type: strategies.ReducerSummarize, MaxMessages: max, Keep: keep})
		}
	}
	return out
}

// Every model request a chat_history agent's reducer makes, and every summary request
// of a summarizing one, passes OpenAI's rules (offline.Validate), and the Responses
// input of the same history is answered 200 by the strict offline server, for generated
// histories with system messages, parallel calls and approvals, at every reducer
// setting. Fault 6: truncate sent a tool result without its call when system messages
// left room for one message, and when an approval split one reply's results.
func TestEveryReducerMakesValidRequests(t *testing.T) {
	model := offline.New(offline.Options{})
	for seed := range uint64(*requestSeeds) {
		rng := rand.New(rand.NewPCG(seed, 6))
		h := genHistory(rng)
		// A responses agent sends the history as input items (here all of it at once).
		body, _ := json.Marshal(map[string]any{"model": "m", "input": responsesInput("a", h)})
		rec := httptest.NewRecorder()
		model.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/responses", bytes.NewReader(body)))
		if rec.Code != http.StatusOK {
			t.Fatalf("seed %d: Responses answered %d: %s\nhistory:\n%s", seed, rec.Code, rec.Body, describe(h))
		}
		for _, r := range reducers() {
			var state json.RawMessage
			if from, to, due := r.ToSummarize(h, nil); due {
				summary := chatMessages("Summarize.", h[from:to])
				if err := offline.Validate(openaiRequest(summary)); err != nil {
					t.Fatalf("seed %d, reducer %+v: the summary request of history[%d:%d] is invalid: %v\n%s", seed, r, from, to, err, describe(h))
				}
				state, _ = json.Marshal(strategies.SummaryState{Summary: "earlier", SummarizedThrough: h[to-1].MessageID})
			}
			view := r.ReduceWith(h, state)
			if err := offline.Validate(openaiRequest(chatMessages("Be brief.", view))); err != nil {
				t.Fatalf("seed %d, reducer %+v: %v\nhistory:\n%s\nsent:\n%s", seed, r, err, describe(h), describe(view))
			}
		}
	}
}

// openaiRequest is a Chat Completions request with messages.
func openaiRequest(messages []openai.ChatCompletionMessage) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Model: offline.ModelID, Messages: messages}
}

// describe lists msgs one a line: id, role, and what each content is.
func describe(msgs []chat.Message) string {
	var out string
	for i, m := range msgs {
		out += fmt.Sprintf("  [%d] %s %s:", i, m.MessageID, m.Role)
		for _, c := range m.Contents {
			out += " " + c.Type
			if c.CallID != "" {
				out += "(" + c.CallID + ")"
			}
		}
		out += "\n"
	}
	return out
}
