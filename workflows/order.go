package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

// takeEarlierSignals queues the UserMessage signals that reached the chat before the
// update now being handled, so that turns queue in the order of their events in the
// workflow's history: a signal is recorded when it arrives, an update only when the
// chat accepts it, and the update's handler runs before the main loop takes the
// signals from their channel. While the chat starts, the signals wait: a restored
// document's pending turns, queued at the end of the start, come before them.
func (s *chatState) takeEarlierSignals(ctx workflow.Context) {
	if s.signals.Len() > 0 && s.phase != phaseStarting {
		s.drainSignals(ctx)
	}
}

// awaitTurnOrder waits, in a SendMessage handler, until the chat has started and no
// import runs, whatever the start does (resolving the participants, restoring a
// document, taking over a carry), then queues the UserMessage signals that came before
// the update (takeEarlierSignals), so that the update's turn, admitted next, queues
// behind them and finds the idempotency record whole.
func (s *chatState) awaitTurnOrder(ctx workflow.Context) error {
	if s.phase == phaseStarting || s.importing() {
		if err := workflow.Await(ctx, func() bool { return s.phase != phaseStarting && !s.importing() }); err != nil {
			return err
		}
	}
	s.takeEarlierSignals(ctx)
	return nil
}

// refuseQueuedUpdates answers the update turns queued behind a turn that now waits for
// approvals with AwaitingApproval and takes them out of the queue and the idempotency
// record, so each may be sent again, with its messageId, once the calls are decided.
// Signal turns stay queued: nobody waits for them, and they run after the wait.
func (s *chatState) refuseQueuedUpdates() {
	if !s.turnQueue.HasUpdateTurn() {
		return
	}
	s.turnQueue.WithdrawUpdates(func(t *turn) error {
		return temporal.NewApplicationError(fmt.Sprintf(
			"chat %q now waits for the approval of tool call(s) %s, queued before turn %q; approve or reject them, then send turn %q again",
			s.chatID, pendingIDs(s.approvals.Awaiting()), t.msg.MessageID, t.msg.MessageID), wire.ErrTypeAwaitingApproval)
	})
}
