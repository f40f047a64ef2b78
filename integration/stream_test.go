package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// collect reads a stream to its end; it fails the test on an error.
func collect(t *testing.T, seq func(func(agentchat.Event, error) bool)) []agentchat.Event {
	t.Helper()
	var out []agentchat.Event
	for ev, err := range seq {
		require.NoError(t, err)
		out = append(out, ev)
	}
	return out
}

// streamedTexts returns, per reply messageId, the concatenated text deltas of its last
// attempt (a retry event drops the deltas of the attempt it names), and the messages
// done, in order.
func streamedTexts(events []agentchat.Event) (map[string]string, []chat.Message) {
	texts := map[string]string{}
	var done []chat.Message
	for _, ev := range events {
		switch ev.Type {
		case wire.EventTextDelta:
			texts[ev.MessageID] += ev.Text
		case wire.EventRetry:
			texts[ev.MessageID] = ""
		case wire.EventMessageDone:
			done = append(done, *ev.Message)
		}
	}
	return texts, done
}

func eventTypes(events []agentchat.Event) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = ev.Type
	}
	return out
}

// assertStreamMatchesHistory checks that the turn's messages done are the history's
// messages after the user turn, and that each reply's deltas concatenate to its text.
func assertStreamMatchesHistory(t *testing.T, h *testenv.Harness, chatID string, events []agentchat.Event) {
	t.Helper()
	texts, done := streamedTexts(events)
	hist, err := h.Client.History(ctxFor(t), chatID, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.NotEmpty(t, done)
	byID := map[string]chat.Message{}
	for _, m := range hist.Messages {
		byID[m.MessageID] = m
	}
	for _, m := range done {
		final, ok := byID[m.MessageID]
		require.True(t, ok, "message %s done but not in the history", m.MessageID)
		assert.Equal(t, final.Contents, m.Contents, "message %s", m.MessageID)
		if m.Role == chat.RoleAssistant {
			assert.Equal(t, final.Text(), texts[m.MessageID], "the deltas of %s concatenate to its final text", m.MessageID)
		}
	}
	offsets := map[int64]bool{}
	for i, ev := range events {
		assert.False(t, offsets[ev.Offset], "offset %d twice", ev.Offset)
		offsets[ev.Offset] = true
		if i > 0 && ev.Offset != 0 {
			assert.Greater(t, ev.Offset, events[i-1].Offset)
		}
	}
}

// A streamed turn, for an agent of each kind: turnAccepted, agentStarted, text deltas
// (several for the streaming chat_completion agent), messageDone, turnDone; the deltas
// concatenate to the final text the history holds.
func TestStreamDeltasConcatenateToTheFinalMessageForEachKind(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: kindsConfig, Model: offline.Options{ChunkDelay: 5 * time.Millisecond}})
	for _, agent := range []string{"writer", "analyst", "archivist"} {
		t.Run(agent, func(t *testing.T) {
			id := testenv.ChatID(t)
			_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{agent}})
			require.NoError(t, err)
			events := collect(t, h.Client.SendStream(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "t1", Text: "Hello, how are you?"}))
			types := eventTypes(events)
			require.GreaterOrEqual(t, len(types), 5, "%v", types)
			assert.Equal(t, wire.EventTurnAccepted, types[0])
			assert.Equal(t, wire.EventAgentStarted, types[1])
			assert.Equal(t, []string{wire.EventMessageDone, wire.EventTurnDone}, types[len(types)-2:])
			assert.Equal(t, agent, events[1].AgentID)
			assert.Equal(t, "t1/1", events[1].MessageID)
			assert.Equal(t, 1, events[1].Attempt)
			deltas := 0
			for _, ev := range events {
				assert.Equal(t, "t1", ev.TurnID)
				if ev.Type == wire.EventTextDelta {
					deltas++
				}
			}
			if agent == "writer" {
				assert.Greater(t, deltas, 1, "a streamed chat_completion reply arrives in several deltas: %v", types)
			} else {
				assert.Equal(t, 1, deltas, "a kind that does not stream gets its whole text in one delta")
			}
			assertStreamMatchesHistory(t, h, id, events)

			// Follow from 0 gives the same events, and from an offset the rest of them.
			var replay []agentchat.Event
			ctx, cancel := context.WithCancel(ctxFor(t))
			defer cancel()
			for ev, err := range h.Client.Follow(ctx, id, 0) {
				require.NoError(t, err)
				replay = append(replay, ev)
				if ev.Type == wire.EventTurnDone {
					break
				}
			}
			assert.Equal(t, events, replay)
			mid := events[len(events)/2]
			var rest []agentchat.Event
			for ev, err := range h.Client.Follow(ctx, id, mid.Offset) {
				require.NoError(t, err)
				rest = append(rest, ev)
				if ev.Type == wire.EventTurnDone {
					break
				}
			}
			assert.Equal(t, events[len(events)/2:], rest, "resumed from an offset: nothing missed, nothing twice")
		})
	}
}

