package workflows_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// publish signals a text delta of reply messageID, attempt attempt, as the model call's
// activity does, from publisher pid with sequence seq.
func (e *env) publish(at time.Duration, pid string, seq int64, messageID string, attempt int, text string) {
	e.at(at, func() {
		data, err := wire.EncodeStreamData(wire.StreamEvent{Type: wire.EventTextDelta, MessageID: messageID, Attempt: attempt, Text: text})
		require.NoError(e.t, err)
		e.env.SignalWorkflow(wire.StreamPublishSignal, wire.StreamPublishInput{PublisherID: pid, Sequence: seq,
			Items: []wire.StreamEntry{{Topic: wire.StreamTopic, Data: data}}})
	})
}

var polls int

// pollAt runs the poll update at the given delay; the result lands in out.
func (e *env) pollAt(at time.Duration, in wire.StreamPollInput, out *wire.StreamPollResult, outErr *error) {
	polls++
	id := fmt.Sprintf("poll-%d", polls)
	e.at(at, func() {
		e.env.UpdateWorkflow(wire.StreamPollUpdate, id, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { *outErr = err },
			OnComplete: func(v any, err error) {
				*outErr = err
				if err == nil {
					*out = v.(wire.StreamPollResult)
				}
			},
		}, in)
	})
}

type shortEvent struct {
	Type      string
	MessageID string
	Attempt   int
	Text      string
}

func decodeEvents(t *testing.T, res wire.StreamPollResult) []wire.StreamEvent {
	t.Helper()
	var out []wire.StreamEvent
	for _, it := range res.Items {
		require.Equal(t, wire.StreamTopic, it.Topic)
		var ev wire.StreamEvent
		require.NoError(t, wire.DecodeStreamData(it.Data, &ev))
		out = append(out, ev)
	}
	return out
}

func short(evs []wire.StreamEvent) []shortEvent {
	out := make([]shortEvent, len(evs))
	for i, ev := range evs {
		out[i] = shortEvent{ev.Type, ev.MessageID, ev.Attempt, ev.Text}
	}
	return out
}

// The events of a turn whose model call is retried mid-stream: the deltas of attempt 1,
// retry when attempt 2's first delta arrives, attempt 2's deltas, completed from the
// final text; a batch sent again, a late delta of attempt 1 and one of another reply
// are dropped. The deltas of the last attempt concatenate to the final text.
func TestStreamEventsOfARetriedReply(t *testing.T) {
	e := newEnv(t)
	e.model.replies["helper#1"] = "Hi there"
	e.slowModel(10 * time.Second)
	turn := e.send(time.Second, msg("m1", "Hello"))
	e.publish(2*time.Second, "a1", 1, "m1/1", 1, "Hel")
	e.publish(3*time.Second, "a1", 1, "m1/1", 1, "Hel") // sent again: dropped
	e.publish(4*time.Second, "a1", 2, "m1/1", 1, "lo")
	e.publish(5*time.Second, "a2", 1, "m1/1", 2, "Hi ")
	e.publish(6*time.Second, "a1", 3, "m1/1", 1, "late")  // the abandoned attempt: dropped
	e.publish(7*time.Second, "a3", 1, "m9/1", 1, "other") // no such reply: dropped
	var mid, all, rest wire.StreamPollResult
	var midErr, allErr, restErr error
	e.pollAt(1500*time.Millisecond, wire.StreamPollInput{FromOffset: 2}, &mid, &midErr) // waits for the first delta
	e.pollAt(20*time.Second, wire.StreamPollInput{}, &all, &allErr)
	e.pollAt(21*time.Second, wire.StreamPollInput{FromOffset: 5, Topics: []string{wire.StreamTopic}}, &rest, &restErr)
	e.run(thread(), 30*time.Second)

	require.NoError(t, turn.err)
	require.NoError(t, allErr)
	evs := decodeEvents(t, all)
	assert.Equal(t, []shortEvent{
		{wire.EventTurnAccepted, "", 0, "Hello"}, // the start of the user text
		{wire.EventAgentStarted, "m1/1", 1, ""},
		{wire.EventTextDelta, "m1/1", 1, "Hel"},
		{wire.EventTextDelta, "m1/1", 1, "lo"},
		{wire.EventRetry, "m1/1", 1, ""},
		{wire.EventAgentStarted, "m1/1", 2, ""},
		{wire.EventTextDelta, "m1/1", 2, "Hi "},
		{wire.EventTextDelta, "m1/1", 2, "there"}, // completed from the final text
		{wire.EventMessageDone, "m1/1", 0, ""},
		{wire.EventTurnDone, "", 0, ""},
	}, short(evs))
	for i, it := range all.Items {
		assert.Equal(t, int64(i), it.Offset)
		assert.Equal(t, "m1", evs[i].TurnID)
	}
	assert.Equal(t, int64(len(evs)), all.NextOffset)
	assert.False(t, all.MoreReady)
	assert.Equal(t, 1, evs[0].Position, "the turn was next in the queue")
	assert.Equal(t, "Helper", evs[1].Author)
	assert.Equal(t, "Hi there", evs[8].Message.Text())
	assert.Equal(t, []string{"Hi there"}, texts(e.history()[1:]))

	require.NoError(t, midErr)
	assert.Equal(t, []shortEvent{{wire.EventTextDelta, "m1/1", 1, "Hel"}}, short(decodeEvents(t, mid)), "the poll waited for the first delta")
	assert.Equal(t, int64(3), mid.NextOffset)
	require.NoError(t, restErr)
	assert.Equal(t, all.Items[5:], rest.Items)
	assert.Equal(t, int64(len(all.Items)), query[int64](e, wire.StreamOffsetQuery))
}

