package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

// awaitResumed waits for the resumption of sus that the last decision caused and
// returns its answer (resumedAnswer): the messages of that turn only, up to its end or
// to where it waits again, not those of the queued turns that ran after it; or the
// error of a resumed turn that failed.
func (s *chatState) awaitResumed(ctx workflow.Context, sus *suspension) (wire.TurnResult, error) {
	gen := sus.resumed
	if err := workflow.Await(ctx, func() bool { return sus.resumed > gen }); err != nil {
		return wire.TurnResult{}, err
	}
	if t := sus.turn; t.err != nil {
		return wire.TurnResult{}, t.err
	}
	return sus.answer, nil
}

// resumedAnswer is what the resumption of turn t that began at history index from
// added, as it ends: the tool results and the agents' replies, up to the turn's end or
// to the calls it waits for again (AwaitingApproval); IsComplete as the turn left it.
func (s *chatState) resumedAnswer(t *turn, from int) wire.TurnResult {
	return wire.TurnResult{MessageID: t.msg.MessageID, Messages: boundMessages(s.history.Since(from)),
		IsComplete: s.IsComplete, AwaitingApproval: s.awaitingApproval()}
}
