package integration_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/tools"
	"github.com/agentchat/agentchat/workflows"
)

// Integration tests of the agent kinds, tools, approvals, strategies and reducers, on
// the real dev server with the offline model over HTTP.
//
// The offline model answers from the whole conversation it holds or receives, and says
// how many messages that was ("received N messages", counting the instructions as one
// system message). For the service-thread kinds (responses, assistant) it rebuilds the
// conversation from its own stored chain or thread, so N equals the number of primary
// messages before the reply plus one only if every message reached the service exactly
// once: a message sent twice makes N larger, a skipped one smaller.

// kindsConfig has one agent of each kind, each with instructions (the +1 in every count).
const kindsConfig = `
agents:
  - {id: writer, name: Writer, model: offline, instructions: "You write.", call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: analyst, name: Analyst, kind: responses, model: offline, instructions: "You analyse.", call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: archivist, name: Archivist, kind: assistant, model: offline, instructions: "You keep the records.", call: {initialInterval: 50ms, maxAttempts: 4}}
`

// seedTurns are the seed's three user turns.
var seedTurns = []struct{ id, text string }{
	{"m1", "Hello, how are you?"}, {"m2", "My name is Alice"}, {"m3", "What's my name?"},
}

// repliesByAgent returns the text of each agent's message in a turn's result.
func repliesByAgent(t *testing.T, res agentchat.TurnResult) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range res.Messages {
		require.NotContains(t, out, m.AgentID, "one reply per agent in this turn")
		out[m.AgentID] = m.Text()
	}
	return out
}

// channelOf returns the State channel of type typ.
func channelOf(t *testing.T, st agentchat.StateResult, typ string) workflows.ChannelInfo {
	t.Helper()
	for _, c := range st.Channels {
		if c.ChannelType == typ {
			return c
		}
	}
	require.FailNow(t, "no channel of type "+typ, "channels: %+v", st.Channels)
	return workflows.ChannelInfo{}
}

// docChannelOf returns the document's channel of type typ.
func docChannelOf(t *testing.T, doc chatstate.Document, typ string) chatstate.Channel {
	t.Helper()
	for _, c := range doc.Channels {
		if c.ChannelType == typ {
			return c
		}
	}
	require.FailNow(t, "no document channel of type "+typ, "channels: %+v", doc.Channels)
	return chatstate.Channel{}
}

// channelState returns the state of the chat's channel of type typ. State lists the
// channels (key, type, active) without their states; the ExportSnapshot query, the
// document without its history, holds them.
func channelState(t *testing.T, h *testenv.Harness, chatID, typ string) json.RawMessage {
	t.Helper()
	st, err := h.Client.State(ctxFor(t), chatID)
	require.NoError(t, err)
	return snapshotState(t, h, chatID, channelOf(t, st, typ).ChannelKey)
}

// snapshotState returns the state of the channel with key in the chat's ExportSnapshot.
func snapshotState(t *testing.T, h *testenv.Harness, chatID, key string) json.RawMessage {
	t.Helper()
	v, err := h.Temporal.QueryWorkflow(ctxFor(t), chatID, "", workflows.SnapshotQuery)
	require.NoError(t, err)
	var snap workflows.Snapshot
	require.NoError(t, v.Get(&snap))
	for _, c := range snap.Channels {
		if c.ChannelKey == key {
			return c.ChannelState
		}
	}
	require.FailNow(t, "no channel "+key+" in the snapshot", "channels: %+v", snap.Channels)
	return nil
}

func decodeState[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(raw, &v), "channel state %s", raw)
	return v
}

// responseInputs describes the input items of a Responses request as "role: text" for
// messages and "type call_id" for the others.
func responseInputs(t *testing.T, req openai.CreateResponseRequest) []string {
	t.Helper()
	items, ok := req.Input.([]any)
	require.True(t, ok, "input is a list of items: %#v", req.Input)
	var out []string
	for _, it := range items {
		m := it.(map[string]any)
		if m["type"] == "message" {
			out = append(out, fmt.Sprintf("%s: %v", m["role"], m["content"]))
		} else {
			out = append(out, fmt.Sprintf("%v %v", m["type"], m["call_id"]))
		}
	}
	return out
}

// storedResponse reads a response the offline model keeps (GET /v1/responses/{id}).
func storedResponse(t *testing.T, model *offline.Server, id string) openai.CreateResponseResponse {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxFor(t), http.MethodGet, model.URL()+"/responses/"+id, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "response %s is stored", id)
	var out openai.CreateResponseResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

// threadIDs lists a thread's messages as "role id", by the primary messageId each
// carries in its metadata.
func threadIDs(t *testing.T, model *offline.Server, threadID string) []string {
	t.Helper()
	msgs, ok := model.ThreadMessages(threadID)
	require.True(t, ok, "thread %s exists", threadID)
	var out []string
	for _, m := range msgs {
		out = append(out, fmt.Sprintf("%s %v", m.Role, m.Metadata[activities.MetaMessageID]))
	}
	return out
}

