package integration_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// publishSignals returns when each Workflow Streams publish signal of the chat's
// current run came, by the server's clock (the same machine's).
func publishSignals(t *testing.T, h *testenv.Harness, id string) []time.Time {
	t.Helper()
	it := h.Temporal.GetWorkflowHistory(ctxFor(t), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var at []time.Time
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == wire.StreamPublishSignal {
			at = append(at, ev.GetEventTime().AsTime())
		}
	}
	return at
}

// streamOffset is the chat's next stream offset (the protocol's offset query).
func streamOffset(t *testing.T, h *testenv.Harness, id string) int64 {
	t.Helper()
	v, err := h.Temporal.QueryWorkflow(ctxFor(t), id, "", wire.StreamOffsetQuery)
	require.NoError(t, err)
	var off int64
	require.NoError(t, v.Get(&off))
	return off
}

// followTurn follows the chat from offset from until turn turnID's turnDone.
func followTurn(t *testing.T, h *testenv.Harness, id string, from int64, turnID string) []agentchat.Event {
	t.Helper()
	var out []agentchat.Event
	for ev, err := range h.Client.Follow(ctxFor(t), id, from) {
		require.NoError(t, err)
		out = append(out, ev)
		if ev.Type == wire.EventTurnDone && ev.TurnID == turnID {
			break
		}
	}
	return out
}

func deltasOf(events []agentchat.Event) []agentchat.Event {
	var out []agentchat.Event
	for _, ev := range events {
		if ev.Type == wire.EventTextDelta {
			out = append(out, ev)
		}
	}
	return out
}

