package workflows

import (
	"github.com/agentchat/agentchat/wire"
)

// resumedAnswer is what the resumption of turn t that began at history index from
// added, as it ends: the tool results and the agents' replies, up to the turn's end or
// to the calls it waits for again (AwaitingApproval); IsComplete as the turn left it.
func (s *chatState) resumedAnswer(t *turn, from int) wire.TurnResult {
	return wire.TurnResult{MessageID: t.msg.MessageID, Messages: boundMessages(s.history.Since(from)),
		IsComplete: s.IsComplete, AwaitingApproval: s.approvals.Awaiting()}
}