// A responses agent's thread: the service keeps the chain, each call sends only the
// new message, and the third reply quotes the second turn.
func TestResponsesAgentThread(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: kindsConfig})
	id := testenv.ChatID(t)
	st, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"analyst"}})
	require.NoError(t, err)
	assert.Equal(t, []workflows.ParticipantInfo{{ID: "analyst", Name: "Analyst", Type: agents.KindResponses}}, st.Participants)

	var replies []string
	var previous []string // previous_response_id of each call
	for _, turn := range seedTurns {
		res := send(t, h, id, turn.id, turn.text)
		require.Len(t, res.Messages, 1)
		replies = append(replies, res.Messages[0].Text())
		req, ok := h.Model.LastResponseRequest("analyst")
		require.True(t, ok)
		assert.Equal(t, []string{"user: " + turn.text}, responseInputs(t, req), "turn %s sends only its own message", turn.id)
		assert.Equal(t, "You analyse.", req.Instructions, "instructions go with every call")
		previous = append(previous, req.PreviousResponseID)
	}
	assert.Equal(t, `[offline] analyst received 2 messages. First user message: "Hello, how are you?". Last user message: "Hello, how are you?".`, replies[0])
	assert.Contains(t, replies[1], "received 4 messages")
	assert.Contains(t, replies[2], "received 6 messages", "instructions + the 5 messages of the chain, each once")
	assert.Contains(t, replies[2], `Your name is Alice: you said "My name is Alice"`)
	assert.Equal(t, 3, h.Model.Requests("analyst"))
	assert.Empty(t, previous[0], "the first call starts a chain")
	require.NotEmpty(t, previous[1])
	assert.Equal(t, previous[1], storedResponse(t, h.Model, previous[2]).PreviousResponseID, "one chain, each call on the one before")

	st, err = h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	ch := channelOf(t, st, agents.ChannelResponsesThread)
	assert.True(t, ch.Active)
	raw := snapshotState(t, h, id, ch.ChannelKey)
	state := decodeState[agents.ResponsesThreadState](t, raw)
	assert.Equal(t, "m3/1", state.SyncedThrough)
	assert.Equal(t, previous[2], storedResponse(t, h.Model, state.PreviousResponseID).PreviousResponseID,
		"the state names the third reply's response")

	doc, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	parsed, _, err := chatstate.Decode(doc)
	require.NoError(t, err)
	assert.JSONEq(t, string(raw), string(docChannelOf(t, parsed, agents.ChannelResponsesThread).ChannelState))
}

// An assistant agent's thread: the thread holds every primary message once, in order,
// and the third reply quotes the second turn.
func TestAssistantAgentThread(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: kindsConfig})
	id := testenv.ChatID(t)
	st, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"archivist"}})
	require.NoError(t, err)
	assert.Equal(t, []workflows.ParticipantInfo{{ID: "archivist", Name: "Archivist", Type: agents.KindAssistant}}, st.Participants)

	var replies []string
	for _, turn := range seedTurns {
		res := send(t, h, id, turn.id, turn.text)
		require.Len(t, res.Messages, 1)
		replies = append(replies, res.Messages[0].Text())
	}
	assert.Equal(t, `[offline] archivist received 2 messages. First user message: "Hello, how are you?". Last user message: "Hello, how are you?".`, replies[0])
	assert.Contains(t, replies[1], "received 4 messages")
	assert.Contains(t, replies[2], "received 6 messages", "instructions + the 5 messages of the thread, each once")
	assert.Contains(t, replies[2], `Your name is Alice: you said "My name is Alice"`)
	assert.Equal(t, 3, h.Model.Requests("archivist"), "one run a turn")

	st, err = h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	ch := channelOf(t, st, agents.ChannelAssistantThread)
	assert.True(t, ch.Active)
	raw := snapshotState(t, h, id, ch.ChannelKey)
	state := decodeState[agents.AssistantThreadState](t, raw)
	assert.Equal(t, "m3/1", state.SyncedThrough)
	require.NotEmpty(t, state.ThreadID)
	assert.Equal(t, []string{"user m1", "assistant m1/1", "user m2", "assistant m2/1", "user m3", "assistant m3/1"},
		threadIDs(t, h.Model, state.ThreadID), "one thread, every message once, in order")

	doc, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	parsed, _, err := chatstate.Decode(doc)
	require.NoError(t, err)
	assert.JSONEq(t, string(raw), string(docChannelOf(t, parsed, agents.ChannelAssistantThread).ChannelState))
}

