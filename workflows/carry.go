package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// What a run carries inline.
const (
	// carryInlineBytes is the most a continue-as-new input carries (encoded) before older
	// message bodies go to the message store.
	carryInlineBytes = 512 << 10
	// messageBatchBytes is the most (encoded) of messages one StoreMessages or
	// ForwardTurns input carries (a larger message alone), a quarter of a payload.
	messageBatchBytes = 512 << 10
	// carryTailBytes is how much of the latest messages' bodies (encoded) stays in the
	// workflow when older ones move to the store; past CarryLimit those move too.
	carryTailBytes = 256 << 10
	// keepInline is how many recent messages stay in the workflow when older ones
	// move to the store.
	keepInline   = 32
	storeTimeout = time.Minute
)

// resume takes over a previous run's state: the carry by assignment, then what is
// rebuilt from it (channels, the idempotency record, a suspension, the queued turns).
func (s *chatState) resume(ctx workflow.Context, c *wire.Carried) {
	s.Carried = *c
	s.history = newHistory(c.History, c.Paged)
	s.History, s.Paged, s.Channels, s.Pending, s.Stream = nil, nil, nil, nil, nil
	s.approvals, s.Decisions = newApprovals(c.Decisions), nil
	s.resumeEvents(c.Stream)
	s.channels = resumeChannels(c.Channels)
	s.transfers.Resume(c.Restored)
	s.Restored = nil
	s.turnQueue.Rebuild(&s.history)
	s.detectSuspension(ctx)
	for _, m := range c.Pending {
		s.enqueue(ctx, m, true)
	}
}

// continueAsNewDue reports whether this run should hand over to a new one: Temporal
// suggests it, or the run's history passed its budget.
func (s *chatState) continueAsNewDue(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	maxEvents, maxBytes := s.in.HistoryBudget.Effective()
	return s.reencrypt || info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= maxEvents ||
		info.GetCurrentHistorySize() >= maxBytes
}

// continueAsNew drains the run and hands its state to a new run: it refuses new
// updates (retryable; clients retry into the new run), answers the turns already
// accepted, waits for every handler, takes the signals still buffered as pending
// turns, moves older message bodies to the store when the carry would be too large,
// and continues as new with the same input and the carried state. When the carry
// still passes CarryLimit (the store refused the bodies), it does not hand over: the
// chat stalls (stall) and continueAsNew returns nil.
func (s *chatState) continueAsNew(ctx workflow.Context) error {
	s.must(s.to(phaseDraining))
	// An Approve taken before the run began draining waits for its decision to be
	// applied: the drain applies it, or the run would wait for it forever.
	resumeDue := s.readyToResume
	for {
		if t := s.nextDrainTurn(); t != nil {
			s.runTurn(ctx, t)
			continue
		}
		if resumeDue() {
			s.resumeSuspended(ctx)
			continue
		}
		if err := workflow.Await(ctx, func() bool {
			return s.turnQueue.HasUpdateTurn() || resumeDue() || workflow.AllHandlersFinished(ctx)
		}); err != nil {
			return err
		}
		if !s.turnQueue.HasUpdateTurn() && !resumeDue() {
			break
		}
	}
	if s.lingerForSubscribers(ctx) {
		_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	}
	s.drainSignals(ctx)
	next := s.in
	next.Restore = nil
	s.seal(ctx)
	next.Carry = s.spillToFit(ctx, next)
	if n := carryBytes(next); n > wire.CarryLimit {
		s.stall(ctx, n)
		return nil
	}
	return workflow.NewContinueAsNewError(ctx, wire.WorkflowType, next)
}

// nextDrainTurn takes the next turn the draining run answers: while an update waits for
// a queued turn, the first queued turn, so that turns are answered in order up to the
// last one an update waits for (the others go to the next run); while a turn waits
// for an approval, none (handOverUpdateTurns).
func (s *chatState) nextDrainTurn() *turn {
	if s.approvals.Suspended() != nil {
		s.handOverUpdateTurns()
		return nil
	}
	if !s.turnQueue.HasUpdateTurn() {
		return nil
	}
	return s.turnQueue.Next()
}

// handOverUpdateTurns answers the update turns queued behind a suspended turn with the
// retryable ContinuingAsNew: they cannot run before the approval, and the run must not
// wait for one. Their clients send them again to the new run, behind the turns carried.
func (s *chatState) handOverUpdateTurns() {
	s.turnQueue.WithdrawUpdates(func(t *turn) error {
		return temporal.NewApplicationError(fmt.Sprintf(
			"chat %q is continuing as new while it waits for an approval; retry and turn %q goes to the new run", s.chatID, t.msg.MessageID),
			wire.ErrTypeContinuingAsNew)
	})
}

// drainSignals takes every UserMessage signal buffered in the channel, in order, and
// the Reencrypt signals (takeReencrypt).
func (s *chatState) drainSignals(ctx workflow.Context) {
	s.takeReencrypt()
	s.takePublished() // late batches of a finished reply: dropped
	for {
		var in wire.SendMessageInput
		if !s.signals.ReceiveAsync(&in) {
			return
		}
		s.takeSignal(ctx, in)
	}
}

// carry captures the state for the next run: the carried part of the state by
// assignment, with the channels, the queued turns and the next run's number.
func (s *chatState) carry() *wire.Carried {
	c := s.Carried
	c.Channels, c.Pending = s.channels.Document(), nil
	c.History, c.Paged = s.history.Carry()
	c.Decisions = s.approvals.Carry()
	c.Stream = s.carryEvents()
	c.Pending = s.turnQueue.PendingMessages()
	c.Restored = s.transfers.Carry()
	c.Runs++
	return &c
}

// historyHasStubs reports whether any message in msgs is a stub.
func historyHasStubs(msgs []chat.Message) bool {
	for _, m := range msgs {
		if m.Contents == nil {
			return true
		}
	}
	return false
}
