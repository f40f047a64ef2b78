package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentchat/agentchat/internal/syncbuf"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/cli"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// send prints the streamed reply as --no-stream prints the answer; follow --json prints
// the chat's events from an offset, one JSON line each; stop without a turn in flight
// says so (status 0: the chat is as asked), stop of a turn that is not there fails.
func TestSendStreamsFollowPrintsEventsStopRefuses(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	streamed := ok(t, h, "send", "--chat", id, "--id", "t1", "Hello")
	whole := ok(t, h, "send", "--chat", id, "--id", "t1", "--no-stream", "Hello") // the same turn again: its answer
	assert.Equal(t, streamed.out+"(turn t1 was answered before: this is that answer; no model was called again)\n", whole.out,
		"streamed, the reply prints as it does whole (here a replay, which says so)")
	assert.True(t, strings.HasPrefix(streamed.out, "Helper: [offline] helper received 2 messages."), streamed.out)

	idle := ok(t, h, "stop", "--chat", id)
	assert.Contains(t, idle.out, "no turn is in flight", "an idle chat has nothing to stop: a note, status 0")
	line := fails(t, h, "stop", "--chat", id, "--id", "never-sent")
	assert.Contains(t, line, `turn "never-sent" is neither in flight nor queued`, "a turn named that is not there is an error")

	// The chat's events from offset 2, until --timeout ends the command (a live chat's
	// stream does not end).
	r := starter(t, h, "", "--timeout", "3s", "follow", "--chat", id, "--from", "2", "--json")
	assert.Equal(t, 1, r.code, "%v", r)
	assert.Contains(t, r.err, "--timeout of 3s", "the error says which limit ended it")
	var types []string
	for _, l := range r.lines() {
		var ev struct {
			Offset int64  `json:"offset"`
			Type   string `json:"type"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		if ev.Type == wire.EventTextDelta && len(types) > 0 && types[len(types)-1] == ev.Type {
			continue // the reply's text may come in one delta or several
		}
		types = append(types, ev.Type)
		assert.GreaterOrEqual(t, ev.Offset, int64(2))
	}
	assert.Equal(t, []string{wire.EventTextDelta, wire.EventMessageDone, wire.EventTurnDone}, types)
}

// Ctrl-C in chat while a reply is written (or awaited, --no-stream) stops that turn
// only (its partial reply stays, marked incomplete) and the session goes on: the next
// line gets its reply; Ctrl-C at the prompt then ends the session.
func TestChatInterruptStopsTheTurnThenThePromptEnds(t *testing.T) {
	// 100 ms a chunk: the default reply takes about 2 s, time for a stop to arrive
	// under -race on a loaded machine.
	h := testenv.New(t, testenv.Options{Model: offline.Options{ChunkDelay: 100 * time.Millisecond}})
	t.Run("streamed", func(t *testing.T) { chatInterrupted(t, h) })
	t.Run("no-stream", func(t *testing.T) { chatInterrupted(t, h, "--no-stream") })
}

func chatInterrupted(t *testing.T, h *testenv.Harness, flags ...string) {
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")

	in, typing := io.Pipe()
	t.Cleanup(func() { _ = typing.Close() })
	interrupts := make(chan os.Signal, 1)
	var out, errOut syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Execute(t.Context(), append([]string{"--address", testenv.Address(t), "--task-queue", h.TaskQueue, "chat", "--chat", id}, flags...),
			cli.Streams{In: in, Out: &out, Err: &errOut, Interrupts: interrupts})
	}()
	type_ := func(line string) {
		t.Helper()
		_, err := io.WriteString(typing, line+"\n")
		require.NoError(t, err)
	}
	type_("Tell me a story")
	require.Eventually(t, func() bool {
		v, err := h.Temporal.QueryWorkflow(t.Context(), id, "", wire.StreamOffsetQuery)
		var next int64
		return err == nil && v.Get(&next) == nil && next >= 2 // turnAccepted, agentStarted
	}, 20*time.Second, 5*time.Millisecond, "the reply is being written")
	// Deltas reach the stream only while someone follows it (not with --no-stream): wait
	// for the first (a fixed sleep let the stop come first on a loaded machine, and the
	// turn had no partial reply to keep); without a follower, a chunk or two's time.
	if len(flags) == 0 {
		require.Eventually(t, func() bool {
			v, err := h.Temporal.QueryWorkflow(t.Context(), id, "", wire.StreamOffsetQuery)
			var next int64
			return err == nil && v.Get(&next) == nil && next >= 3 // and a textDelta
		}, 20*time.Second, 5*time.Millisecond, "the reply's first text is on the stream")
	} else {
		time.Sleep(150 * time.Millisecond)
	}
	interrupts <- os.Interrupt
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "stopped)") },
		20*time.Second, 10*time.Millisecond, "the turn is stopped: %s", &out)
	select {
	case code := <-done:
		t.Fatalf("chat ended (%d) after Ctrl-C during a reply:\n%s\n%s", code, out.String(), errOut.String())
	case <-time.After(200 * time.Millisecond):
	}
	hist, err := h.Client.History(t.Context(), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, hist.Messages, 2)
	assert.True(t, hist.Messages[1].Incomplete, "the partial reply is kept, marked incomplete")

	type_("And now?")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), `Last user message: "And now?"`) },
		20*time.Second, 10*time.Millisecond, "the next line is answered in the same session: %s", &out)
	type_("/state") // answered once the session is back at the prompt
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "messages:      4 messages in 2 turns") },
		20*time.Second, 10*time.Millisecond, "back at the prompt: %s", &out)
	hist, err = h.Client.History(t.Context(), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, hist.Messages, 4)
	assert.False(t, hist.Messages[3].Incomplete, "the second reply is whole")

	interrupts <- os.Interrupt // at the prompt: the session ends, as /quit does
	select {
	case code := <-done:
		assert.Equal(t, 0, code, "Ctrl-C at the prompt is the user's way out, not a failure")
		assert.Empty(t, errOut.String())
	case <-time.After(5 * time.Second):
		t.Fatalf("chat kept waiting for input after Ctrl-C at the prompt:\n%s\n%s", &out, &errOut)
	}
}

// follow on a closed chat prints the events it holds from --from on and ends with no
// error; --from past its end prints nothing.
func TestFollowAClosedChatEnds(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	ok(t, h, "send", "--chat", id, "--id", "t1", "Hello")
	require.NoError(t, h.Temporal.TerminateWorkflow(t.Context(), id, "", "test"))

	r := ok(t, h, "--timeout", "30s", "follow", "--chat", id)
	assert.Contains(t, r.out, "[0] turn t1 accepted")
	assert.Contains(t, r.out, "Helper: [offline] helper received 2 messages.")
	assert.Contains(t, r.out, "turn t1 done")
	r = ok(t, h, "--timeout", "30s", "follow", "--chat", id, "--from", "1000")
	assert.Empty(t, r.out)
}

// follow --from an offset in the middle of a reply prints the reply's author before
// its text, as from the reply's start.
func TestFollowFromMidReplyNamesTheAuthor(t *testing.T) {
	h := testenv.New(t, testenv.Options{Model: offline.Options{ChunkDelay: 30 * time.Millisecond}})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	ok(t, h, "send", "--chat", id, "--id", "t1", "Hello")
	require.NoError(t, h.Temporal.TerminateWorkflow(t.Context(), id, "", "test"))
	var deltas []agentchat.Event
	for ev, err := range h.Client.Follow(t.Context(), id, 0) {
		require.NoError(t, err)
		if ev.Type == wire.EventTextDelta {
			deltas = append(deltas, ev)
		}
	}
	require.Greater(t, len(deltas), 1, "the reply streams in several deltas")
	rest := ""
	for _, d := range deltas[1:] {
		rest += d.Text
	}

	r := ok(t, h, "--timeout", "30s", "follow", "--chat", id, "--from", fmt.Sprint(deltas[1].Offset))
	assert.Equal(t, "Helper: "+rest, r.lines()[0])
}

// follow's turn-accepted line shows who asked what: the user's text on one line, cut
// to 200 characters; --json carries it in the event's text and author.
func TestFollowShowsTheUsersText(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	ok(t, h, "send", "--chat", id, "--id", "t1", "--author", "Alice", "What's my name?")
	long := "first line\nsecond " + strings.Repeat("ä", 3000)
	ok(t, h, "send", "--chat", id, "--id", "t2", long)
	require.NoError(t, h.Temporal.TerminateWorkflow(t.Context(), id, "", "test"))

	r := ok(t, h, "--timeout", "30s", "follow", "--chat", id)
	assert.Contains(t, r.out, "[0] turn t1 accepted (queue position 1): Alice: What's my name?\n")
	var second string
	for _, l := range r.lines() {
		if strings.Contains(l, "turn t2 accepted") {
			second = l
		}
	}
	_, shown, found := strings.Cut(second, "] turn t2 accepted (queue position 1): user: ")
	require.True(t, found, second)
	assert.True(t, strings.HasPrefix(shown, "first line second ää"), shown)
	assert.Len(t, []rune(shown), 200, "cut to 200 characters")
	assert.True(t, strings.HasSuffix(shown, "…"), shown)

	r = ok(t, h, "--timeout", "30s", "follow", "--chat", id, "--json")
	var accepted []agentchat.Event
	for _, l := range r.lines() {
		var ev agentchat.Event
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		if ev.Type == wire.EventTurnAccepted {
			accepted = append(accepted, ev)
		}
	}
	require.Len(t, accepted, 2)
	assert.Equal(t, "What's my name?", accepted[0].Text)
	assert.Equal(t, "Alice", accepted[0].Author)
	assert.LessOrEqual(t, len(accepted[1].Text), wire.AcceptedTextBytes, "a long text is clipped in the event")
	assert.True(t, strings.HasPrefix(accepted[1].Text, "first line\nsecond ä"), accepted[1].Text)
	assert.True(t, strings.HasSuffix(accepted[1].Text, "…"))
}