// A reply that did not stream (a kind or endpoint that does not) gets its whole text
// in one delta; a failed turn ends with turnFailed and its error.
func TestStreamEventsOfAWholeReplyAndAFailedTurn(t *testing.T) {
	e := newEnv(t)
	e.model.errs["helper#2"] = temporal.NewNonRetryableApplicationError("no", wire.ErrTypeModelRejected, errors.New("no"))
	e.model.errs["helper#3"] = e.model.errs["helper#2"]
	e.send(time.Second, msg("m1", "Hello"))
	e.send(2*time.Second, msg("m2", "Again"))
	var all wire.StreamPollResult
	var allErr error
	e.pollAt(5*time.Second, wire.StreamPollInput{}, &all, &allErr)
	e.run(thread(), 10*time.Second)
	require.NoError(t, allErr)
	evs := decodeEvents(t, all)
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	assert.Equal(t, []string{wire.EventTurnAccepted, wire.EventAgentStarted, wire.EventTextDelta, wire.EventMessageDone, wire.EventTurnDone,
		wire.EventTurnAccepted, wire.EventAgentStarted, wire.EventTurnFailed}, types)
	assert.Equal(t, e.history()[1].Text(), evs[2].Text)
	require.NotNil(t, evs[7].Error)
	assert.Equal(t, "m2", evs[7].TurnID)
	assert.Equal(t, wire.ErrTypeModelRejected, evs[7].Error.Type)
}

// A poll before the log's base (dropped at a continue-as-new) fails with the protocol's
// TruncatedOffset; the carried log keeps the events of the finished messages but not
// their deltas, and offsets go on.
func TestStreamCarriedAcrossContinueAsNew(t *testing.T) {
	_, next := continuedChat(t)
	require.NotNil(t, next.Carry.Stream)
	c := next.Carry.Stream
	var types []string
	for _, it := range c.Items {
		var ev wire.StreamEvent
		require.NoError(t, wire.DecodeStreamData(it.Data, &ev))
		types = append(types, ev.Type)
		if ev.Type == wire.EventMessageDone {
			assert.Equal(t, chat.RoleAssistant, ev.Message.Role)
		}
	}
	assert.Equal(t, []string{wire.EventTurnAccepted, wire.EventAgentStarted, wire.EventMessageDone, wire.EventTurnDone}, types)
	assert.Equal(t, int64(5), c.NextOffset, "the delta at offset 2 is dropped; the offsets stay")
	assert.Equal(t, []int64{0, 1, 3, 4}, []int64{c.Items[0].Offset, c.Items[1].Offset, c.Items[2].Offset, c.Items[3].Offset})

	e := newEnv(t)
	next.Carry.Stream = &wire.StreamCarry{Items: c.Items[2:], NextOffset: c.NextOffset} // as if older ones were dropped
	var dropped, kept, gap wire.StreamPollResult
	var droppedErr, keptErr, gapErr error
	e.pollAt(time.Second, wire.StreamPollInput{FromOffset: 1}, &dropped, &droppedErr)
	e.pollAt(time.Second, wire.StreamPollInput{FromOffset: 0}, &kept, &keptErr)
	e.pollAt(time.Second, wire.StreamPollInput{FromOffset: 3}, &gap, &gapErr)
	e.send(2*time.Second, msg("m2", "Again"))
	e.run(next, 5*time.Second)
	var app *temporal.ApplicationError
	require.True(t, errors.As(droppedErr, &app), "%v", droppedErr)
	assert.Equal(t, wire.ErrTypeTruncatedOffset, app.Type())
	require.NoError(t, keptErr)
	assert.Equal(t, int64(3), kept.Items[0].Offset, "from 0: the oldest kept")
	require.NoError(t, gapErr)
	assert.Equal(t, kept.Items, gap.Items, "a dropped delta's offset resumes at the next event kept, the messageDone")
	assert.Equal(t, int64(5+5), query[int64](e, wire.StreamOffsetQuery), "the new run's turn takes offsets 5 to 9")
}