// A group chat of all three kinds, exported, restored and continued: each service
// thread continues its chain, neither re-sending nor skipping a message. Restored with
// the writer only, the service channels wait dormant, and the analyst that joins later
// resumes its chain.
func TestMixedGroupChatExportedRestoredAndContinued(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: kindsConfig})
	src := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: src,
		Participants: []string{"writer", "analyst", "archivist"}})
	require.NoError(t, err)

	// Every agent sees each primary message before its reply once, plus its instructions.
	first := repliesByAgent(t, send(t, h, src, "t1", "Hello, how are you?"))
	assert.Contains(t, first["writer"], "received 2 messages")
	assert.Contains(t, first["analyst"], "received 3 messages")
	assert.Contains(t, first["archivist"], "received 4 messages")
	second := repliesByAgent(t, send(t, h, src, "t2", "My name is Alice"))
	assert.Contains(t, second["writer"], "received 6 messages")
	assert.Contains(t, second["analyst"], "received 7 messages")
	assert.Contains(t, second["archivist"], "received 8 messages")

	doc, _, err := h.Client.Export(ctxFor(t), src)
	require.NoError(t, err)
	parsed, _, err := chatstate.Decode(doc)
	require.NoError(t, err)
	assert.Equal(t, []chatstate.Participant{{ID: "writer", Name: "Writer", Type: "chat_completion"},
		{ID: "analyst", Name: "Analyst", Type: "responses"}, {ID: "archivist", Name: "Archivist", Type: "assistant"}}, parsed.Participants)
	require.Len(t, parsed.Channels, 3)
	local := docChannelOf(t, parsed, chat.ChannelChatHistory)
	assert.Equal(t, chat.ChannelKey(chat.ChannelChatHistory, "reducer=none"), local.ChannelKey)
	assert.JSONEq(t, `{}`, string(local.ChannelState))
	chain := decodeState[agents.ResponsesThreadState](t, docChannelOf(t, parsed, agents.ChannelResponsesThread).ChannelState)
	assert.Equal(t, "t2/2", chain.SyncedThrough)
	require.NotEmpty(t, chain.PreviousResponseID)
	thread := decodeState[agents.AssistantThreadState](t, docChannelOf(t, parsed, agents.ChannelAssistantThread).ChannelState)
	assert.Equal(t, "t2/3", thread.SyncedThrough)
	require.NotEmpty(t, thread.ThreadID)
	assert.Len(t, parsed.History, 8)

	t.Run("same participants", func(t *testing.T) {
		dst := testenv.ChatID(t)
		st, err := h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: dst, Document: doc})
		require.NoError(t, err)
		for _, c := range st.Channels {
			assert.True(t, c.Active, c.ChannelType)
		}
		analystCalls, archivistRuns := h.Model.Requests("analyst"), h.Model.Requests("archivist")
		third := repliesByAgent(t, send(t, h, dst, "t3", "What's my name?"))
		assert.Contains(t, third["writer"], "received 10 messages")
		assert.Contains(t, third["analyst"], "received 11 messages", "the chain's 7 + t2/3, t3, t3/1 + instructions")
		assert.Contains(t, third["archivist"], "received 12 messages", "the thread's 8 + t3, t3/1, t3/2 + instructions")
		for agent, text := range third {
			assert.Contains(t, text, `Your name is Alice: you said "My name is Alice"`, agent)
		}
		assert.Equal(t, analystCalls+1, h.Model.Requests("analyst"))
		assert.Equal(t, archivistRuns+1, h.Model.Requests("archivist"))

		req, ok := h.Model.LastResponseRequest("analyst")
		require.True(t, ok)
		assert.Equal(t, chain.PreviousResponseID, req.PreviousResponseID, "the restored chat continues the exported chain")
		assert.Len(t, responseInputs(t, req), 3, "only t2/3, t3 and t3/1 were new to the service")
		assert.Equal(t, []string{"user t1", "assistant t1/1", "assistant t1/2", "assistant t1/3",
			"user t2", "assistant t2/1", "assistant t2/2", "assistant t2/3",
			"user t3", "assistant t3/1", "assistant t3/2", "assistant t3/3"},
			threadIDs(t, h.Model, thread.ThreadID), "the exported thread, continued, every message once")
		assert.Equal(t, "t3/2", decodeState[agents.ResponsesThreadState](t, channelState(t, h, dst, agents.ChannelResponsesThread)).SyncedThrough)
		assert.Equal(t, agents.AssistantThreadState{ThreadID: thread.ThreadID, SyncedThrough: "t3/3"},
			decodeState[agents.AssistantThreadState](t, channelState(t, h, dst, agents.ChannelAssistantThread)))
	})

	t.Run("writer only, then the analyst rejoins", func(t *testing.T) {
		dst := testenv.ChatID(t)
		st, err := h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: dst, Document: doc, Participants: []string{"writer"}})
		require.NoError(t, err)
		require.Len(t, st.Channels, 3, "the service channels are kept")
		assert.True(t, channelOf(t, st, chat.ChannelChatHistory).Active)
		for _, typ := range []string{agents.ChannelResponsesThread, agents.ChannelAssistantThread} {
			c := channelOf(t, st, typ)
			assert.False(t, c.Active, typ)
			assert.JSONEq(t, string(docChannelOf(t, parsed, typ).ChannelState), string(snapshotState(t, h, dst, c.ChannelKey)),
				"%s keeps its state", typ)
		}
		analystCalls := h.Model.Requests("analyst")
		alone := send(t, h, dst, "t3", "What's my name?")
		require.Len(t, alone.Messages, 1)
		assert.Equal(t, "writer", alone.Messages[0].AgentID)
		assert.Contains(t, alone.Messages[0].Text(), "received 10 messages")
		assert.Equal(t, analystCalls, h.Model.Requests("analyst"), "a dormant channel's agent is not called")

		st, err = h.Client.AddParticipants(ctxFor(t), dst, "analyst")
		require.NoError(t, err)
		assert.True(t, channelOf(t, st, agents.ChannelResponsesThread).Active, "the analyst resumes its channel")
		assert.False(t, channelOf(t, st, agents.ChannelAssistantThread).Active)
		res := repliesByAgent(t, send(t, h, dst, "t4", "What did we talk about?"))
		assert.Contains(t, res["writer"], "received 12 messages")
		assert.Contains(t, res["analyst"], "received 13 messages", "the chain's 7 + the 5 messages since + instructions")
		assert.Contains(t, res["analyst"], `We talked about: "Hello, how are you?", "My name is Alice", "What's my name?".`)
		req, ok := h.Model.LastResponseRequest("analyst")
		require.True(t, ok)
		assert.Equal(t, chain.PreviousResponseID, req.PreviousResponseID, "the old chain, continued")
		assert.Len(t, responseInputs(t, req), 5, "t2/3, t3, t3/1, t4 and t4/1: nothing the chain had")
	})
}

// An export taken while a turn runs holds the chat at the turn's start: its history
// before the turn, the turn as pending, and the channel states of that moment, so that
// the restored chat answers the turn again without re-sending anything to a service.
func TestExportDuringATurnKeepsTheChannelsAtTheTurnStart(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: kindsConfig, Model: offline.Options{Scripts: map[string][]offline.Reply{
		"writer": {{}, {Delay: agents.Duration(3 * time.Second)}}, // slow in the second turn
	}}})
	src := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: src, Participants: []string{"analyst", "writer"}})
	require.NoError(t, err)
	send(t, h, src, "t1", "Hello, how are you?")

	done := make(chan error, 1)
	go func() {
		_, err := h.Client.Send(ctxFor(t), src, agentchat.SendMessageInput{MessageID: "t2", Text: "My name is Alice"})
		done <- err
	}()
	// The analyst has answered t2 (its chain now ends at t2/1); the writer is still thinking.
	require.Eventually(t, func() bool {
		hist, err := h.Client.History(ctxFor(t), src, agentchat.HistoryInput{})
		return err == nil && hist.Total == 5
	}, 20*time.Second, 20*time.Millisecond)
	b, _, err := h.Client.Export(ctxFor(t), src)
	require.NoError(t, err)
	require.NoError(t, <-done)
	doc, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	assert.Equal(t, []string{"t1", "t1/1", "t1/2"}, messageIDs(doc.History), "the history at the turn's start")
	assert.Equal(t, []string{"t2"}, messageIDs(doc.PendingTurns))
	chain := decodeState[agents.ResponsesThreadState](t, docChannelOf(t, doc, agents.ChannelResponsesThread).ChannelState)
	assert.Equal(t, "t1/1", chain.SyncedThrough, "the watermark is a message of the exported history")

	dst := testenv.ChatID(t)
	_, err = h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: dst, Document: b})
	require.NoError(t, err)
	var hist agentchat.HistoryResult
	require.Eventually(t, func() bool {
		hist, err = h.Client.History(ctxFor(t), dst, agentchat.HistoryInput{})
		return err == nil && hist.Total == 6
	}, 20*time.Second, 50*time.Millisecond, "the pending turn is answered in the restored chat")
	assert.Equal(t, []string{"t1", "t1/1", "t1/2", "t2", "t2/1", "t2/2"}, messageIDs(hist.Messages))
	assert.Contains(t, hist.Messages[4].Text(), "received 5 messages",
		"instructions + t1, t1/1 from the chain + t1/2, t2 sent now: nothing twice")
	req, ok := h.Model.LastResponseRequest("analyst")
	require.True(t, ok)
	assert.Equal(t, chain.PreviousResponseID, req.PreviousResponseID)
	assert.Len(t, responseInputs(t, req), 2)
}

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