// A group chat whose agent calls tools: toolCall and toolResult events, a messageDone
// per message (the call, the results, the answer), each reply's deltas its final text.
func TestStreamGroupChatWithTools(t *testing.T) {
	const config = `
tools:
  stock: {description: "How many of an item are in stock", parameters: {type: object, properties: {item: {type: string}}}}
agents:
  - {id: clerk, name: Clerk, model: offline, instructions: "You run the shop.", tools: [stock], call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: writer, name: Writer, model: offline, instructions: "You write.", call: {initialInterval: 50ms, maxAttempts: 4}}
`
	h := testenv.New(t, testenv.Options{Config: config,
		Tools: map[string]activities.ToolFunc{"stock": func(context.Context, json.RawMessage) (string, error) { return "3 in stock", nil }},
		Model: offline.Options{ChunkDelay: 2 * time.Millisecond, Scripts: map[string][]offline.Reply{"clerk": {
			{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "stock", Arguments: `{"item":"teapot"}`}}}, {},
		}}},
	})
	id := testenv.ChatID(t)
	events := collect(t, h.Client.StartStream(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk", "writer"}},
		agentchat.SendMessageInput{MessageID: "t1", Text: "Is the teapot in stock?"}))
	types := eventTypes(events)
	assert.Contains(t, types, wire.EventToolCall)
	assert.Contains(t, types, wire.EventToolResult)
	_, done := streamedTexts(events)
	assert.Equal(t, []string{"t1/1", "t1/2", "t1/3", "t1/4"}, messageIDs(done), "the call, the result, the clerk's answer, the writer's")
	for _, ev := range events {
		if ev.Type == wire.EventToolResult {
			assert.Equal(t, "3 in stock", ev.Result.Result)
		}
	}
	assertStreamMatchesHistory(t, h, id, events)
}

// A follower of a chat that continues as new between its turns (a small history
// budget) follows it into the next runs without a reconnect of its own: every turn's
// events in order, offsets going on across runs, each reply's deltas its final text.
// From offset 0 afterwards, the dropped deltas are gone and the messages done remain.
func TestStreamFollowsContinueAsNew(t *testing.T) {
	h := testenv.New(t, testenv.Options{Model: offline.Options{ChunkDelay: 5 * time.Millisecond}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"},
		HistoryBudget: wire.HistoryBudget{MaxEvents: 40}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	followed := make(chan []agentchat.Event, 1)
	go func() {
		var evs []agentchat.Event
		done := 0
		for ev, err := range h.Client.Follow(ctx, id, 0) {
			if err != nil {
				break
			}
			evs = append(evs, ev)
			if ev.Type == wire.EventTurnDone {
				if done++; done == 4 {
					break
				}
			}
		}
		followed <- evs
	}()
	for i := 1; i <= 4; i++ {
		send(t, h, id, fmt.Sprintf("t%d", i), fmt.Sprintf("Turn %d", i))
	}
	var evs []agentchat.Event
	select {
	case evs = <-followed:
	case <-time.After(time.Minute):
		t.Fatal("the follower did not see the four turns")
	}
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	require.Greater(t, st.Runs, 0, "the chat continued as new")
	assertStreamMatchesHistory(t, h, id, evs)
	var turns []string
	for _, ev := range evs {
		if ev.Type == wire.EventTurnAccepted {
			turns = append(turns, ev.TurnID)
		}
	}
	assert.Equal(t, []string{"t1", "t2", "t3", "t4"}, turns)

	var again []agentchat.Event
	for ev, err := range h.Client.Follow(ctx, id, 0) {
		require.NoError(t, err)
		again = append(again, ev)
		if ev.Type == wire.EventTurnDone && ev.TurnID == "t4" {
			break
		}
	}
	_, done := streamedTexts(again)
	_, all := streamedTexts(evs)
	assert.Equal(t, messageIDs(all), messageIDs(done), "the messages done stay after the deltas are dropped")
	assert.Less(t, len(again), len(evs))
}

// A long reply (600 KiB, inline) streams in deltas of at most wire.StreamDeltaBytes:
// the model call publishes its first wire.StreamReplyBytes, the chat gives the rest
// with the final message; the deltas concatenate to the final text, and no event of the
// chat's history comes near a payload's limit.
func TestStreamALongReplyInBoundedDeltas(t *testing.T) {
	big := strings.Repeat("z", 600<<10)
	h := testenv.New(t, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{"helper": {{Text: big}}}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	events := collect(t, h.Client.SendStream(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "t1", Text: "Write a lot"}))
	for _, ev := range events {
		assert.LessOrEqual(t, len(ev.Text), wire.StreamDeltaBytes)
	}
	texts, _ := streamedTexts(events)
	assert.Equal(t, "[offline] helper: "+big, texts["t1/1"])
	assertStreamMatchesHistory(t, h, id, events)
	assert.Less(t, largestPayload(t, h, id, currentRun(t, h, id).runID), int64(wire.ReplyInlineLimit*3/2+(64<<10)),
		"the largest payload is the reply itself (in its activity result and its messageDone), not more")
}
