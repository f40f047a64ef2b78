package workflows

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// A poll's or StreamRead's page holds at most wire.StreamPollBytes of items (data and
// topic lengths): exactly at the limit, everything; one byte over, the last item goes
// to the next page (NextOffset, MoreReady); an item larger than the limit alone is
// still a page of its own.
func TestStreamPageAtItsLimitAndJustOver(t *testing.T) {
	topic := wire.StreamTopic
	log := func(sizes ...int) *eventLog {
		l := &eventLog{base: 1, next: 1}
		for _, n := range sizes {
			l.items = append(l.items, logItem{offset: l.next, topic: topic, data: strings.Repeat("A", n-len(topic))})
			l.next++
		}
		return l
	}
	half := wire.StreamPollBytes / 2

	at := log(half, wire.StreamPollBytes-half).Page(1, nil)
	assert.Len(t, at.Items, 2, "exactly at the limit: one page")
	assert.False(t, at.MoreReady)
	assert.Equal(t, int64(3), at.NextOffset)

	over := log(half, wire.StreamPollBytes-half+1)
	first := over.Page(1, nil)
	assert.Len(t, first.Items, 1, "one byte over: the second item waits")
	assert.True(t, first.MoreReady)
	assert.Equal(t, int64(2), first.NextOffset)
	rest := over.Page(first.NextOffset, nil)
	assert.Len(t, rest.Items, 1)
	assert.False(t, rest.MoreReady)
	assert.Equal(t, int64(3), rest.NextOffset)

	big := log(wire.StreamPollBytes+1, 10).Page(1, nil)
	assert.Len(t, big.Items, 1, "an item over the limit is a page alone")
	assert.True(t, big.MoreReady)
}

// events decodes the log's items from offset from on.
func events(t *testing.T, l *eventLog, from int64) []wire.StreamEvent {
	t.Helper()
	var out []wire.StreamEvent
	for _, it := range l.Page(from, nil).Items {
		var ev wire.StreamEvent
		require.NoError(t, wire.DecodeStreamData(it.Data, &ev))
		out = append(out, ev)
	}
	return out
}

// The log takes a publisher's deltas of the reply in flight only, each batch once; a
// final text the deltas do not make is given again whole after a retry, so the last
// attempt's deltas always concatenate to it.
func TestStreamLogDeltasEndAsTheFinalText(t *testing.T) {
	var l eventLog
	p := wire.Participant{ID: "writer", Name: "Writer"}
	delta := func(seq int64, msgID, text string) wire.StreamPublishInput {
		ev := wire.StreamEvent{Type: wire.EventTextDelta, MessageID: msgID, Attempt: 1, Text: text}
		return wire.StreamPublishInput{PublisherID: "p1", Sequence: seq,
			Items: []wire.StreamEntry{{Topic: wire.StreamTopic, Data: wire.EncodedStreamEvent(ev)}}}
	}
	l.Publish(delta(1, "m1/1", "dropped: nothing in flight"))
	l.StartReply("m1", p, "m1/1")
	l.Publish(delta(1, "m1/1", "Hel"))
	l.Publish(delta(1, "m1/1", "Hel")) // sent again
	l.Publish(delta(2, "m1/2", "another reply"))
	assert.Equal(t, `agent "writer"'s reply in turn "m1", in flight`, l.InFlight("m1/1"))
	assert.Empty(t, l.InFlight("m1/2"))
	l.FinishReply(chat.TextMessage("m1/1", chat.RoleAssistant, "Writer", "Bye"))
	assert.Empty(t, l.InFlight("m1/1"), "finished: no longer in flight")

	var types, texts []string
	for _, ev := range events(t, &l, 0) {
		types = append(types, ev.Type)
		texts = append(texts, ev.Text)
	}
	assert.Equal(t, []string{wire.EventAgentStarted, wire.EventTextDelta, wire.EventRetry, wire.EventAgentStarted, wire.EventTextDelta}, types)
	assert.Equal(t, "Bye", texts[4], "the whole final text, in the second attempt")
	assert.Equal(t, int64(5), l.Next())
}

// The next run takes the latest events but text deltas and retries, from the same next
// offset; its log begins at the first item carried.
func TestStreamLogCarriesItsEventsButDeltas(t *testing.T) {
	var l eventLog
	p := wire.Participant{ID: "writer"}
	l.Emit(wire.StreamEvent{Type: wire.EventTurnAccepted, TurnID: "m1"})
	l.StartReply("m1", p, "m1/1")
	l.FinishReply(chat.TextMessage("m1/1", chat.RoleAssistant, "", "Hi"))
	l.Emit(wire.StreamEvent{Type: wire.EventTurnDone, TurnID: "m1"})

	c := l.Carry()
	assert.Equal(t, l.Next(), c.NextOffset)
	var next eventLog
	next.Resume(c)
	assert.Equal(t, int64(0), next.Base())
	assert.Equal(t, l.Next(), next.Next())
	var types []string
	for _, ev := range events(t, &next, 0) {
		types = append(types, ev.Type)
	}
	assert.Equal(t, []string{wire.EventTurnAccepted, wire.EventAgentStarted, wire.EventTurnDone}, types)

	next.Resume(&wire.StreamCarry{Items: c.Items[1:], NextOffset: c.NextOffset})
	assert.Equal(t, c.Items[1].Offset, next.Base(), "the log begins at the first item carried")
	var empty eventLog
	empty.Resume(&wire.StreamCarry{NextOffset: 9})
	assert.Equal(t, int64(9), empty.Base())
	assert.True(t, empty.CaughtUp(), "nobody polled")
}
