package integration_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// followAll reads Follow from offset to its end, within 30 s; it fails the test on an
// error or when the stream does not end.
func followAll(t *testing.T, h *testenv.Harness, id string, from int64) []agentchat.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctxFor(t), 30*time.Second)
	defer cancel()
	evs := collect(t, h.Client.Follow(ctx, id, from))
	require.NoError(t, ctx.Err(), "Follow of a closed chat ends by itself")
	return evs
}

// Following a closed chat (completed, terminated) gives the events its last run holds
// from the offset asked for, then ends; an offset past its end ends at once.
func TestStreamFollowAClosedChat(t *testing.T) {
	h := testenv.New(t, testenv.Options{Model: offline.Options{ChunkDelay: 2 * time.Millisecond,
		Scripts: map[string][]offline.Reply{"reviewer": {{Text: "APPROVED"}}}}})
	completed, terminated := testenv.ChatID(t), testenv.ChatID(t)+"-t"
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: completed, Participants: []string{"writer", "reviewer"},
		Termination: agentchat.TerminationStrategy{Type: strategies.TerminationRegex, Pattern: `\bAPPROVED\b`,
			Agents: []string{"reviewer"}, MaxIterations: 4}})
	require.NoError(t, err)
	require.True(t, send(t, h, completed, "t1", "A slogan for tea").IsComplete)
	waitStatus(t, h, completed, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)

	seedThread(t, h, terminated)
	require.NoError(t, h.Temporal.TerminateWorkflow(ctxFor(t), terminated, "", "test"))
	waitStatus(t, h, terminated, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED)

	for _, id := range []string{completed, terminated} {
		t.Run(id, func(t *testing.T) {
			all := followAll(t, h, id, 0)
			require.NotEmpty(t, all)
			types := eventTypes(all)
			assert.Equal(t, wire.EventTurnAccepted, types[0], "%v", types)
			assert.Equal(t, wire.EventTurnDone, types[len(types)-1], "%v", types)
			assertStreamMatchesHistory(t, h, id, all)

			mid := all[len(all)/2]
			assert.Equal(t, all[len(all)/2:], followAll(t, h, id, mid.Offset), "from an offset, the rest")

			end := all[len(all)-1].Offset + 1
			start := time.Now()
			assert.Empty(t, followAll(t, h, id, end+5), "past the end: nothing")
			assert.Less(t, time.Since(start), 5*time.Second, "past the end ends at once")
		})
	}
}

// A chat that closes while a follower waits for its next event ends the follower's
// stream, with every event up to the close and no error: a chat completed by its
// turn, and one terminated while its reply streams.
func TestStreamFollowEndsWhenTheChatCloses(t *testing.T) {
	h := testenv.New(t, testenv.Options{Model: offline.Options{ChunkDelay: 40 * time.Millisecond,
		Scripts: map[string][]offline.Reply{"reviewer": {{Text: "APPROVED"}}}}})
	follow := func(id string) <-chan []agentchat.Event {
		out := make(chan []agentchat.Event, 1)
		go func() {
			ctx, cancel := context.WithTimeout(ctxFor(t), time.Minute)
			defer cancel()
			var evs []agentchat.Event
			for ev, err := range h.Client.Follow(ctx, id, 0) {
				if !assert.NoError(t, err, "chat %s", id) {
					break
				}
				evs = append(evs, ev)
			}
			out <- evs
		}()
		return out
	}
	ended := func(id string, followed <-chan []agentchat.Event) []agentchat.Event {
		select {
		case evs := <-followed:
			return evs
		case <-time.After(time.Minute):
			t.Fatalf("Follow of chat %s did not end when it closed", id)
			return nil
		}
	}

	completed := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: completed, Participants: []string{"writer", "reviewer"},
		Termination: agentchat.TerminationStrategy{Type: strategies.TerminationRegex, Pattern: `\bAPPROVED\b`,
			Agents: []string{"reviewer"}, MaxIterations: 4}})
	require.NoError(t, err)
	followed := follow(completed)
	require.True(t, send(t, h, completed, "t1", "A slogan for tea").IsComplete)
	evs := ended(completed, followed)
	assertStreamMatchesHistory(t, h, completed, evs)
	assert.Equal(t, wire.EventTurnDone, evs[len(evs)-1].Type)

	terminated := testenv.ChatID(t) + "-t"
	_, err = h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: terminated, Participants: []string{"helper"}})
	require.NoError(t, err)
	followed = follow(terminated)
	_, err = h.Client.Post(ctxFor(t), terminated, agentchat.SendMessageInput{MessageID: "t1", Text: "Hello"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		var next int64
		v, err := h.Temporal.QueryWorkflow(ctxFor(t), terminated, "", wire.StreamOffsetQuery)
		return err == nil && v.Get(&next) == nil && next >= 3 // turnAccepted, agentStarted, a delta
	}, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, h.Temporal.TerminateWorkflow(ctxFor(t), terminated, "", "test"))
	evs = ended(terminated, followed)
	require.NotEmpty(t, evs)
	assert.Equal(t, followAll(t, h, terminated, 0), evs, "the follower saw every event the closed chat holds")
}