// counter counts calls by name.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
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

func contentsByCall(m chat.Message) map[string]chat.Content {
	out := map[string]chat.Content{}
	for _, c := range m.Contents {
		out[c.CallID] = c
	}
	return out
}

// approve runs the Approve update and waits for its result.
func approve(t *testing.T, tc client.Client, chatID string, in workflows.ApproveInput) (agentchat.TurnResult, error) {
	t.Helper()
	ctx := ctxFor(t)
	handle, err := tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: chatID, UpdateName: workflows.ApproveUpdate,
		Args: []any{in}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return agentchat.TurnResult{}, err
	}
	var res agentchat.TurnResult
	err = handle.Get(ctx, &res)
	return res, err
}

// activityRuns counts the activities of a type in the chat's event history: scheduled,
// completed, and the attempts the completed ones took.
func activityRuns(t *testing.T, tc client.Client, chatID, activityType string) (scheduled, completed, attempts int) {
	t.Helper()
	ours := map[int64]bool{}
	it := tc.GetWorkflowHistory(ctxFor(t), chatID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == activityType {
				ours[ev.GetEventId()] = true
				scheduled++
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			if a := ev.GetActivityTaskStartedEventAttributes(); ours[a.GetScheduledEventId()] {
				attempts += int(a.GetAttempt())
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if ours[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()] {
				completed++
			}
		}
	}
	return scheduled, completed, attempts
}

const refundCall = `{"order":"1001"}`

// refundScript asks for a refund, then answers with the default reply (which lists the
// tool results it received).
var refundScript = []offline.Reply{{ToolCalls: []offline.ToolCall{{ID: "r1", Name: "refund", Arguments: refundCall}}}, {}}

// A refund that needs approval suspends the turn durably: the worker process is killed
// with SIGKILL while the chat waits, a new process takes over, and the Approve update
// resumes the turn there. The refund runs once and the model answers with its result.
func TestApprovalWaitsAcrossAWorkerCrash(t *testing.T) {
	model, err := offline.Start(offline.Options{Scripts: map[string][]offline.Reply{"clerk": refundScript}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = model.Close() })
	config := fmt.Sprintf(`
endpoints:
  local: {baseURL: %q}
tools:
  refund: {approval: true}
agents:
  - {id: clerk, name: Clerk, model: offline, endpoint: local, instructions: "You run the order desk.", tools: [refund], call: {initialInterval: 50ms, maxAttempts: 4}}
`, model.URL())
	tq := testenv.TaskQueue(t)
	opts := testenv.ProcessOptions{TaskQueue: tq, Config: config}
	first := testenv.StartWorkerProcess(t, opts)
	tc := testenv.Dial(t, "")
	c := agentchat.NewClient(tc, agentchat.ClientOptions{TaskQueue: tq})
	id := testenv.ChatID(t)
	_, err = c.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)

	res, err := c.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m1", Text: "Please refund order 1001"})
	require.NoError(t, err)
	waiting := []workflows.PendingApproval{{CallID: "r1", Tool: "refund", Arguments: refundCall, AgentID: "clerk", TurnID: "m1"}}
	assert.Equal(t, waiting, res.AwaitingApproval)
	require.Len(t, res.Messages, 1)
	assert.Equal(t, "r1", res.Messages[0].FunctionCalls()[0].CallID)
	st, err := c.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, waiting, st.PendingApprovals)

	first.Kill()
	killed := time.Now()
	testenv.StartWorkerProcess(t, opts)
	st, err = c.State(ctxFor(t), id) // the new process replays the chat from its history
	require.NoError(t, err)
	assert.Equal(t, waiting, st.PendingApprovals, "the suspension survived the crash")

	res, err = approve(t, tc, id, workflows.ApproveInput{CallID: "r1", Approved: true, By: "manager"})
	require.NoError(t, err)
	t.Logf("approved and answered %s after the kill", time.Since(killed).Round(time.Millisecond))
	require.Len(t, res.Messages, 2, "the tool result, then the model's reply")
	assert.Equal(t, map[string]chat.Content{"r1": {Type: chat.ContentFunctionResult, CallID: "r1", Result: "refunded $42.50 for order 1001"}},
		contentsByCall(res.Messages[0]))
	assert.Equal(t, `[offline] clerk received 4 messages. First user message: "Please refund order 1001". `+
		`Last user message: "Please refund order 1001". Tool results: r1=refunded $42.50 for order 1001.`, res.Messages[1].Text())
	assert.Empty(t, res.AwaitingApproval)

	hist, err := c.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"m1", "m1/1", "m1/2", "m1/3"}, messageIDs(hist.Messages))
	scheduled, completed, attempts := activityRuns(t, tc, id, workflows.CallToolActivity)
	assert.Equal(t, [3]int{1, 1, 1}, [3]int{scheduled, completed, attempts}, "the refund ran once, in one attempt")
	assert.Equal(t, 2, model.Requests("clerk"))
	st, err = c.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Empty(t, st.PendingApprovals)
}

