package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// A call's first decision stands. Approve on a call decided before, whether its
// decision is applied already (the call has its result) or not yet:
//
//   - the same decision again (approve after approve, reject after reject) is
//     idempotent, so that a retry is safe: nothing changes, and the answer is what the
//     call's turn did from its result on, with TurnResult.AlreadyDecided set to the
//     earlier decision;
//   - a different decision is refused (InvalidInput) with "already decided: <the
//     earlier decision>", and changes nothing.

// rejectedResult is the error result a rejected call gets; the model reads it,
// followed by ": REASON" when a reason was given.
const rejectedResult = "rejected by a person"

// earlierDecision returns the decision callID got before: the one recorded until it
// is applied, else the one its result shows (a rejection's error result, or approved
// for a call that has another result).
func (s *chatState) earlierDecision(callID string) (wire.Decision, bool) {
	if d, ok := s.approvals.Decision(callID); ok {
		return d, true
	}
	result, ok := s.history.At(s.history.AnsweredCall(callID))
	if !ok {
		return wire.Decision{}, false
	}
	for _, c := range result.Contents {
		if c.CallID == callID && c.Type == chat.ContentFunctionResult {
			if rest, ok := strings.CutPrefix(c.Error, rejectedResult); ok {
				return wire.Decision{Approved: false, Reason: strings.TrimPrefix(rest, ": ")}, true
			}
		}
	}
	return wire.Decision{Approved: true}, true
}

// changedDecisionRefusal is the error for a decision that differs from the one its
// call had already, or nil.
func (s *chatState) changedDecisionRefusal(in wire.ApproveInput) error {
	d, ok := s.earlierDecision(in.CallID)
	if !ok || d.Approved == in.Approved {
		return nil
	}
	return temporal.NewApplicationError(fmt.Sprintf("chat %q: call %q is already decided: %s; the first decision stands "+
		"(repeat it to read what the call's turn did)", s.chatID, in.CallID, d), wire.ErrTypeInvalidInput)
}

// repeatedDecision answers an Approve on a call decided before, ok false when the
// call had no decision: the same decision
// gets what the call's turn did, a different one (admitted in the same workflow task
// as the first, before that was recorded) the refusal the validator gives.
func (s *chatState) repeatedDecision(ctx workflow.Context, in wire.ApproveInput) (wire.TurnResult, bool, error) {
	d, ok := s.earlierDecision(in.CallID)
	if !ok {
		return wire.TurnResult{}, false, nil
	}
	if err := s.changedDecisionRefusal(in); err != nil {
		return wire.TurnResult{}, true, err
	}
	var res wire.TurnResult
	if i := s.history.AnsweredCall(in.CallID); i >= 0 {
		res = s.sinceResult(i)
	} else if t := s.approvals.Suspended(); t != nil {
		res = wire.TurnResult{MessageID: t.msg.MessageID, AwaitingApproval: s.approvals.Awaiting()}
	}
	res.AlreadyDecided = &d
	return res, true, nil
}
