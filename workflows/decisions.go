package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

// A decision given is never lost: it is applied at once (an approved call runs and a
// rejected one gets its error result, in the history, while the turn goes on waiting
// for the others), so a document holds every decision in the calls' results. A
// decision the chat cannot apply now, because it is continuing as new or migrating, is
// refused with an error that says where to give it; an export waits for decisions being
// applied and for a resumed turn to reach its answer (a document cannot hold either
// half-done).

// midResume reports whether a resumed turn is running: its user message is in the
// history already, so a snapshot of its start would hold the calls' results without
// the agent's answer.
func (s *chatState) midResume() bool {
	a := s.turnQueue.Active()
	return a != nil && s.history.IndexOf(a.msg.MessageID) < a.mark
}

// approveRefusal is the error for a decision the chat cannot apply now, or nil.
func (s *chatState) approveRefusal() error {
	switch {
	case s.phase == phaseMigrated:
		return s.movedError("", false)
	case s.phase == phaseMigrating:
		return temporal.NewApplicationError(fmt.Sprintf(
			"chat %q is migrating to %s; retry shortly: the decision is then given where the chat went, or here if the migration fails",
			s.chatID, describe(s.transfers.MigrationTarget())), wire.ErrTypeMigrating)
	case s.draining():
		return temporal.NewApplicationError(
			fmt.Sprintf("chat %q is continuing as new; retry and the decision goes to the new run", s.chatID),
			wire.ErrTypeContinuingAsNew)
	}
	return nil
}

// resumeDue reports whether the suspended turn has decisions to apply: every call it
// waits for is decided, or any is (decisions apply one by one).
func (s *chatState) resumeDue() bool {
	return s.approvals.ResumeDue(s.history.OpenCalls)
}

// migrateRefusal is the error for a migration asked for while a decision waits to be
// applied (the document would miss it), or nil.
func (s *chatState) migrateRefusal() error {
	if s.resumeDue() {
		return temporal.NewApplicationError(fmt.Sprintf(
			"chat %q is applying an approval decision; retry shortly", s.chatID), wire.ErrTypeMigrating)
	}
	return nil
}

// awaitExportBoundary waits, before an export reads the chat, until no resumed turn
// runs and no decision waits to be applied, then holds resumptions until release is
// called.
func (s *chatState) awaitExportBoundary(ctx workflow.Context) (release func(), err error) {
	if err := workflow.Await(ctx, func() bool { return !s.midResume() && !s.resumeDue() }); err != nil {
		return nil, err
	}
	return s.transfers.StartExport(), nil
}
