package workflows

import "go.temporal.io/sdk/workflow"

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
	if s.signals.Len() > 0 && s.status != StatusStarting && changed(ctx, versionSignalsBeforeUpdate) {
		s.drainSignals(ctx)
	}
}
