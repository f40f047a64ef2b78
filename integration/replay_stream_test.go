package integration_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// A streamed chat (the replay scenario "stream-stop"): a turn followed to its end
// (publish signals, poll updates), a turn nobody follows stopped mid-reply (the stop
// waits for the text held back), a followed turn stopped mid-reply, and a last turn
// answered whole.
func captureStreamStop(t *testing.T, name string) {
	long := strings.TrimSpace(strings.Repeat("lorem ipsum dolor sit amet ", 20))
	h := replayHarness(t, name, testenv.Options{Model: offline.Options{ChunkDelay: 30 * time.Millisecond,
		Scripts: map[string][]offline.Reply{"helper": {{Text: "Hello there, Alice."}, {Text: long}, {Text: long}, {Text: "Done."}}}}})
	id := replayChat(t, name, h)
	startReplayChat(t, h, id, agentchat.StartOptions{})

	follow := func(mid, text string, stopAfter int) {
		deltas := 0
		for ev, err := range h.Client.SendStream(ctxFor(t), id, agentchat.SendMessageInput{MessageID: mid, Text: text}) {
			require.NoError(t, err)
			if ev.Type == wire.EventTextDelta {
				if deltas++; deltas == stopAfter {
					_, err := h.Client.CancelTurn(ctxFor(t), id, agentchat.CancelTurnInput{})
					require.NoError(t, err)
				}
			}
		}
	}
	follow("m1", "Hello", 0)

	done := make(chan error, 1)
	go func() {
		_, err := h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m2", Text: "Tell me a long story"})
		done <- err
	}()
	require.Eventually(t, func() bool {
		st, err := h.Client.State(ctxFor(t), id)
		return err == nil && st.MessageCount >= 3
	}, 10*time.Second, 20*time.Millisecond, "m2 was not taken")
	// The reply is under way, and past wire.StreamFollowGrace of m1's last poll (which
	// m2's first event answered): nobody follows it.
	time.Sleep(wire.StreamFollowGrace + 500*time.Millisecond)
	_, err := h.Client.CancelTurn(ctxFor(t), id, agentchat.CancelTurnInput{})
	require.NoError(t, err)
	<-done

	follow("m3", "Another long one", 3)
	send(t, h, id, "m4", "Thanks")
	saveRun(t, h, id, "", name, enumspb.EVENT_TYPE_UNSPECIFIED) // a stopped turn's stream may end on a workflow task
}

// Streamed turns, followed from the start, until the chat continues as new (the
// replay scenario "stream-continue-as-new"): the first run carries its stream into the
// next and lingers for the follower's polls; the second takes a streamed turn.
func captureStreamContinueAsNew(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{Model: offline.Options{ChunkDelay: 20 * time.Millisecond}})
	id := replayChat(t, name, h)
	startReplayChat(t, h, id, agentchat.StartOptions{HistoryBudget: wire.HistoryBudget{MaxEvents: 150}})
	ctx, stopFollowing := context.WithCancel(ctxFor(t))
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		for range h.Client.Follow(ctx, id, 0) {
		}
	}()
	streamed := func(mid, text string) {
		for _, err := range h.Client.SendStream(ctxFor(t), id, agentchat.SendMessageInput{MessageID: mid, Text: text}) {
			require.NoError(t, err)
		}
	}
	for i := 1; ; i++ {
		require.Less(t, i, 30, "the chat never continued as new")
		streamed(fmt.Sprintf("m%d", i), fmt.Sprintf("turn %d, tell me more", i))
		st, err := h.Client.State(ctxFor(t), id)
		require.NoError(t, err)
		if st.Runs >= 1 {
			streamed("after", "the first turn of the second run")
			break
		}
	}
	stopFollowing()
	<-followed
	second := saveRun(t, h, id, "", name+"-2", enumspb.EVENT_TYPE_UNSPECIFIED)
	first := second.Events[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
	require.NotEmpty(t, first, "the second run names the first")
	saveRun(t, h, id, first, name+"-1", enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW)
}