// The StreamRead query reads the log at once, as a poll that does not wait: from the
// base for an offset dropped before it, the rest from an offset kept, nothing past the
// end; a negative offset is refused.
func TestStreamReadQuery(t *testing.T) {
	_, next := continuedChat(t)
	c := next.Carry.Stream
	e := newEnv(t)
	next.Carry.Stream = &wire.StreamCarry{Items: c.Items[2:], NextOffset: c.NextOffset} // the log begins at 3
	e.run(next, time.Second)
	read := func(from int64) wire.StreamReadResult {
		return query[wire.StreamReadResult](e, wire.StreamReadQuery, wire.StreamPollInput{FromOffset: from})
	}
	offsets := func(res wire.StreamReadResult) []int64 {
		var out []int64
		for _, it := range res.Items {
			out = append(out, it.Offset)
		}
		return out
	}
	assert.Equal(t, []int64{3, 4}, offsets(read(1)), "before the base: from the base")
	assert.Equal(t, []int64{4}, offsets(read(4)))
	past := read(9)
	assert.Empty(t, past.Items)
	assert.Equal(t, int64(5), past.NextOffset)
	assert.False(t, past.MoreReady)
	assert.Nil(t, past.MigratedTo)
	_, err := e.env.QueryWorkflow(wire.StreamReadQuery, wire.StreamPollInput{FromOffset: -1})
	assert.ErrorContains(t, err, "negative")
}

// The followers query, which the model call's activity asks before it publishes: no
// one before the first poll; a poll waiting; a subscriber between two polls (its poll
// answered within wire.StreamFollowGrace) still follows; after the grace, with no poll
// since, no one does.
func TestStreamFollowersQuery(t *testing.T) {
	e := newEnv(t)
	e.slowModel(10 * time.Second)
	e.send(time.Second, msg("m1", "Hello"))
	got := map[string]wire.StreamFollowers{}
	ask := func(at time.Duration, name string) {
		e.at(at, func() { got[name] = query[wire.StreamFollowers](e, wire.StreamFollowersQuery) })
	}
	var res wire.StreamPollResult
	var resErr error
	ask(500*time.Millisecond, "before any poll")
	e.pollAt(1500*time.Millisecond, wire.StreamPollInput{FromOffset: 2}, &res, &resErr) // waits for the first delta
	ask(1800*time.Millisecond, "a poll waits")
	e.publish(3*time.Second, "a1", 1, "m1/1", 1, "Hel")
	ask(3500*time.Millisecond, "between two polls")
	e.publish(5*time.Second, "a1", 2, "m1/1", 1, "lo")
	ask(5500*time.Millisecond, "gone")
	e.run(thread(), 30*time.Second)

	require.NoError(t, resErr)
	assert.Len(t, res.Items, 1)
	assert.Equal(t, map[string]wire.StreamFollowers{
		"before any poll":   {Waiting: 0, Followed: false},
		"a poll waits":      {Waiting: 1, Followed: true},
		"between two polls": {Waiting: 0, Followed: true},
		"gone":              {Waiting: 0, Followed: false},
	}, got)
}
