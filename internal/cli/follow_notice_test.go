package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentchat/agentchat/internal/syncbuf"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/cli"
	"github.com/agentchat/agentchat/internal/testenv"
)

// follow that hears nothing for waitNotice says why that may be (an idle chat, or a
// worker gone), once; one that hears an event says nothing of the kind.
func TestFollowSaysWhenNoEventComes(t *testing.T) {
	defer cli.SetWaitNotice(300 * time.Millisecond)()
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(t.Context(), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	_, err = h.Client.Send(t.Context(), id, agentchat.SendMessageInput{MessageID: "m1", Text: "Hello"})
	require.NoError(t, err)

	// No --task-queue: the notice names the queue the chat runs on, not the flag's.
	follow := func(from string) (string, string) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		var out, errOut syncbuf.Buffer
		cli.Execute(ctx, []string{"--address", testenv.Address(t), "follow", "--chat", id, "--from", from},
			cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
		return out.String(), errOut.String()
	}
	_, errOut := follow("999")
	assert.Equal(t, 1, strings.Count(errOut, "no events yet from chat "+id), errOut)
	assert.Contains(t, errOut, "--task-queue "+h.TaskQueue)

	out, errOut := follow("0")
	assert.Contains(t, out, "Hello", "the chat's events from its start")
	assert.NotContains(t, errOut, "no events yet")
}
