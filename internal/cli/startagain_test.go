package cli_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
)

// A chat that failed at start (here: an agent no worker knows) never took a turn, so
// its id is not burned: `start --chat ID` again, with agents that exist, starts it.
// A chat that did run keeps its id, and the error says why.
func TestStartAgainAfterAFailedStart(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	line := fails(t, h, "start", "--chat", id, "--agents", "ghost")
	assert.Contains(t, line, `unknown agent id(s) "ghost"`)

	r := ok(t, h, "start", "--chat", id, "--agents", "helper")
	assert.Contains(t, r.out, "started chat "+id)
	r = ok(t, h, "send", "--chat", id, "--id", "m1", "Hello")
	assert.Contains(t, r.out, "[offline] helper")

	line = fails(t, h, "start", "--chat", id, "--agents", "helper")
	assert.Contains(t, line, "chat already exists")
	assert.Contains(t, line, "running")

	// A temporary thread has run and completed: its id is not reused either.
	tmp := testenv.ChatID(t) + "-tmp"
	_, err := h.Client.Run(t.Context(), agentchat.RunOptions{ChatID: tmp, Agents: []string{"helper"}},
		agentchat.SendMessageInput{Text: "Hi"})
	require.NoError(t, err)
	line = fails(t, h, "start", "--chat", tmp, "--agents", "helper")
	assert.Contains(t, line, "chat already exists")
	assert.Contains(t, line, "completed")
}
