package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// approvals are the chat's tool calls that wait for a person: the turn suspended while
// they wait, and the decisions given (Approve), by callId. It owns both: no other code
// suspends or resumes a turn or records a decision, so that these rules live here:
//
//   - at most one turn waits at a time (Suspend); while one does, the chat takes no
//     other turn (canTakeTurn);
//   - a decision is recorded for a call the waiting turn waits for (validateApprove)
//     and stays until applied: the call has its result in the history (Applied), which
//     then holds the decision (earlierDecision reads it back). The first decision
//     stands (decided.go);
//   - the turn resumes once every call it waits for is decided, or any is (ResumeDue:
//     decisions apply one by one); an Approve waits for the resumption its decision
//     caused (AwaitResumption) and answers with what that resumption added.
//
// The suspension is not carried: it can be derived from the history (the tool calls
// open at its end), and a new run, an import or a migration's target rebuilds it
// (detectSuspension). The decisions not yet applied are carried (Carry,
// wire.Carried.Decisions).
type approvals struct {
	// waiting is the turn waiting for approvals, nil when none waits.
	waiting *suspension
	// resuming is the suspension whose turn runs again, between Resume and Resumed.
	resuming *suspension
	// decisions are the decisions given and not yet applied, by callId; nil until the
	// first.
	decisions map[string]wire.Decision
}

// suspension is a turn waiting for approvals. Everything in it can be derived from the
// history (the trailing tool calls without results), so it survives continue-as-new,
// export and migration without being carried.
type suspension struct {
	turn    *turn
	agent   wire.Participant
	pending []wire.PendingApproval
	// resumed counts resumptions, so Approve callers wait for the one they caused.
	resumed int
	// answer is what the last resumption added to the turn (up to its end, or to where
	// it waits again): what Approve answers.
	answer wire.TurnResult
}

// newApprovals returns the approvals of a chat whose carry held decisions (nil:
// none), taking the map over. No turn waits until Suspend.
func newApprovals(decisions map[string]wire.Decision) approvals {
	return approvals{decisions: decisions}
}

// Carry returns the decisions as continue-as-new carries them (wire.Carried.Decisions).
func (a *approvals) Carry() map[string]wire.Decision { return a.decisions }

// Suspend records that turn t waits, in agent's tool round, for the approval of the
// pending calls (none: the open calls of tools that need no approval wait only to
// run).
func (a *approvals) Suspend(t *turn, agent wire.Participant, pending []wire.PendingApproval) {
	a.waiting = &suspension{turn: t, agent: agent, pending: pending}
}

// Suspended returns the turn that waits for approvals, nil when none waits.
func (a *approvals) Suspended() *turn {
	if a.waiting == nil {
		return nil
	}
	return a.waiting.turn
}

// WaitsFor reports whether callID is one of the calls the waiting turn waits for
// (decided or not); false when no turn waits.
func (a *approvals) WaitsFor(callID string) bool {
	return a.waiting != nil &&
		slices.ContainsFunc(a.waiting.pending, func(p wire.PendingApproval) bool { return p.CallID == callID })
}

// Awaiting lists the calls the waiting turn waits for that have no decision yet, nil
// when no turn waits.
func (a *approvals) Awaiting() []wire.PendingApproval {
	if a.waiting == nil {
		return nil
	}
	var out []wire.PendingApproval
	for _, p := range a.waiting.pending {
		if !a.Decided(p.CallID) {
			out = append(out, p)
		}
	}
	return out
}

// Decided reports whether callID has a decision not yet applied.
func (a *approvals) Decided(callID string) bool {
	_, ok := a.decisions[callID]
	return ok
}

// Approved reports whether callID has a decision not yet applied, and it approves.
func (a *approvals) Approved(callID string) bool { return a.decisions[callID].Approved }

// Decision returns the decision callID has, not yet applied.
func (a *approvals) Decision(callID string) (wire.Decision, bool) {
	d, ok := a.decisions[callID]
	return d, ok
}

// Decide records decision d for callID.
func (a *approvals) Decide(callID string, d wire.Decision) {
	if a.decisions == nil {
		a.decisions = map[string]wire.Decision{}
	}
	a.decisions[callID] = d
}

// Applied forgets the decisions of calls, whose results are now in the history.
func (a *approvals) Applied(calls []chat.Content) {
	for _, c := range calls {
		delete(a.decisions, c.CallID)
	}
}

// ResumeDue reports whether the waiting turn has decisions to apply: every call it
// waits for is decided, or any of the calls open at the end of the history is (open
// returns them; it is called only when a decision waits).
func (a *approvals) ResumeDue(open func() []chat.Content) bool {
	return a.waiting != nil && (len(a.Awaiting()) == 0 || a.decidedOpen(open))
}

// decidedOpen reports whether a call the waiting turn waits for, among those open,
// has a decision that has not been applied yet.
func (a *approvals) decidedOpen(open func() []chat.Content) bool {
	if a.waiting == nil || len(a.decisions) == 0 {
		return false
	}
	for _, c := range open() {
		if a.Decided(c.CallID) && a.WaitsFor(c.CallID) {
			return true
		}
	}
	return false
}

// Resume takes the waiting turn out of its wait, for it to run again: it returns the
// turn and the agent whose tool round goes on. No turn waits until the resumption
// suspends it again (Suspend); Resumed ends it.
func (a *approvals) Resume() (*turn, wire.Participant) {
	a.resuming, a.waiting = a.waiting, nil
	return a.resuming.turn, a.resuming.agent
}

// Resumed ends the resumption begun by Resume, which added answer: the Approve calls
// waiting for it (AwaitResumption) return it.
func (a *approvals) Resumed(answer wire.TurnResult) {
	sus := a.resuming
	a.resuming = nil
	sus.answer = answer
	sus.resumed++
}

// AwaitResumption waits, for an Approve whose decision was just recorded, for the
// next resumption of the waiting turn to end and returns its answer: the messages of
// that turn only, up to its end or to where it waits again, not those of the queued
// turns that ran after it; or the error of a resumed turn that failed.
func (a *approvals) AwaitResumption(ctx workflow.Context) (wire.TurnResult, error) {
	sus := a.waiting
	gen := sus.resumed
	if err := workflow.Await(ctx, func() bool { return sus.resumed > gen }); err != nil {
		return wire.TurnResult{}, err
	}
	if t := sus.turn; t.err != nil {
		return wire.TurnResult{}, t.err
	}
	return sus.answer, nil
}
