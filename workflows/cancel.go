package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// errStopped ends a reply whose turn was stopped between its tool rounds.
var errStopped = errors.New("the turn was stopped")

// stoppedResult is the result of a tool call that did not run, or was cut short,
// because its turn was stopped.
const stoppedResult = "not run: the turn was stopped"

// validateCancel refuses a CancelTurn that names no turn it can stop: none in flight
// (for MessageID ""), or a messageId neither in flight nor queued, or a turn that waits
// for approvals (reject its calls instead).
func (s *chatState) validateCancel(in wire.CancelTurnInput) error {
	if t := s.turnQueue.Active(); t != nil && (in.MessageID == "" || in.MessageID == t.msg.MessageID) {
		return nil
	}
	if in.MessageID != "" && s.turnQueue.IsQueued(in.MessageID) {
		return nil
	}
	what := wire.NoTurnInFlight
	if in.MessageID != "" {
		what = fmt.Sprintf("turn %q is neither in flight nor queued", in.MessageID)
	}
	if t := s.approvals.Suspended(); t != nil && (in.MessageID == "" || in.MessageID == t.msg.MessageID) {
		what = fmt.Sprintf("turn %q waits for approvals: reject its calls (Approve) to end it", t.msg.MessageID)
	}
	return temporal.NewNonRetryableApplicationError(what, wire.ErrTypeInvalidInput, nil)
}

// handleCancel is the CancelTurn update: a queued turn leaves the queue (its caller
// gets TurnCancelled; the messageId may be sent again); the turn in flight is cancelled
// and ends with what it produced (stopTurn), the update returning once it has.
func (s *chatState) handleCancel(ctx workflow.Context, in wire.CancelTurnInput) (wire.CancelTurnResult, error) {
	if t := s.turnQueue.Active(); t != nil && (in.MessageID == "" || in.MessageID == t.msg.MessageID) {
		t.cancelled, t.dropPartial = true, in.DropPartial
		s.awaitPartial(ctx, t)
		if t.cancel != nil {
			t.cancel()
		}
		if err := workflow.Await(ctx, func() bool { return t.done }); err != nil {
			return wire.CancelTurnResult{}, err
		}
		return wire.CancelTurnResult{MessageID: t.msg.MessageID}, nil
	}
	if t := s.turnQueue.Withdraw(in.MessageID); t != nil {
		t.done = true
		t.err = temporal.NewApplicationError(fmt.Sprintf("turn %q was cancelled before it ran; it left nothing in the chat", t.msg.MessageID),
			wire.ErrTypeTurnCancelled)
		s.turnEvent(t, wire.StreamEvent{Type: wire.EventTurnCancelled})
		return wire.CancelTurnResult{MessageID: t.msg.MessageID, Queued: true}, nil
	}
	return wire.CancelTurnResult{}, s.validateCancel(in) // gone meanwhile
}

// stopTurn ends turn t, stopped while agent p replied: the partial reply, unless
// dropped, becomes p's message marked incomplete; every call left without a result gets
// stoppedResult; the turn counts as answered.
func (s *chatState) stopTurn(ctx workflow.Context, t *turn, p wire.Participant) {
	if r := t.partial; r != nil && !t.dropPartial && r.Text() != "" {
		m := chat.Message{MessageID: r.MessageID(), Role: chat.RoleAssistant, AuthorName: p.Name, AgentID: p.ID,
			CreatedAt: workflow.Now(ctx).UTC(), Contents: []chat.Content{chat.Text(r.Text())}, Incomplete: true}
		s.history.Append(m)
		s.messageDone(t, m)
	}
	if open := s.history.OpenCalls(); len(open) > 0 {
		s.appendResults(ctx, t, p, errorResults(open, stoppedResult))
		s.stampResults(workflow.Now(ctx).UTC())
	}
	s.turnEvent(t, wire.StreamEvent{Type: wire.EventTurnCancelled})
	s.answered(t)
}