// A rejected call is never run: the model reads "rejected by a person: <reason>" as
// the call's error result, and answers. The worker is restarted while the chat waits.
func TestRejectedApprovalReachesTheModel(t *testing.T) {
	var refunds counter
	h := testenv.New(t, testenv.Options{
		Config: `
tools:
  refund: {approval: true}
agents:
  - {id: clerk, name: Clerk, model: offline, instructions: "You run the order desk.", tools: [refund], call: {initialInterval: 50ms, maxAttempts: 4}}
`,
		Tools: map[string]activities.ToolFunc{"refund": func(ctx context.Context, args json.RawMessage) (string, error) {
			refunds.add("refund")
			return tools.Refund(ctx, args)
		}},
		Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": refundScript}},
	})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)
	res := send(t, h, id, "m1", "Please refund order 1001")
	require.Len(t, res.AwaitingApproval, 1)
	assert.Equal(t, "r1", res.AwaitingApproval[0].CallID)

	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m2", Text: "Hello?"})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, agents.ErrTypeAwaitingApproval, app.Type(), "no new turn while a call waits")
	assert.Contains(t, err.Error(), "r1")

	h.RestartWorkerCold(t)
	_, err = approve(t, h.Temporal, id, workflows.ApproveInput{CallID: "nope", Approved: true})
	require.Error(t, err, "only a call the chat waits for can be decided")
	assert.Contains(t, err.Error(), `waits for no approval of call "nope"`)

	res, err = approve(t, h.Temporal, id, workflows.ApproveInput{CallID: "r1", Approved: false,
		Reason: "refunds over $40 need a manager", By: "bob"})
	require.NoError(t, err)
	require.Len(t, res.Messages, 2)
	assert.Equal(t, "rejected by a person: refunds over $40 need a manager", contentsByCall(res.Messages[0])["r1"].Error)
	assert.Contains(t, res.Messages[1].Text(), "Tool results: r1=error: rejected by a person: refunds over $40 need a manager.")
	req, ok := h.Model.LastRequest("clerk")
	require.True(t, ok)
	last := req.Messages[len(req.Messages)-1]
	assert.Equal(t, openai.ChatMessageRoleTool, last.Role)
	assert.Equal(t, "r1", last.ToolCallID)
	assert.Equal(t, "error: rejected by a person: refunds over $40 need a manager", last.Content, "what the model received")
	assert.Zero(t, refunds.get("refund"), "a rejected refund never runs")

	after := send(t, h, id, "m2", "Thanks anyway")
	assert.Contains(t, after.Messages[0].Text(), `Last user message: "Thanks anyway"`, "the chat takes turns again")
}

// strategyConfig has two participants, a selector and a judge.
const strategyConfig = `
agents:
  - {id: writer, name: Writer, model: offline, call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: reviewer, name: Reviewer, model: offline, call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: moderator, name: Moderator, model: offline, instructions: "You moderate."}
  - {id: judge, name: Judge, model: offline, instructions: "You judge."}
`

