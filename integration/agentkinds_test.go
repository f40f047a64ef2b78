package integration_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// Integration tests of the agent kinds (chat_completion, responses, assistant) and
// their channels, on the real dev server with the offline model over HTTP.
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
	assert.Equal(t, []wire.ParticipantInfo{{ID: "analyst", Name: "Analyst", Type: wire.KindResponses}}, st.Participants)

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
	ch := channelOf(t, st, wire.ChannelResponsesThread)
	assert.True(t, ch.Active)
	raw := snapshotState(t, h, id, ch.ChannelKey)
	state := decodeState[wire.ResponsesThreadState](t, raw)
	assert.Equal(t, "m3/1", state.SyncedThrough)
	assert.Equal(t, previous[2], storedResponse(t, h.Model, state.PreviousResponseID).PreviousResponseID,
		"the state names the third reply's response")

	doc, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	parsed, _, err := chatstate.Decode(doc)
	require.NoError(t, err)
	assert.JSONEq(t, string(raw), string(docChannelOf(t, parsed, wire.ChannelResponsesThread).ChannelState))
}

// An assistant agent's thread: the thread holds every primary message once, in order,
// and the third reply quotes the second turn.
func TestAssistantAgentThread(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: kindsConfig})
	id := testenv.ChatID(t)
	st, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"archivist"}})
	require.NoError(t, err)
	assert.Equal(t, []wire.ParticipantInfo{{ID: "archivist", Name: "Archivist", Type: wire.KindAssistant}}, st.Participants)

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
	ch := channelOf(t, st, wire.ChannelAssistantThread)
	assert.True(t, ch.Active)
	raw := snapshotState(t, h, id, ch.ChannelKey)
	state := decodeState[wire.AssistantThreadState](t, raw)
	assert.Equal(t, "m3/1", state.SyncedThrough)
	require.NotEmpty(t, state.ThreadID)
	assert.Equal(t, []string{"user m1", "assistant m1/1", "user m2", "assistant m2/1", "user m3", "assistant m3/1"},
		threadIDs(t, h.Model, state.ThreadID), "one thread, every message once, in order")

	doc, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	parsed, _, err := chatstate.Decode(doc)
	require.NoError(t, err)
	assert.JSONEq(t, string(raw), string(docChannelOf(t, parsed, wire.ChannelAssistantThread).ChannelState))
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
	chain := decodeState[wire.ResponsesThreadState](t, docChannelOf(t, parsed, wire.ChannelResponsesThread).ChannelState)
	assert.Equal(t, "t2/2", chain.SyncedThrough)
	require.NotEmpty(t, chain.PreviousResponseID)
	thread := decodeState[wire.AssistantThreadState](t, docChannelOf(t, parsed, wire.ChannelAssistantThread).ChannelState)
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
		assert.Equal(t, "t3/2", decodeState[wire.ResponsesThreadState](t, channelState(t, h, dst, wire.ChannelResponsesThread)).SyncedThrough)
		assert.Equal(t, wire.AssistantThreadState{ThreadID: thread.ThreadID, SyncedThrough: "t3/3"},
			decodeState[wire.AssistantThreadState](t, channelState(t, h, dst, wire.ChannelAssistantThread)))
	})

	t.Run("writer only, then the analyst rejoins", func(t *testing.T) {
		dst := testenv.ChatID(t)
		st, err := h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: dst, Document: doc, Participants: []string{"writer"}})
		require.NoError(t, err)
		require.Len(t, st.Channels, 3, "the service channels are kept")
		assert.True(t, channelOf(t, st, chat.ChannelChatHistory).Active)
		for _, typ := range []string{wire.ChannelResponsesThread, wire.ChannelAssistantThread} {
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
		assert.True(t, channelOf(t, st, wire.ChannelResponsesThread).Active, "the analyst resumes its channel")
		assert.False(t, channelOf(t, st, wire.ChannelAssistantThread).Active)
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
		"writer": {{}, {Delay: wire.Duration(3 * time.Second)}}, // slow in the second turn
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
	chain := decodeState[wire.ResponsesThreadState](t, docChannelOf(t, doc, wire.ChannelResponsesThread).ChannelState)
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
