package workflows

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// Defaults of HistoryBudget and of what a run carries inline.
const (
	defaultMaxEvents = 4000
	defaultMaxBytes  = 4 << 20
	// carryInlineBytes is the most a continue-as-new input carries (encoded) before older
	// message bodies go to the message store.
	carryInlineBytes = 512 << 10
	// messageBatchBytes is the most (encoded) of messages one StoreMessages or
	// ForwardTurns input carries (a larger message alone), a quarter of a payload; spill,
	// in runs before carryBySizeChange, cuts its batches at it by content bytes.
	messageBatchBytes = 512 << 10
	// carryTailBytes is how much of the latest messages' bodies (encoded) stays in the
	// workflow when older ones move to the store; past CarryLimit those move too.
	carryTailBytes = 256 << 10
	// carryHardBytes is, in runs before carryBySizeChange (spill), the size of the
	// history's contents past which moving bodies to the store is not optional and is
	// retried until the store answers. spillToFit measures against CarryLimit instead.
	carryHardBytes = 1536 << 10
	// keepInline is how many recent messages stay in the workflow when older ones
	// move to the store.
	keepInline   = 32
	storeTimeout = time.Minute
)

// resume takes over a previous run's state: the carry by assignment, then what is
// rebuilt from it (channels, the idempotency record, a suspension, the queued turns).
func (s *chatState) resume(ctx workflow.Context, c *wire.Carried) {
	s.Carried = *c
	s.Channels, s.Pending, s.stubs, s.Stream = nil, nil, stubTotal{}, nil
	s.resumeEvents(c.Stream)
	for _, ch := range c.Channels {
		s.channels = append(s.channels, &channel{key: ch.ChannelKey, typ: ch.ChannelType, state: ch.ChannelState})
	}
	if c.Restored != nil {
		r := *c.Restored
		s.Restored = &r
	}
	s.rebuildTurns(ctx)
	s.TurnCount = c.TurnCount // rebuildTurns counts the history's turns; the carried count stands
	s.detectSuspension(ctx)
	for _, m := range c.Pending {
		s.enqueue(ctx, m, true)
	}
}

// continueAsNewDue reports whether this run should hand over to a new one: Temporal
// suggests it, or the run's history passed its budget.
func (s *chatState) continueAsNewDue(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	b := s.in.HistoryBudget
	maxEvents, maxBytes := b.MaxEvents, b.MaxBytes
	if maxEvents <= 0 {
		maxEvents = defaultMaxEvents
	}
	if maxBytes <= 0 {
		maxBytes = defaultMaxBytes
	}
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
	// applied: the drain applies it (versioned), or the run would wait for it forever.
	resumes := changed(ctx, versionResumeWhileDraining)
	resumeDue := func() bool { return resumes && s.readyToResume() }
	inOrder := s.hasUpdateTurn() && changed(ctx, versionDrainInOrder)
	for {
		if t := s.nextDrainTurn(inOrder); t != nil {
			s.runTurn(ctx, t)
			continue
		}
		if resumeDue() {
			s.resumeSuspended(ctx)
			continue
		}
		if err := workflow.Await(ctx, func() bool {
			return s.hasUpdateTurn() || resumeDue() || workflow.AllHandlersFinished(ctx)
		}); err != nil {
			return err
		}
		if !s.hasUpdateTurn() && !resumeDue() {
			break
		}
	}
	if s.lingerForSubscribers(ctx) {
		_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	}
	s.drainSignals(ctx)
	s.carryStream = changed(ctx, versionStreamCarry)
	next := s.in
	next.Restore = nil
	if !changed(ctx, carryBySizeChange) {
		s.spill(ctx)
		next.Carry = s.carry()
	} else {
		next.Carry = s.spillToFit(ctx, next)
	}
	if n := carryBytes(next); n > wire.CarryLimit && changed(ctx, versionStallOversizeCarry) {
		s.stall(ctx, n)
		return nil
	}
	return workflow.NewContinueAsNewError(ctx, wire.WorkflowType, next)
}

// versionStreamCarry: the carry takes the chat's event log (without the text deltas of
// finished messages, wire.StreamCarry); before, a run carried no log.
const versionStreamCarry = "stream-carry"

// versionDrainInOrder: a draining run answers the queued turns in order up to the last
// one an update waits for; before, it took the update turns first, so a signalled turn
// queued before them was answered after them, in the next run.
const versionDrainInOrder = "drain-in-order"