// Each selection and termination strategy, against the offline model and Go functions
// on a real worker.
func TestSelectionAndTerminationStrategies(t *testing.T) {
	var judged counter
	var selections [][]agents.Candidate
	var selMu sync.Mutex
	h := testenv.New(t, testenv.Options{Config: strategyConfig,
		Selectors: map[string]activities.SelectFunc{
			// addressed picks the participant the last message names, other than its author.
			"addressed": func(_ context.Context, cs []agents.Candidate, history []chat.Message) (string, error) {
				selMu.Lock()
				selections = append(selections, cs)
				selMu.Unlock()
				last := history[len(history)-1]
				for _, c := range cs {
					if c.ID != last.AgentID && strings.Contains(last.Text(), c.ID+",") {
						return c.ID, nil
					}
				}
				return "", nil
			},
		},
		Judges: map[string]activities.JudgeFunc{
			// twoReplies: done once the current turn has two agent replies.
			"twoReplies": func(_ context.Context, history []chat.Message) (bool, error) {
				judged.add("twoReplies")
				n := 0
				for i := len(history) - 1; i >= 0 && history[i].Role != chat.RoleUser; i-- {
					n++
				}
				return n >= 2, nil
			},
			"always": func(context.Context, []chat.Message) (bool, error) {
				judged.add("always")
				return true, nil
			},
		},
	})
	script := func(scripts map[string][]offline.Reply) {
		for _, a := range []string{"writer", "reviewer", "moderator", "judge"} {
			h.Model.SetScript(a, scripts[a])
		}
	}
	start := func(t *testing.T, sel agentchat.SelectionStrategy, term agentchat.TerminationStrategy) string {
		id := testenv.ChatID(t)
		_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"writer", "reviewer"},
			Selection: sel, Termination: term})
		require.NoError(t, err)
		return id
	}
	speakers := func(res agentchat.TurnResult) []string {
		var out []string
		for _, m := range res.Messages {
			out = append(out, m.AgentID)
		}
		return out
	}

	t.Run("llm selection, then the sequential fallback", func(t *testing.T) {
		script(map[string][]offline.Reply{"moderator": {{Text: "reviewer"}, {Text: "the moon"}}})
		id := start(t, agentchat.SelectionStrategy{Type: agents.SelectionLLM, Agent: "moderator"},
			agentchat.TerminationStrategy{MaxIterations: 2})
		res := send(t, h, id, "t1", "A slogan for tea")
		assert.Equal(t, []string{"reviewer", "writer"}, speakers(res), "the moderator's pick, then the next in order")
		assert.Equal(t, 2, h.Model.Requests("moderator"))
		req, ok := h.Model.LastRequest("moderator")
		require.True(t, ok)
		assert.Contains(t, req.Messages[0].Content, "You moderate.")
		assert.Contains(t, req.Messages[0].Content, "The participants are: writer (Writer), reviewer (Reviewer).")
		assert.Equal(t, "[offline] reviewer received 1 messages. First user message: \"A slogan for tea\". Last user message: \"A slogan for tea\".",
			req.Messages[len(req.Messages)-1].Content, "the second pick read the reviewer's reply")
	})

	t.Run("function selection", func(t *testing.T) {
		script(map[string][]offline.Reply{"reviewer": {{Text: "writer, draft one"}}, "writer": {{Text: "reviewer, check this"}}})
		id := start(t, agentchat.SelectionStrategy{Type: agents.SelectionFunction, Function: "addressed"},
			agentchat.TerminationStrategy{MaxIterations: 3})
		res := send(t, h, id, "t1", "reviewer, what makes a good slogan?")
		assert.Equal(t, []string{"reviewer", "writer", "reviewer"}, speakers(res), "not the sequential order")
		selMu.Lock()
		defer selMu.Unlock()
		require.Len(t, selections, 3)
		assert.Equal(t, []agents.Candidate{{ID: "writer", Name: "Writer"}, {ID: "reviewer", Name: "Reviewer"}}, selections[0])
	})

	t.Run("selection fallback error", func(t *testing.T) {
		script(map[string][]offline.Reply{"moderator": {{Text: "the moon"}}})
		id := start(t, agentchat.SelectionStrategy{Type: agents.SelectionLLM, Agent: "moderator", Fallback: agents.FallbackError},
			agentchat.TerminationStrategy{})
		_, err := h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "t1", Text: "A slogan for tea"})
		var app *temporal.ApplicationError
		require.True(t, errors.As(err, &app), "%v", err)
		assert.Equal(t, agents.ErrTypeTurnFailed, app.Type())
		assert.Contains(t, err.Error(), `the selection strategy named no participant (it said "[offline] moderator: the moon"; participants: [writer reviewer])`)
		assert.Zero(t, h.Model.Requests("writer")+h.Model.Requests("reviewer"), "nobody spoke")
		st, err := h.Client.State(ctxFor(t), id)
		require.NoError(t, err)
		assert.Zero(t, st.MessageCount, "the failed turn left nothing")
		require.NotNil(t, st.LastError)
		assert.Equal(t, "(selection)", st.LastError.AgentID)
	})

	t.Run("llm termination", func(t *testing.T) {
		script(map[string][]offline.Reply{"judge": {{Text: "no"}, {Text: "yes"}}})
		id := start(t, agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{Type: agents.TerminationLLM, Agent: "judge", MaxIterations: 10})
		res := send(t, h, id, "t1", "A slogan for tea")
		assert.Equal(t, []string{"writer", "reviewer"}, speakers(res), "the judge said no, then yes")
		assert.True(t, res.IsComplete)
		assert.Equal(t, 2, h.Model.Requests("judge"))
		req, ok := h.Model.LastRequest("judge")
		require.True(t, ok)
		assert.Contains(t, req.Messages[0].Content, "You judge.")
		assert.Contains(t, req.Messages[0].Content, "Reply yes or no")
		require.Eventually(t, func() bool {
			return workflowStatus(t, h, id) == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
		}, 10*time.Second, 50*time.Millisecond, "a complete chat without autoReset closes")
	})

	t.Run("function termination", func(t *testing.T) {
		script(nil)
		before := judged.get("twoReplies")
		id := start(t, agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{Type: agents.TerminationFunction, Function: "twoReplies", MaxIterations: 10})
		res := send(t, h, id, "t1", "A slogan for tea")
		assert.Equal(t, []string{"writer", "reviewer"}, speakers(res))
		assert.True(t, res.IsComplete)
		assert.Equal(t, 2, judged.get("twoReplies")-before, "asked after each reply")
	})

	t.Run("any: the regex completes before the judge agrees", func(t *testing.T) {
		script(map[string][]offline.Reply{"reviewer": {{Text: "APPROVED"}}, "judge": {{Text: "no"}, {Text: "no"}}})
		id := start(t, agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{Type: agents.TerminationAny, MaxIterations: 10,
			Strategies: []agents.TerminationStrategy{
				{Type: agents.TerminationRegex, Pattern: `\bAPPROVED\b`, Agents: []string{"reviewer"}},
				{Type: agents.TerminationLLM, Agent: "judge"},
			}})
		res := send(t, h, id, "t1", "A slogan for tea")
		assert.Equal(t, []string{"writer", "reviewer"}, speakers(res))
		assert.True(t, res.IsComplete)
		assert.Equal(t, 1, h.Model.Requests("judge"), "asked after the writer; the regex decided after the reviewer")
	})

	t.Run("all: both parts must agree", func(t *testing.T) {
		script(map[string][]offline.Reply{"reviewer": {{Text: "needs work"}, {Text: "APPROVED"}}})
		before := judged.get("always")
		id := start(t, agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{Type: agents.TerminationAll, MaxIterations: 10,
			Strategies: []agents.TerminationStrategy{
				{Type: agents.TerminationRegex, Pattern: `\bAPPROVED\b`, Agents: []string{"reviewer"}},
				{Type: agents.TerminationFunction, Function: "always"},
			}})
		res := send(t, h, id, "t1", "A slogan for tea")
		assert.Equal(t, []string{"writer", "reviewer", "writer", "reviewer"}, speakers(res), "the function always agrees; the regex decides")
		assert.True(t, res.IsComplete)
		assert.Equal(t, 1, judged.get("always")-before, "asked only once the regex matched")
	})

	t.Run("all: the judge says no", func(t *testing.T) {
		script(map[string][]offline.Reply{"reviewer": {{Text: "APPROVED"}, {Text: "APPROVED"}}, "judge": {{Text: "no"}, {Text: "yes"}}})
		id := start(t, agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{Type: agents.TerminationAll, MaxIterations: 10,
			Strategies: []agents.TerminationStrategy{
				{Type: agents.TerminationRegex, Pattern: `\bAPPROVED\b`, Agents: []string{"reviewer"}},
				{Type: agents.TerminationLLM, Agent: "judge"},
			}})
		res := send(t, h, id, "t1", "A slogan for tea")
		assert.Equal(t, []string{"writer", "reviewer", "writer", "reviewer"}, speakers(res), "APPROVED and no, then APPROVED and yes")
		assert.True(t, res.IsComplete)
		assert.Equal(t, 2, h.Model.Requests("judge"))
	})

	t.Run("autoReset", func(t *testing.T) {
		script(map[string][]offline.Reply{"reviewer": {{Text: "APPROVED"}}})
		id := start(t, agentchat.SelectionStrategy{}, agentchat.TerminationStrategy{Type: agents.TerminationRegex,
			Pattern: `\bAPPROVED\b`, MaxIterations: 2, AutoReset: true})
		first := send(t, h, id, "t1", "A slogan for tea")
		assert.True(t, first.IsComplete)
		st, err := h.Client.State(ctxFor(t), id)
		require.NoError(t, err)
		assert.True(t, st.IsComplete)
		assert.Equal(t, workflows.StatusRunning, st.Status, "the chat stays open")
		assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, workflowStatus(t, h, id))

		second := send(t, h, id, "t2", "Another one")
		assert.Equal(t, []string{"writer", "reviewer"}, speakers(second))
		assert.False(t, second.IsComplete, "the next turn reset isComplete and nothing matched")
		st, err = h.Client.State(ctxFor(t), id)
		require.NoError(t, err)
		assert.False(t, st.IsComplete)
		assert.Equal(t, 2, st.TurnCount)
	})
}

