package workflows_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// A call id is unique in the whole chat, messages moved to the message store (stubs)
// included: a provider that reuses an old call id gets a new one, so no two calls share
// an idempotency key (issue 10: "a tool call runs at most once per call id").
func TestACallIDOfAStubbedMessageIsNotReused(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	e.withStore()
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "lookup", `{"order":1}`)}
	e.send(time.Second, msg("m0", "look up order 1"))
	for i := 1; i <= 20; i++ { // enough turns after m0 for its messages to be stubbed
		e.send(time.Duration(i+1)*time.Second, msg(fmt.Sprintf("m%d", i), "hello"))
	}
	e.at(time.Minute, func() { e.env.SetContinueAsNewSuggested(true) })
	e.run(wire.AgentChatInput{Participants: []string{"clerk"}, Store: "mem"}, 0)
	next, _ := canInput(t, e)
	require.Nil(t, next.Carry.History[1].Contents, "the call's message is a stub")
	require.Equal(t, []string{"c1"}, ft.ran)

	e2, ft2 := newToolEnv(t, 0)
	e2.withStore()
	e2.model.contents["clerk#1"] = []chat.Content{call("c1", "lookup", `{"order":2}`), call("c2", "lookup", `{"order":3}`)}
	o := e2.send(time.Second, msg("m21", "look up orders 2 and 3"))
	e2.run(next, time.Minute)
	require.NoError(t, o.err)
	assert.Equal(t, []string{"m21/1#1", "c2"}, callIDsOf(o.result.Messages[0]), "c1 is taken by the stubbed call")
	assert.ElementsMatch(t, []string{"m21/1#1", "c2"}, ft2.ran)
}

func callIDsOf(m chat.Message) []string {
	var out []string
	for _, c := range m.FunctionCalls() {
		out = append(out, c.CallID)
	}
	return out
}
