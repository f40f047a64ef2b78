package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

// A chat is never ended by Temporal for its size. Temporal terminates a run whose
// continue-as-new input passes its payload limit, so the input is kept under CarryLimit
// by moving message bodies to the message store. When the store refuses them (it
// holds one of the ids with another body, it is not configured on the worker, it
// cannot seal them) and what the run would carry still passes CarryLimit, the run does
// not hand over: the chat stalls. It takes no more turns (StoreRefused, in State's
// lastError and to every sender; a retried turn still gets its first answer; queued
// turns stay queued, and a migration takes them along), and stays readable,
// exportable and migratable, which is how it goes on: in another chat whose store
// takes the bodies. A stalled run keeps its history small: it runs no turns.

// stall stops the chat taking turns, since its carry of n bytes passes CarryLimit, and
// returns the run from draining to running, where it serves queries, exports and
// migrations.
func (s *chatState) stall(ctx workflow.Context, n int) {
	why := "the message store refused its message bodies"
	if s.storeErr != nil {
		why += ": " + errorMessage(s.storeErr)
	}
	msg := fmt.Sprintf("chat %q takes no more turns: what it must carry to its next run is %d bytes, over the %d a run may carry (CarryLimit), because %s; "+
		"it can still be read, exported and migrated: migrate it, or export it and import it into a new chat, to go on",
		s.chatID, n, wire.CarryLimit, why)
	s.stalled = temporal.NewApplicationError(msg, wire.ErrTypeStoreRefused)
	s.LastError = &wire.TurnError{Type: wire.ErrTypeStoreRefused, Message: msg}
	s.must(s.settle(phaseRunning)) // under a migration admitted while draining, if one is
	workflow.GetLogger(ctx).Error("chat stalled: its carry passes CarryLimit", "bytes", n, "limit", wire.CarryLimit, "storeError", s.storeErr)
}

// storeFailed records and logs a StoreMessages call that failed, in the store's words:
// unreachable (retried later, the bodies stay for now) or refused.
func (s *chatState) storeFailed(ctx workflow.Context, err error) {
	s.storeErr = err
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == wire.ErrTypeStoreUnavailable {
		workflow.GetLogger(ctx).Warn("message store unavailable; bodies stay in the workflow for now", "error", err)
		return
	}
	workflow.GetLogger(ctx).Error("message store refused the bodies; they stay in the workflow", "error", err)
}