// reducerConfig has a truncating agent with a tool and a summarizing agent.
const reducerConfig = `
tools:
  clock: {description: "The time now, in UTC"}
agents:
  - {id: trunc, name: Trunc, model: offline, instructions: "Answer in one line.", tools: [clock], reducer: {type: truncate, maxMessages: 3}}
  - {id: scribe, name: Scribe, model: offline, reducer: {type: summarize, maxMessages: 4, keep: 2}}
`

// roles lists the roles of a request's messages.
func roles(req openai.ChatCompletionRequest) []string {
	var out []string
	for _, m := range req.Messages {
		out = append(out, m.Role)
	}
	return out
}

// assertNoOrphanResults checks that every tool message of a request follows the
// assistant message that made its call, as OpenAI requires.
func assertNoOrphanResults(t *testing.T, req openai.ChatCompletionRequest) {
	t.Helper()
	calls := map[string]bool{}
	for i, m := range req.Messages {
		for _, c := range m.ToolCalls {
			calls[c.ID] = true
		}
		if m.Role == openai.ChatMessageRoleTool {
			assert.True(t, calls[m.ToolCallID], "message %d is the result of call %s, which the request does not hold: %v", i, m.ToolCallID, roles(req))
		}
	}
}

func TestTruncateNeverStartsWithAToolResult(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: reducerConfig})

	t.Run("history with a system message", func(t *testing.T) {
		// [system, user A, assistant call c1, tool result c1], restored from a document.
		empty := testenv.ChatID(t) + "-empty"
		_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: empty, Participants: []string{"trunc"}})
		require.NoError(t, err)
		b, _, err := h.Client.Export(ctxFor(t), empty)
		require.NoError(t, err)
		doc, _, err := chatstate.Decode(b)
		require.NoError(t, err)
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		doc.History = []chat.Message{
			{MessageID: "s0", Role: chat.RoleSystem, CreatedAt: at, Contents: []chat.Content{chat.Text("Times are in UTC.")}},
			{MessageID: "a", Role: chat.RoleUser, AuthorName: "Alice", CreatedAt: at, Contents: []chat.Content{chat.Text("What time is it?")}},
			{MessageID: "a/1", Role: chat.RoleAssistant, AuthorName: "Trunc", AgentID: "trunc", CreatedAt: at,
				Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: "c1", Name: "clock", Arguments: "{}"}}},
			{MessageID: "a/2", Role: chat.RoleTool, AuthorName: "tools", AgentID: "trunc", CreatedAt: at,
				Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: "c1", Result: "2026-01-02T03:04:05Z"}}},
		}
		b, _, err = chatstate.Encode(doc)
		require.NoError(t, err)
		id := testenv.ChatID(t)
		_, err = h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: id, Document: b})
		require.NoError(t, err)

		h.Model.SetScript("trunc", []offline.Reply{{Text: "done"}})
		res := send(t, h, id, "b", "And the date?")
		assert.Equal(t, "[offline] trunc: done", res.Messages[0].Text())
		req, ok := h.Model.LastRequest("trunc")
		require.True(t, ok)
		// The latest 2 besides the system message would start at the result of c1, whose
		// call was cut off: the cut moves past it.
		assert.Equal(t, []string{"system", "system", "user"}, roles(req))
		assert.Equal(t, "Times are in UTC.", req.Messages[1].Content)
		assert.Equal(t, "And the date?", req.Messages[2].Content)
		assertNoOrphanResults(t, req)

		// The history is now [system, A, call c1, result c1, B, "done"].
		res = send(t, h, id, "c", "Thanks")
		req, _ = h.Model.LastRequest("trunc")
		assert.Equal(t, []string{"system", "system", "assistant", "user"}, roles(req))
		assert.Contains(t, res.Messages[0].Text(), "received 4 messages")
		assertNoOrphanResults(t, req)
	})

	t.Run("a live tool round", func(t *testing.T) {
		h.Model.SetScript("trunc", []offline.Reply{
			{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "clock", Arguments: "{}"}}}, {Text: "checked"}, {Text: "done"}})
		id := testenv.ChatID(t)
		_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"trunc"}})
		require.NoError(t, err)
		first := send(t, h, id, "a", "What time is it?")
		require.Len(t, first.Messages, 3)
		req, _ := h.Model.LastRequest("trunc")
		assert.Equal(t, []string{"system", "user", "assistant", "tool"}, roles(req), "3 messages fit whole")

		// [A, call c1, result c1, "checked", B]: the latest 3 would start at the result.
		// The agent is sent one of its replies ("checked"), so its script is at 1.
		h.Model.SetScript("trunc", []offline.Reply{{}, {Text: "done"}})
		res := send(t, h, id, "b", "And the date?")
		assert.Equal(t, "[offline] trunc: done", res.Messages[0].Text())
		req, _ = h.Model.LastRequest("trunc")
		assert.Equal(t, []string{"system", "assistant", "user"}, roles(req))
		assert.Equal(t, "[offline] trunc: checked", req.Messages[1].Content)
		assertNoOrphanResults(t, req)
	})
}

