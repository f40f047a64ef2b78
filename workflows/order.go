package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

// versionSignalsBeforeUpdate: a SendMessage update first queues the UserMessage signals
// buffered before it (10.S2). Before, its turn was queued at once, ahead of a signal
// that came first in the history but still waited in its channel for the main loop.
const versionSignalsBeforeUpdate = "signals-before-update"

// takeEarlierSignals queues the UserMessage signals that reached the chat before the
// update now being handled, so that turns queue in the order of their events in the
// workflow's history: a signal is recorded when it arrives, an update only when the
// chat accepts it, and the update's handler runs before the main loop takes the
// signals from their channel. While the chat starts, the signals wait: a restored
// document's pending turns, queued at the end of the start, come before them.
func (s *chatState) takeEarlierSignals(ctx workflow.Context) {
	if s.signals.Len() > 0 && s.phase != phaseStarting && changed(ctx, versionSignalsBeforeUpdate) {
		s.drainSignals(ctx)
	}
}

// versionSendAfterStart: a SendMessage update waits, before it is looked up, until
// the chat has started and no import runs, whatever the start does; then the signals
// that came before it are queued, then its turn. Before, only a start that restored a
// document or took over a carry was waited for (versionTurnsAfterRebuild): in a new
// chat, an update handled while the participants were resolved queued its turn ahead
// of a signal that came first, which still waited in its channel for the main loop.
const versionSendAfterStart = "send-after-start"

// awaitTurnOrder waits, in a SendMessage handler, until the chat has started and no
// import runs (versionSendAfterStart; before it, awaitRecord), then queues the
// UserMessage signals that came before the update (takeEarlierSignals), so that the
// update's turn, admitted next, queues behind them and finds the idempotency record whole.
func (s *chatState) awaitTurnOrder(ctx workflow.Context) error {
	if (s.phase == phaseStarting || s.importing()) && changed(ctx, versionSendAfterStart) {
		if err := workflow.Await(ctx, func() bool { return s.phase != phaseStarting && !s.importing() }); err != nil {
			return err
		}
	} else if err := s.awaitRecord(ctx); err != nil {
		return err
	}
	s.takeEarlierSignals(ctx)
	return nil
}

// versionRefuseQueuedUpdates: when a turn starts to wait for an approval, the
// SendMessage turns queued behind it are refused (AwaitingApproval), as one arriving
// during the wait is. Before, they stayed queued and their callers waited for a person.
const versionRefuseQueuedUpdates = "refuse-queued-updates-at-approval"

// refuseQueuedUpdates answers the update turns queued behind a turn that now waits for
// approvals with AwaitingApproval and takes them out of the queue and the idempotency
// record, so each may be sent again, with its messageId, once the calls are decided.
// Signal turns stay queued: nobody waits for them, and they run after the wait.
func (s *chatState) refuseQueuedUpdates(ctx workflow.Context) {
	if !s.hasUpdateTurn() || !changed(ctx, versionRefuseQueuedUpdates) {
		return
	}
	s.refuseUpdateTurns(func(t *turn) error {
		return temporal.NewApplicationError(fmt.Sprintf(
			"chat %q now waits for the approval of tool call(s) %s, queued before turn %q; approve or reject them, then send turn %q again",
			s.chatID, pendingIDs(s.awaitingApproval()), t.msg.MessageID, t.msg.MessageID), wire.ErrTypeAwaitingApproval)
	})
}
