package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// spillToFit returns the state to carry into the next run (next, whose Carry it sets),
// moving message bodies to the message store until the encoded input fits:
//
//   - when the chat names a store, or the input passes carryInlineBytes, the bodies of
//     all but the latest messages move (the latest keepInline, within carryTailBytes,
//     stay); an unreachable store only postpones that to the next hand-over;
//   - past CarryLimit, the latest bodies and then the queued turns' bodies move too, and
//     an unreachable store is retried until it answers: Temporal would terminate a chat
//     whose continue-as-new input passes its payload limit. A store that refuses the
//     bodies leaves them here; continueAsNew then stalls the chat (stall.go) when the
//     carry still passes CarryLimit.
//
// Open tool calls at the end of the history keep their bodies: the next run waits for
// them. The references (stubs) that stay are bounded by ChatLengthLimit.
func (s *chatState) spillToFit(ctx workflow.Context, next wire.AgentChatInput) *wire.Carried {
	measure := func() int {
		c := s.carry()
		next.Carry = c
		return carryBytes(next)
	}
	total := measure()
	if s.in.Store == "" && total <= carryInlineBytes {
		return next.Carry
	}
	older, tail := s.history.Spillable(keepInline, carryTailBytes)
	s.storeBodies(ctx, older, total > wire.CarryLimit)
	if total = measure(); total > wire.CarryLimit {
		var more []*chat.Message
		for t := range s.turnQueue.Queued() {
			tail = append(tail, &t.msg)
		}
		saved := 0
		for _, m := range tail {
			if saved >= total-wire.CarryLimit {
				break
			}
			more = append(more, m)
			saved += wire.MessageBytes(*m) - wire.StubBytes(*m)
		}
		s.storeBodies(ctx, more, true)
		total = measure()
	}
	return next.Carry
}

// carryBytes is the length of next's JSON; its messages and tool runs are measured
// without encoding them (a workflow task must not stall on megabytes).
func carryBytes(next wire.AgentChatInput) int {
	c := *next.Carry
	h, p, r := c.History, c.Pending, c.ToolRuns
	c.History, c.Pending, c.ToolRuns = nil, nil, nil
	next.Carry = &c
	n := wire.EncodedBytes(next) - len(`null`) + messagesBytes(h) // "history":null becomes the list
	if len(p) > 0 {
		n += len(`,"pending":`) + messagesBytes(p)
	}
	if len(r) > 0 {
		n += len(`,"toolRuns":`) + toolRunsBytes(r)
	}
	return n
}

// messagesBytes is the length of msgs as a JSON list.
func messagesBytes(msgs []chat.Message) int {
	n := len(`[]`) + max(len(msgs)-1, 0)
	for _, m := range msgs {
		n += wire.MessageBytes(m)
	}
	return n
}

// storeBodies moves the bodies of msgs to the chat's message store in batches of at
// most messageBatchBytes (a larger message alone), leaving stubs. Required, the store is retried until it answers;
// otherwise a store that does not answer leaves the bodies in the workflow.
func (s *chatState) storeBodies(ctx workflow.Context, msgs []*chat.Message, required bool) {
	policy := &temporal.RetryPolicy{MaximumInterval: 30 * time.Second}
	if !required {
		policy.MaximumAttempts = 3
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: storeTimeout, RetryPolicy: policy})
	for from := 0; from < len(msgs); {
		to, bytes := from, 0
		var batch []chat.Message
		for to < len(msgs) && (to == from || bytes+wire.MessageBytes(*msgs[to]) <= messageBatchBytes) {
			bytes += wire.MessageBytes(*msgs[to])
			batch = append(batch, *msgs[to])
			to++
		}
		var res wire.StoreMessagesResult
		err := workflow.ExecuteActivity(actx, wire.StoreMessagesActivity,
			wire.StoreMessagesInput{ChatID: s.chatID, Store: orDefault(s.Store, s.in.Store), Messages: batch}).Get(ctx, &res)
		if err != nil {
			s.storeFailed(ctx, err)
			return
		}
		s.Store = res.Store
		for _, m := range msgs[from:to] {
			s.CallIDs = s.CallIDs.AddCalls(*m)
			m.Contents = nil
		}
		from = to
	}
}