// nextDrainTurn takes the next turn the draining run answers: while an update waits for
// a queued turn, the first queued turn (inOrder), or that update's turn (before
// versionDrainInOrder).
func (s *chatState) nextDrainTurn(inOrder bool) *turn {
	if !inOrder {
		return s.nextUpdateTurn()
	}
	if s.suspension != nil {
		s.handOverUpdateTurns()
		return nil
	}
	if !s.hasUpdateTurn() {
		return nil
	}
	t := s.queue[0]
	s.queue = s.queue[1:]
	return t
}

// handOverUpdateTurns answers the update turns queued behind a suspended turn with the
// retryable ContinuingAsNew: they cannot run before the approval, and the run must not
// wait for one. Their clients send them again to the new run, behind the turns carried.
func (s *chatState) handOverUpdateTurns() {
	s.refuseUpdateTurns(func(t *turn) error {
		return temporal.NewApplicationError(fmt.Sprintf(
			"chat %q is continuing as new while it waits for an approval; retry and turn %q goes to the new run", s.chatID, t.msg.MessageID),
			wire.ErrTypeContinuingAsNew)
	})
}

// refuseUpdateTurns answers every queued turn that an update waits for with errFor's
// error and takes it out of the queue and the idempotency record, so that it may be
// sent again with its messageId. Signal turns stay queued.
func (s *chatState) refuseUpdateTurns(errFor func(*turn) error) {
	s.queue = slices.DeleteFunc(s.queue, func(t *turn) bool {
		if t.signal {
			return false
		}
		t.done, t.err = true, errFor(t)
		delete(s.turns, t.msg.MessageID)
		return true
	})
}

// hasUpdateTurn reports whether an update waits for a queued turn.
func (s *chatState) hasUpdateTurn() bool {
	return slices.ContainsFunc(s.queue, func(t *turn) bool { return !t.signal })
}

// nextUpdateTurn takes the first queued turn that an update waits for, if any.
func (s *chatState) nextUpdateTurn() *turn {
	for i, t := range s.queue {
		if !t.signal {
			s.queue = append(s.queue[:i:i], s.queue[i+1:]...)
			return t
		}
	}
	return nil
}

// drainSignals takes every UserMessage signal buffered in the channel, in order.
func (s *chatState) drainSignals(ctx workflow.Context) {
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
	c.Channels, c.Pending = s.documentChannels(), nil
	if s.carryStream {
		c.Stream = s.carryEvents()
	}
	for _, t := range s.queue {
		c.Pending = append(c.Pending, t.msg)
	}
	if s.Restored != nil {
		r := *s.Restored
		c.Restored = &r
	}
	c.Runs++
	return &c
}

// spill moves the bodies of all but the latest messages to the message store when the
// chat names one, or when what the workflow holds would make the carry too large.
// What stays in the history are stubs: id, role, author, agent and time.
// A store that does not answer leaves the bodies in the workflow.
func (s *chatState) spill(ctx workflow.Context) {
	inline := size(s.History)
	if s.in.Store == "" && inline <= carryInlineBytes {
		return
	}
	// While the carry would fit anyway, an unreachable store only postpones the move
	// to the next hand-over; past carryHardBytes it is retried until the store answers.
	policy := &temporal.RetryPolicy{MaximumInterval: 30 * time.Second}
	if inline <= carryHardBytes {
		policy.MaximumAttempts = 3
	}
	end := len(s.History) - keepInline
	var batch []chat.Message
	var idx []int
	flush := func() {
		if len(batch) == 0 {
			return
		}
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: storeTimeout,
			RetryPolicy: policy})
		var res wire.StoreMessagesResult
		err := workflow.ExecuteActivity(actx, wire.StoreMessagesActivity,
			wire.StoreMessagesInput{ChatID: s.chatID, Store: orDefault(s.Store, s.in.Store), Messages: batch}).Get(ctx, &res)
		if err != nil {
			s.storeFailed(ctx, err)
			return
		}
		s.Store = res.Store
		for _, i := range idx {
			s.CallIDs = s.CallIDs.AddCalls(s.History[i])
			s.History[i].Contents = nil
		}
		batch, idx = nil, nil
	}
	batchBytes := 0
	for i := 0; i < end; i++ {
		m := s.History[i]
		if m.Contents == nil {
			continue
		}
		batch, idx = append(batch, m), append(idx, i)
		if batchBytes += m.Size(); batchBytes >= messageBatchBytes {
			flush()
			batchBytes = 0
		}
	}
	flush()
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
