package integration_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
)

// rendezvous holds each caller until n distinct callers have arrived, or a timeout.
type rendezvous struct {
	mu   sync.Mutex
	seen map[string]bool
	n    int
	all  chan struct{}
}

func newRendezvous(n int) *rendezvous {
	return &rendezvous{seen: map[string]bool{}, n: n, all: make(chan struct{})}
}

// arrive reports whether all n callers arrived within 10s of this one.
func (r *rendezvous) arrive(ctx context.Context, who string) bool {
	r.mu.Lock()
	if !r.seen[who] {
		r.seen[who] = true
		if len(r.seen) == r.n {
			close(r.all)
		}
	}
	r.mu.Unlock()
	select {
	case <-r.all:
		return true
	case <-ctx.Done():
		return false
	case <-time.After(10 * time.Second):
		return false
	}
}

// Two tool calls of one model reply run at once, each as its own activity on a real
// worker, and their results go back paired by call id; a failing tool and arguments
// that are not JSON become error results, and the turn goes on.
func TestParallelToolCallsThroughAWorker(t *testing.T) {
	const config = `
tools:
  stock: {description: "How many of an item are in stock", parameters: {type: object, properties: {item: {type: string}}, required: [item]}}
  price: {description: "The price of an item", parameters: {type: object, properties: {item: {type: string}}}}
  ledger: {description: "Post an entry to the ledger"}
agents:
  - {id: clerk, name: Clerk, model: offline, instructions: "You run the shop.", tools: [stock, price, ledger], call: {initialInterval: 50ms, maxAttempts: 4}}
`
	both := newRendezvous(2)
	var calls counter
	item := func(args json.RawMessage) (string, error) {
		var in struct{ Item string }
		if err := json.Unmarshal(args, &in); err != nil {
			return "", activities.ToolError("arguments %s: %v", args, err)
		}
		return in.Item, nil
	}
	h := testenv.New(t, testenv.Options{Config: config,
		Tools: map[string]activities.ToolFunc{
			"stock": func(ctx context.Context, args json.RawMessage) (string, error) {
				calls.add("stock")
				if !both.arrive(ctx, "stock") {
					return "", activities.ToolError("stock ran alone: price never started while it waited")
				}
				it, err := item(args)
				return "3 " + it + "s in stock", err
			},
			"price": func(ctx context.Context, args json.RawMessage) (string, error) {
				calls.add("price")
				if !both.arrive(ctx, "price") {
					return "", activities.ToolError("price ran alone: stock never started while it waited")
				}
				it, err := item(args)
				return it + " costs $25", err
			},
			"ledger": func(context.Context, json.RawMessage) (string, error) {
				calls.add("ledger")
				return "", activities.ToolError("the ledger is closed on Sundays")
			},
		},
		Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": {
			{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "stock", Arguments: `{"item":"teapot"}`},
				{ID: "c2", Name: "price", Arguments: `{"item":"teapot"}`}}},
			{}, // the default reply, which lists the tool results it received
			{ToolCalls: []offline.ToolCall{{ID: "c3", Name: "ledger", Arguments: `{"entry":"sale"}`},
				{ID: "c4", Name: "stock", Arguments: `{"item":`}}},
			{},
		}}},
	})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)

	res := send(t, h, id, "t1", "Is the teapot in stock, and what does it cost?")
	require.Len(t, res.Messages, 3, "assistant (calls), tool (results), assistant (final)")
	callMsg, results, final := res.Messages[0], res.Messages[1], res.Messages[2]
	assert.Equal(t, []string{"t1/1", "t1/2", "t1/3"}, messageIDs(res.Messages))
	assert.Equal(t, chat.RoleAssistant, callMsg.Role)
	require.Len(t, callMsg.FunctionCalls(), 2)
	assert.Equal(t, "c1", callMsg.FunctionCalls()[0].CallID)
	assert.Equal(t, "c2", callMsg.FunctionCalls()[1].CallID)
	assert.Equal(t, chat.RoleTool, results.Role)
	assert.Equal(t, map[string]chat.Content{
		"c1": {Type: chat.ContentFunctionResult, CallID: "c1", Result: "3 teapots in stock"},
		"c2": {Type: chat.ContentFunctionResult, CallID: "c2", Result: "teapot costs $25"},
	}, contentsByCall(results), "both ran together (neither waited alone) and each result carries its call's id")
	assert.Equal(t, chat.RoleAssistant, final.Role)
	assert.Equal(t, `[offline] clerk received 5 messages. First user message: "Is the teapot in stock, and what does it cost?". `+
		`Last user message: "Is the teapot in stock, and what does it cost?". Tool results: c1=3 teapots in stock; c2=teapot costs $25.`, final.Text())
	req, ok := h.Model.LastRequest("clerk")
	require.True(t, ok)
	var offered []string
	for _, tool := range req.Tools {
		offered = append(offered, tool.Function.Name)
	}
	assert.Equal(t, []string{"stock", "price", "ledger"}, offered)

	res = send(t, h, id, "t2", "Book the sale")
	require.Len(t, res.Messages, 3)
	errs := contentsByCall(res.Messages[1])
	assert.Equal(t, "the ledger is closed on Sundays", errs["c3"].Error)
	assert.Equal(t, `the arguments are not a JSON object: {"item":`, errs["c4"].Error)
	assert.Empty(t, errs["c3"].Result)
	assert.Contains(t, res.Messages[2].Text(), `c3=error: the ledger is closed on Sundays; c4=error: the arguments are not a JSON object: {"item":.`,
		"the model read both errors and answered")
	assert.Equal(t, 1, calls.get("ledger"), "a ToolError is not retried")
	assert.Equal(t, 1, calls.get("stock"), "the call with broken arguments never ran")
	assert.Equal(t, 4, h.Model.Requests("clerk"))
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Nil(t, st.LastError, "no turn failed")
	assert.Equal(t, 2, st.TurnCount)
}
