package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/wire"
)

func TestReencryptSignalContinuesAsNewWithTheWholeChat(t *testing.T) {
	e := newEnv(t)
	first := e.send(time.Second, msg("m1", "Hello"))
	e.at(2*time.Second, func() { e.env.SignalWorkflow(wire.ReencryptSignal, nil) })
	e.run(thread(), 0)

	require.True(t, first.done)
	require.NoError(t, first.err)
	next, _ := canInput(t, e)
	require.NotNil(t, next.Carry, "the run handed its state over")
	assert.Len(t, next.Carry.History, 2, "the turn and its reply go with it")
}

func TestWithoutReencryptTheChatDoesNotContinueAsNew(t *testing.T) {
	e := newEnv(t)
	first := e.send(time.Second, msg("m1", "Hello"))
	e.run(thread(), 3*time.Second)
	require.True(t, first.done)
	assert.ErrorContains(t, e.env.GetWorkflowError(), "canceled")
}
