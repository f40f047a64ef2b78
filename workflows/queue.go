package workflows

import (
	"iter"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// turn is one user turn from its arrival to its answer.
type turn struct {
	msg    chat.Message
	done   bool
	err    error // set when the turn failed or was refused after being queued
	start  int   // index in history of the turn's first reply (when done without err)
	end    int   // one past its last reply
	signal bool  // arrived by signal: nobody waits for it
	// mark is the history's length when the turn (or its resumption) began: what a
	// failure takes the history back to.
	mark int
	// errBefore is the chat's lastError when the turn (or its resumption) began: its
	// answer clears that one, not one recorded while it ran.
	errBefore *wire.TurnError
	// suspended: the turn waits for the approval of tool calls (approvals.go).
	suspended bool
	// bytes is msg's encoded size as sent (sentBytes), for QueuedTurnsLimit; set when
	// the turn is queued.
	bytes int
	// span is the tracing span of the handler that queued the turn (wire.TraceSpanKey),
	// nil without tracing; the turn runs under it.
	span any
	// cancel cancels the turn's context while it runs; cancelled: CancelTurn stopped
	// it (dropPartial: without its partial reply); partial is the reply in flight when
	// its model call was cancelled (cancel.go).
	cancel      workflow.CancelFunc
	cancelled   bool
	dropPartial bool
	partial     *liveReply
}

// releaseContext lets go of the turn's cancellable context once the turn is over: the
// context stays among the workflow context's children (and keeps the callbacks of the
// turn's activities) until it is cancelled, so each turn of a run would otherwise stay
// in memory until the run ends. Everything the turn started has finished by then, so
// the cancellation cancels nothing and emits no command.
func (t *turn) releaseContext() {
	if t.cancel != nil {
		t.cancel()
		t.cancel = nil
	}
}

// turnQueue is the chat's user turns: those queued, in arrival order; the active one
// (taken from the queue and running, or a suspended turn resuming); and every turn
// accepted, by messageId, which is the chat's idempotency record: a messageId sent
// again finds its turn there (queued, running, waiting or answered) and gets that
// turn's answer instead of running it twice. It owns the three: no other code queues,
// takes or records a turn, so that these rules live here:
//
//   - a turn is queued once: it is recorded under its messageId as it is queued, and a
//     turn recorded without an error is the live turn of its messageId (Live); a failed
//     or refused one may be replaced by a new turn of the same messageId;
//   - turns are taken in arrival order (Next), one at a time: at most one is active,
//     between Begin and End;
//   - a queued turn leaves the queue by being taken (Next), answered with an error
//     (Refuse) or handed on (TakeQueued: a migrated chat forwards its late turns), and
//     stays recorded; or by being withdrawn (Withdraw, WithdrawUpdates), which also
//     takes it out of the record, so that its messageId may be sent again as a new
//     turn;
//   - an answered turn leaves the record only once its messages are all in pages
//     (ForgetPaged): a retry of it is then looked up in the pages (pagedTurn).
//
// The record is not carried: a new run rebuilds it from the history (Rebuild) and
// queues the carried pending turns again (PendingMessages).
type turnQueue struct {
	queue  []*turn
	active *turn
	// turns records every accepted turn by messageId: the idempotency record.
	turns map[string]*turn
}

// newTurnQueue returns an empty queue with an empty record.
func newTurnQueue() turnQueue { return turnQueue{turns: map[string]*turn{}} }

// Lookup returns the turn recorded under messageId id, if any: queued, active,
// waiting for approvals, answered, or failed.
func (q *turnQueue) Lookup(id string) (*turn, bool) {
	t, ok := q.turns[id]
	return t, ok
}

// Live returns the turn recorded under messageId id unless it failed or was refused:
// the turn a retry of id gets the answer of.
func (q *turnQueue) Live(id string) (*turn, bool) {
	t, ok := q.turns[id]
	if !ok || t.err != nil {
		return nil, false
	}
	return t, true
}

// Accepted is the number of turns recorded.
func (q *turnQueue) Accepted() int { return len(q.turns) }

// Enqueue records t under its messageId, in place of a failed turn's record if any,
// and queues it last.
func (q *turnQueue) Enqueue(t *turn) {
	q.turns[t.msg.MessageID] = t
	q.queue = append(q.queue, t)
}

// Record records t, a turn that is not queued (a suspended turn rebuilt from the
// history), under its messageId.
func (q *turnQueue) Record(t *turn) { q.turns[t.msg.MessageID] = t }

// Len is the number of turns queued, not counting the active one.
func (q *turnQueue) Len() int { return len(q.queue) }

// Queued yields the queued turns in order. The caller may change the turns, not the
// queue.
func (q *turnQueue) Queued() iter.Seq[*turn] {
	return func(yield func(*turn) bool) {
		for _, t := range q.queue {
			if !yield(t) {
				return
			}
		}
	}
}

// IsQueued reports whether a queued turn has messageId id.
func (q *turnQueue) IsQueued(id string) bool {
	return slices.ContainsFunc(q.queue, func(t *turn) bool { return t.msg.MessageID == id })
}

// HasUpdateTurn reports whether an update waits for a queued turn.
func (q *turnQueue) HasUpdateTurn() bool {
	return slices.ContainsFunc(q.queue, func(t *turn) bool { return !t.signal })
}

// Next takes the first queued turn out of the queue, nil when none is queued. The
// caller runs it (Begin).
func (q *turnQueue) Next() *turn {
	if len(q.queue) == 0 {
		return nil
	}
	t := q.queue[0]
	q.queue = q.queue[1:]
	return t
}

// Begin makes t the active turn: one taken by Next, or a suspended turn resuming.
func (q *turnQueue) Begin(t *turn) { q.active = t }

// End records that no turn is active.
func (q *turnQueue) End() { q.active = nil }

// Active returns the active turn, nil when none runs.
func (q *turnQueue) Active() *turn { return q.active }

// Withdraw takes the first queued turn with messageId id out of the queue and out of
// the record, and returns it; nil when none is queued.
func (q *turnQueue) Withdraw(id string) *turn {
	i := slices.IndexFunc(q.queue, func(t *turn) bool { return t.msg.MessageID == id })
	if i < 0 {
		return nil
	}
	t := q.queue[i]
	q.queue = slices.Delete(q.queue, i, i+1)
	delete(q.turns, id)
	return t
}

// WithdrawUpdates answers every queued turn that an update waits for with errFor's
// error and takes it out of the queue and the record, so that it may be sent again
// with its messageId. Signal turns stay queued.
func (q *turnQueue) WithdrawUpdates(errFor func(*turn) error) {
	q.queue = slices.DeleteFunc(q.queue, func(t *turn) bool {
		if t.signal {
			return false
		}
		t.done, t.err = true, errFor(t)
		delete(q.turns, t.msg.MessageID)
		return true
	})
}

// Refuse answers every queued turn with errFor's error and empties the queue; the
// turns stay recorded, as failed.
func (q *turnQueue) Refuse(errFor func(*turn) error) {
	for _, t := range q.queue {
		t.done, t.err = true, errFor(t)
	}
	q.queue = nil
}

// TakeQueued empties the queue and returns the turns it held, in order, for the
// caller to hand on; they stay recorded.
func (q *turnQueue) TakeQueued() []*turn {
	ts := q.queue
	q.queue = nil
	return ts
}

// PendingMessages returns the queued turns' messages, in order (nil when none is
// queued): what continue-as-new carries as pending turns.
func (q *turnQueue) PendingMessages() []chat.Message {
	var msgs []chat.Message
	for _, t := range q.queue {
		msgs = append(msgs, t.msg)
	}
	return msgs
}

// Bytes is the encoded size of the turns waiting, as their clients sent them (without
// the time the chat adds): the active turn's message and the queue's, what an export's
// snapshot carries as pending turns.
func (q *turnQueue) Bytes() int {
	n := 0
	if q.active != nil {
		n += q.active.bytes
	}
	for _, t := range q.queue {
		n += t.bytes
	}
	return n
}

// StubBytes is what the queued turns count for ChatLengthLimit: the size of their
// messages' references (wire.StubBytes).
func (q *turnQueue) StubBytes() int {
	n := 0
	for _, t := range q.queue {
		n += wire.StubBytes(t.msg)
	}
	return n
}

// ForgetPaged takes out of the record the answered turns whose user message is
// before base, in a page (with all its replies, or the first of them when a turn
// longer than the window was cut): a retry of one is looked up in the pages
// (pagedTurn), which reads the rest from the window, as after a continue-as-new.
func (q *turnQueue) ForgetPaged(base int) {
	for id, t := range q.turns {
		if t.done && t.err == nil && !t.suspended && t.end > 0 && t.start-1 < base {
			delete(q.turns, id)
		}
	}
}

// Rebuild recreates the record from h, in place of the one held: each user message
// and the replies up to the next user message are one turn, answered. A turn whose replies end on tool results that are not the
// round limit's (wire.FailedAfterTools) is a resumed turn that failed after its tools
// ran: it is recorded as failed, so that a retry of its messageId is refused as it was
// before the continue-as-new, export or migration.
func (q *turnQueue) Rebuild(h *history) {
	q.turns = map[string]*turn{}
	var failed []*turn
	for i, end := range h.Turns() {
		m, _ := h.At(i)
		t := &turn{msg: m, done: true, start: i + 1, end: end}
		q.turns[m.MessageID] = t
		if last, _ := h.At(end - 1); end > i+1 && wire.FailedAfterTools(last) {
			failed = append(failed, t)
		}
	}
	for _, t := range failed {
		t.err = temporal.NewApplicationError("it failed in an earlier run, or in the chat this one was restored from", wire.ErrTypeTurnFailed)
	}
}

// Answered counts the recorded turns that were answered: not failed, not waiting for
// approvals.
func (q *turnQueue) Answered() int {
	n := 0
	for _, t := range q.turns {
		if t.err == nil && !t.suspended {
			n++
		}
	}
	return n
}
