package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// Fault 10.S4 of the system test, as it still showed after the drain-in-order fix: a
// UserMessage signal and then a SendMessage that reach a continued run with its first
// workflow task. The SDK runs the update at handler registration, before the run has
// started; the signals waiting in their channel were then left for the main loop, so
// the later Send was answered first. Turns run in arrival order.
func TestSignalThenSendInTheFirstTaskOfAContinuedRunKeepTheirOrder(t *testing.T) {
	_, next := continuedChat(t)

	e2 := newEnv(t)
	e2.at(0, func() { e2.env.SignalWorkflow(wire.UserMessageSignal, msg("s2", "posted first")) })
	later := e2.send(0, msg("u3", "sent second"))
	var hist []chat.Message
	e2.at(time.Minute, func() { hist = e2.history() })
	e2.run(next, 2*time.Minute)
	require.NoError(t, later.rejected)
	require.NoError(t, later.err)
	var users []string
	for _, m := range hist {
		if m.Role == chat.RoleUser {
			users = append(users, m.MessageID)
		}
	}
	assert.Equal(t, []string{"m1", "s2", "u3"}, users, "arrival order")
}
