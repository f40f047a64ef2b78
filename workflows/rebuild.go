package workflows

import "go.temporal.io/sdk/workflow"

// versionTurnsAfterRebuild: a SendMessage update that reaches the chat while its
// idempotency record is being rebuilt from a history (a document restored at the start
// or by Import) is looked up once the record is whole, and a continued run takes over
// its carry before it registers its handlers (the SDK runs an update delivered with
// the first workflow task at registration). Before, such an update was looked up in an
// empty record and its turn queued as new: a retried answered messageId ran again,
// with duplicate messageIds in the history (10.S5); and in a continued run's first
// task, the turn was queued before the signals that came before it (10.S4).
const versionTurnsAfterRebuild = "turns-after-record-rebuilt"

// resumeEarly takes over a continued run's carry before the handlers are registered
// (versionTurnsAfterRebuild), so that the first updates find the idempotency record.
func (s *chatState) resumeEarly(ctx workflow.Context) {
	if s.in.Carry == nil || s.in.Validate() != nil || !changed(ctx, versionTurnsAfterRebuild) {
		return
	}
	s.resume(ctx, s.in.Carry)
	s.resumed = true
}

// rebuilding reports whether the chat is not yet ready to look a SendMessage up: the
// start restores a document or takes over a carry (taken over early, its run has not
// begun: the signals that came before the update are taken once it has), or an Import
// loads a document.
func (s *chatState) rebuilding() bool {
	starting := s.phase == phaseStarting && (s.in.Restore != nil || s.in.Carry != nil)
	return starting || s.importing()
}

// awaitRecord waits, in a SendMessage handler, until the idempotency record is whole
// and the run has begun (versionTurnsAfterRebuild), so that a retried messageId gets
// the answer the history holds, and the UserMessage signals that came before the
// update are queued before its turn (takeEarlierSignals). Runs since
// versionSendAfterStart wait for any start instead (awaitTurnOrder).
func (s *chatState) awaitRecord(ctx workflow.Context) error {
	if !s.rebuilding() || !changed(ctx, versionTurnsAfterRebuild) {
		return nil
	}
	return workflow.Await(ctx, func() bool { return !s.rebuilding() })
}