// A streamed reply that nobody follows publishes no delta: its chat's history has no
// publish signal, the reply is whole, and a subscriber that comes afterwards reads its
// text from the log in the deltas the chat filled in.
func TestStreamUnfollowedTurnPublishesNothing(t *testing.T) {
	long := strings.TrimSpace(strings.Repeat("lorem ipsum ", 30))
	h := testenv.New(t, testenv.Options{Model: offline.Options{ChunkDelay: 10 * time.Millisecond,
		Scripts: map[string][]offline.Reply{"helper": {{Text: long}}}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	res := send(t, h, id, "t1", "Tell me")
	require.Len(t, res.Messages, 1)
	assert.Equal(t, "[offline] helper: "+long, res.Messages[0].Text())
	assert.Empty(t, publishSignals(t, h, id), "nobody followed: no delta was published")

	events := followTurn(t, h, id, 0, "t1")
	texts, _ := streamedTexts(events)
	assert.Equal(t, "[offline] helper: "+long, texts["t1/1"])
	assertStreamMatchesHistory(t, h, id, events)
}

// A subscriber that starts following mid-reply gets the text written so far in one
// delta within about the publisher's check interval, then the rest as it is written:
// the deltas concatenate exactly to the final text, and none was published before it
// came.
func TestStreamFollowedMidReplyGetsTheWholeText(t *testing.T) {
	long := strings.TrimSpace(strings.Repeat("word ", 80))
	h := testenv.New(t, testenv.Options{Model: offline.Options{ChunkDelay: 40 * time.Millisecond,
		Scripts: map[string][]offline.Reply{"helper": {{Text: long}}}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	sent := sendAsync(t, h.Client, id, "t1", "Tell me a long story")
	require.Eventually(t, func() bool { return streamOffset(t, h, id) >= 2 }, 30*time.Second, 10*time.Millisecond,
		"turnAccepted and agentStarted")
	time.Sleep(700 * time.Millisecond) // the model writes meanwhile
	from := streamOffset(t, h, id)
	began := time.Now()
	var events []agentchat.Event
	var firstAfter time.Duration
	for ev, err := range h.Client.Follow(ctxFor(t), id, from) {
		require.NoError(t, err)
		if ev.Type == wire.EventTextDelta && firstAfter == 0 {
			firstAfter = time.Since(began)
		}
		events = append(events, ev)
		if ev.Type == wire.EventTurnDone {
			break
		}
	}
	require.NoError(t, <-sent)
	final := "[offline] helper: " + long
	texts, done := streamedTexts(events)
	require.Len(t, done, 1)
	assert.Equal(t, final, done[0].Text())
	assert.Equal(t, final, texts["t1/1"], "the deltas concatenate exactly to the final text")
	deltas := deltasOf(events)
	require.NotEmpty(t, deltas)
	assert.Greater(t, len(deltas), 3, "published as written once followed, not only filled in at the end")
	assert.Greater(t, len(deltas[0].Text), len("[offline] helper: word word"), "the first delta has the text written before")
	t.Logf("the first delta came %v after the subscriber began, with %d bytes", firstAfter, len(deltas[0].Text))
	assert.Less(t, firstAfter, 2*time.Second, "the text so far came within about the check interval")

	for _, ev := range followTurn(t, h, id, 0, "t1") {
		if ev.Offset < from {
			assert.NotEqual(t, wire.EventTextDelta, ev.Type, "a delta at %d, published before anyone followed", ev.Offset)
		}
	}
}

// Publishing stops soon after the last subscriber goes (here it disconnects mid-poll):
// no publish signal comes later than a few seconds after, though the reply goes on
// for longer; the log still has the whole text.
func TestStreamPublishingStopsWhenTheFollowerLeaves(t *testing.T) {
	long := strings.TrimSpace(strings.Repeat("word ", 200))
	h := testenv.New(t, testenv.Options{Model: offline.Options{ChunkDelay: 40 * time.Millisecond,
		Scripts: map[string][]offline.Reply{"helper": {{Text: long}}}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	left := make(chan time.Time, 1)
	go func() {
		deltas := 0
		for ev, err := range h.Client.Follow(ctx, id, 0) {
			if err != nil {
				return
			}
			if ev.Type == wire.EventTextDelta {
				if deltas++; deltas == 3 {
					left <- time.Now()
					cancel() // a poll is in flight: the chat answers it to no one
				}
			}
		}
	}()
	require.NoError(t, <-sendAsync(t, h.Client, id, "t1", "Tell me a long story"))
	var gone time.Time
	select {
	case gone = <-left:
	default:
		t.Fatal("the follower saw fewer than three deltas")
	}
	require.Greater(t, time.Since(gone), 5*time.Second, "the reply went on after the follower left")
	signals := publishSignals(t, h, id)
	require.NotEmpty(t, signals)
	t.Logf("the last publication came %v after the follower left", signals[len(signals)-1].Sub(gone))
	assert.Less(t, signals[len(signals)-1].Sub(gone), 4*time.Second, "publishing stopped soon after the follower left")

	events := followTurn(t, h, id, 0, "t1")
	texts, _ := streamedTexts(events)
	assert.Equal(t, "[offline] helper: "+long, texts["t1/1"])
}

// A turn stopped while nobody follows it keeps its partial reply, as a followed one
// does: the stop asks the model call for the text it held back before cancelling it.
func TestStopWhileUnfollowedKeepsThePartialReply(t *testing.T) {
	h, id, long := longReplyChat(t)
	done := sendAsync(t, h.Client, id, "t1", "Tell me a long story")
	require.Eventually(t, func() bool { return h.Model.Requests("helper") == 1 }, 30*time.Second, 10*time.Millisecond)
	time.Sleep(800 * time.Millisecond) // the model writes meanwhile
	_, err := h.Client.CancelTurn(ctxFor(t), id, agentchat.CancelTurnInput{})
	require.NoError(t, err)
	require.NoError(t, <-done)
	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, hist.Messages, 2, "the user turn and the partial reply")
	m := hist.Messages[1]
	assert.True(t, m.Incomplete)
	final := "[offline] helper: " + long
	assert.True(t, strings.HasPrefix(final, m.Text()), "%q", m.Text())
	assert.Greater(t, len(m.Text()), len("[offline] helper: word word"), "the text written before the stop")
	assert.Less(t, len(m.Text()), len(final))
}