func TestSummarizeKeepsASummaryInTheChannel(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: reducerConfig})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"scribe"}})
	require.NoError(t, err)
	lastRequest := func() openai.ChatCompletionRequest {
		req, ok := h.Model.LastRequest("scribe")
		require.True(t, ok)
		return req
	}
	summary := func() agents.SummaryState {
		return decodeState[agents.SummaryState](t, channelState(t, h, id, chat.ChannelChatHistory))
	}

	send(t, h, id, "m1", "Hello, how are you?")
	send(t, h, id, "m2", "My name is Alice")
	assert.Equal(t, []string{"user", "assistant", "user"}, roles(lastRequest()), "4 messages or fewer: no summary yet")
	assert.Equal(t, agents.SummaryState{}, summary())
	assert.Equal(t, 2, h.Model.Requests("scribe"))

	// 5 messages: m1, m1/1 and m2 are summarized (by the agent's own model), the
	// latest 2 stay.
	send(t, h, id, "m3", "What's my name?")
	assert.Equal(t, 4, h.Model.Requests("scribe"), "a summary call, then the reply")
	first := summary()
	assert.Equal(t, agents.SummaryState{SummarizedThrough: "m2", Summary: `[offline] scribe received 4 messages. ` +
		`First user message: "Hello, how are you?". Last user message: "My name is Alice".`}, first)
	req := lastRequest()
	assert.Equal(t, []string{"system", "assistant", "user"}, roles(req))
	assert.Equal(t, agents.SummaryPrefix+first.Summary, req.Messages[0].Content, "the request starts with the summary")
	assert.Equal(t, "What's my name?", req.Messages[2].Content)

	send(t, h, id, "m4", "What did we talk about?")
	assert.Equal(t, 5, h.Model.Requests("scribe"), "4 unsummarized messages: no new summary")
	assert.Equal(t, []string{"system", "assistant", "user", "assistant", "user"}, roles(lastRequest()))

	// 6 unsummarized: m2/1 to m4 are folded into the summary, with the previous one.
	send(t, h, id, "m5", "Thanks")
	assert.Equal(t, 7, h.Model.Requests("scribe"))
	second := summary()
	assert.Equal(t, "m4", second.SummarizedThrough)
	assert.Contains(t, second.Summary, "received 6 messages", "prompt + previous summary + the 4 messages it folds in")
	assert.Contains(t, second.Summary, `First user message: "What's my name?"`)
	req = lastRequest()
	assert.Equal(t, []string{"system", "assistant", "user"}, roles(req))
	assert.Equal(t, agents.SummaryPrefix+second.Summary, req.Messages[0].Content)

	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, 10, hist.Total, "summaries never enter the primary history")

	b, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	doc, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	require.Len(t, doc.Channels, 1)
	assert.Equal(t, chat.ChannelKey(chat.ChannelChatHistory, "reducer=summarize:4:2"), doc.Channels[0].ChannelKey)
	assert.Equal(t, second, decodeState[agents.SummaryState](t, doc.Channels[0].ChannelState))
}

// An approval waits across export and import, and across a migration: the document
// ends with the open call, and the chat it is restored into waits for the same
// approval, then finishes the turn there.
func TestApprovalWaitsAcrossExportImportAndMigration(t *testing.T) {
	config := `
tools:
  refund: {approval: true}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [refund], call: {initialInterval: 50ms, maxAttempts: 4}}
`
	script := offline.Options{Scripts: map[string][]offline.Reply{"clerk": refundScript}}
	a := testenv.New(t, testenv.Options{Config: config, Model: script})
	ns := testenv.Namespace(t, "agentchat-test-approval")
	b := testenv.New(t, testenv.Options{Config: config, Model: script, Namespace: ns, TaskQueue: a.TaskQueue})
	id := testenv.ChatID(t)
	_, err := a.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)
	res := send(t, a, id, "m1", "Please refund order 1001")
	require.Len(t, res.AwaitingApproval, 1)

	// Export and import: the copy waits for the same call.
	doc, _, err := a.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	parsed, report, err := chatstate.Decode(doc)
	require.NoError(t, err)
	assert.Empty(t, report.Repairs, "an open call at the end is kept, not repaired")
	assert.Equal(t, "r1", parsed.History[len(parsed.History)-1].FunctionCalls()[0].CallID)
	copyID := id + "-copy"
	st, err := a.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: copyID, Document: doc})
	require.NoError(t, err)
	require.Len(t, st.PendingApprovals, 1)
	assert.Equal(t, "r1", st.PendingApprovals[0].CallID)
	done, err := a.Client.Approve(ctxFor(t), copyID, agentchat.ApproveInput{CallID: "r1", Approved: true})
	require.NoError(t, err)
	require.NotEmpty(t, done.Messages)
	assert.Equal(t, "refunded $42.50 for order 1001", done.Messages[0].Contents[0].Result, "the approved refund ran in the copy")

	// Migration: the chat moves while it waits, and is approved in its new place.
	_, err = a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: ns})
	require.NoError(t, err)
	st, err = b.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	require.Len(t, st.PendingApprovals, 1)
	done, err = b.Client.Approve(ctxFor(t), id, agentchat.ApproveInput{CallID: "r1", Approved: true})
	require.NoError(t, err)
	require.NotEmpty(t, done.Messages)
	assert.Equal(t, "refunded $42.50 for order 1001", done.Messages[0].Contents[0].Result, "the approved refund ran in the new place")
	assertOneLiveChat(t, id, a, b)
}
