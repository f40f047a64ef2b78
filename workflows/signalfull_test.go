package workflows_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// A full chat (ChatLengthLimit) that waits for an approval refuses a UserMessage
// signal for its length, as it refuses an update: a signal is spared only the refusal
// for the wait (it runs after it), not the chat's capacity.
func TestFullChatWaitingForApprovalRefusesASignal(t *testing.T) {
	res, err := resolve(context.Background(), wire.ResolveInput{AgentIDs: []string{"clerk"}})
	require.NoError(t, err)
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var history []chat.Message
	for i, size := 0, 0; size < wire.ChatLengthLimit; i++ {
		u := chat.Message{MessageID: fmt.Sprintf("h%d", i), Role: chat.RoleUser, CreatedAt: at}
		r := chat.Message{MessageID: fmt.Sprintf("h%d/1", i), Role: chat.RoleAssistant, AgentID: "clerk", CreatedAt: at}
		history = append(history, u, r)
		size += wire.StubBytes(u) + wire.StubBytes(r)
	}
	history = append(history, chat.TextMessage("m1", chat.RoleUser, "", "refund"),
		chat.Message{MessageID: "m1/1", Role: chat.RoleAssistant, AgentID: "clerk", AuthorName: "Clerk", CreatedAt: at,
			Contents: []chat.Content{call("c1", "refund", `{"amount":5}`)}})
	in := wire.AgentChatInput{Participants: []string{"clerk"},
		Carry: &wire.Carried{Participants: res.Participants, History: history, Runs: 1}}

	e, _ := newToolEnv(t, 0)
	e.at(time.Second, func() { e.env.SignalWorkflow(wire.UserMessageSignal, msg("s1", "one more")) })
	var st wire.StateResult
	e.at(2*time.Second, func() { st = e.state() })
	e.run(in, time.Minute)
	require.Len(t, st.PendingApprovals, 1, "the chat waits for c1")
	assert.Empty(t, st.PendingTurns, "the signal was not queued")
	require.NotNil(t, st.LastError)
	assert.Equal(t, "s1", st.LastError.MessageID)
	assert.Equal(t, wire.ErrTypeNotAcceptingTurns, st.LastError.Type)
	assert.Contains(t, st.LastError.Message, fmt.Sprint(wire.ChatLengthLimit))
}
