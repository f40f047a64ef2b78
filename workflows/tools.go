package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// errSuspended ends an agent's reply that waits for the approval of a tool call.
var errSuspended = errors.New("suspended for approval")

// runAgent runs agent p's reply to turn t: a model call, and while the model asks for
// tools, the tool calls and another model call, at most p.MaxToolRounds rounds. It
// returns the agent's final message, or errSuspended when a call waits for approval.
func (s *chatState) runAgent(ctx workflow.Context, p wire.Participant, t *turn) (chat.Message, error) {
	for round := 0; ; round++ {
		if t.cancelled {
			return chat.Message{}, errStopped // between tool rounds: no next call
		}
		reply, err := s.invoke(ctx, p, t)
		if err != nil {
			return chat.Message{}, err
		}
		s.history.Append(reply)
		calls := reply.FunctionCalls()
		if len(calls) == 0 {
			return reply, nil
		}
		if round >= max(p.MaxToolRounds, 1) {
			// Answer the calls anyway: no call is ever left without a result.
			s.appendResults(ctx, t, p, errorResults(calls, roundLimitText(p)))
			return s.finalAnswer(ctx, p, t)
		}
		if err := s.runTools(ctx, t, p, calls); err != nil {
			return chat.Message{}, err
		}
	}
}

// finalAnswer is agent p's last model call of a reply that reached its tool-round
// limit: the model reads the calls' error results and must answer without tools
// (tool_choice "none"). Calls it asks for anyway get an error result, so none is left
// open, and the reply ends there.
func (s *chatState) finalAnswer(ctx workflow.Context, p wire.Participant, t *turn) (chat.Message, error) {
	reply, err := s.invokeWith(ctx, p, t, wire.ToolChoiceNone)
	if err != nil {
		return chat.Message{}, err
	}
	s.history.Append(reply)
	if calls := reply.FunctionCalls(); len(calls) > 0 {
		s.appendResults(ctx, t, p, errorResults(calls, roundLimitText(p)))
	}
	return reply, nil
}

func roundLimitText(p wire.Participant) string {
	return fmt.Sprintf(wire.RoundLimitPrefix+"%d tool rounds in one reply", max(p.MaxToolRounds, 1))
}

// runTools answers the calls of one model reply: calls whose tool needs approval and
// has no decision yet suspend the turn; the others run, in parallel, each as its own
// activity. Invalid arguments, unknown tools, failures and rejections become error
// results that the model reads; the turn goes on. A call that reaches a worker
// without the tool's function is run on another (tryElsewhere) before it fails. It
// returns errSuspended when a call waits for approval, and otherwise nil.
func (s *chatState) runTools(ctx workflow.Context, t *turn, p wire.Participant, calls []chat.Content) error {
	now := workflow.Now(ctx).UTC()
	defer func() { s.stampResults(now) }()
	var (
		pending []wire.PendingApproval
		futures = map[string]workflow.Future{}
		results = map[string]chat.Content{}
	)
	for _, c := range calls {
		call := c
		s.turnEvent(t, wire.StreamEvent{Type: wire.EventToolCall, AgentID: p.ID, Call: &call})
		spec, ok := p.Tool(c.Name)
		switch {
		case !ok:
			results[c.CallID] = errorResult(c, fmt.Sprintf("unknown tool %q; this agent has %s", c.Name, toolNames(p)))
		case !validArguments(c.Arguments):
			results[c.CallID] = errorResult(c, "the arguments are not a JSON object: "+c.Arguments)
		case spec.Approval && !s.approvals.Decided(c.CallID):
			pending = append(pending, pendingApproval(c, p, t))
			s.turnEvent(t, wire.StreamEvent{Type: wire.EventApprovalNeeded, AgentID: p.ID, Call: &call})
		case spec.Approval && !s.approvals.Approved(c.CallID):
			d, _ := s.approvals.Decision(c.CallID)
			results[c.CallID] = errorResult(c, rejectedResult+reasonSuffix(d.Reason))
		case s.ranBefore(c):
			results[c.CallID] = s.ranResult(c) // obtained before a rollback: never run twice
		default:
			futures[c.CallID] = s.startTool(ctx, p, spec, c)
		}
	}
	for _, c := range calls {
		f, ok := futures[c.CallID]
		if !ok {
			continue
		}
		var res wire.CallToolResult
		err := f.Get(ctx, &res)
		if err != nil && t.cancelled {
			results[c.CallID] = errorResult(c, stoppedResult) // cut short: not recorded as run
			continue
		}
		if err != nil {
			// A worker without the tool's function: another of the queue may have it.
			spec, _ := p.Tool(c.Name)
			err = s.tryElsewhere(toolContext(ctx, spec), wire.CallToolActivity, s.toolInput(p, c), &res, err)
		}
		if err != nil {
			results[c.CallID] = errorResult(c, errorMessage(unwrapActivityError(err)))
		} else {
			results[c.CallID] = chat.Content{Type: chat.ContentFunctionResult, CallID: c.CallID, Result: res.Result}
		}
		s.recordRun(c, results[c.CallID])
	}
	var answered []chat.Content
	for _, c := range calls {
		if r, ok := results[c.CallID]; ok {
			answered = append(answered, r)
		}
	}
	s.appendResults(ctx, t, p, boundResults(answered))
	if len(pending) > 0 {
		s.approvals.Suspend(t, p, pending)
		s.refuseQueuedUpdates()
		return errSuspended
	}
	return nil
}

// pendingApproval describes call c of agent p in turn t as waiting for a person.
func pendingApproval(c chat.Content, p wire.Participant, t *turn) wire.PendingApproval {
	return wire.PendingApproval{CallID: c.CallID, Tool: c.Name, Arguments: c.Arguments, AgentID: p.ID, TurnID: t.msg.MessageID}
}

// stampResults gives the tool messages added without a time the time their round began.
func (s *chatState) stampResults(at time.Time) {
	for i := s.history.Len() - 1; ; i-- {
		m, ok := s.history.At(i)
		if !ok || m.Role != chat.RoleTool {
			return
		}
		if m.CreatedAt.IsZero() {
			s.history.Update(i, func(m *chat.Message) { m.CreatedAt = at })
		}
	}
}

// startTool schedules one tool call as its own activity, with the tool's timeout,
// heartbeat timeout and retry policy.
func (s *chatState) startTool(ctx workflow.Context, p wire.Participant, spec wire.ToolSpec, c chat.Content) workflow.Future {
	return workflow.ExecuteActivity(toolContext(ctx, spec), wire.CallToolActivity, s.toolInput(p, c))
}

// toolContext carries the activity options of a call of tool spec.
func toolContext(ctx workflow.Context, spec wire.ToolSpec) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Duration(spec.Timeout),
		// Participants resolved before tools had a heartbeat timeout carry none.
		HeartbeatTimeout: time.Duration(spec.HeartbeatTimeout.Or(wire.DefaultToolHeartbeat)),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: 30 * time.Second, MaximumAttempts: int32(spec.MaxAttempts)},
	})
}

// toolInput is the CallTool input of call c of agent p.
func (s *chatState) toolInput(p wire.Participant, c chat.Content) wire.CallToolInput {
	in := wire.CallToolInput{ChatID: s.chatID, AgentID: p.ID, CallID: c.CallID, Name: c.Name, Arguments: c.Arguments}
	if a := s.turnQueue.Active(); a != nil {
		in.TurnID = a.msg.MessageID
	}
	return in
}

// boundResults keeps the results of one model reply's calls under ToolResultLimit
// together (encoded bytes): the tool message they make is one message that the workflow
// holds, a History page and a model call's input carry. Past it, the largest results
// become error results that name the limit, until the rest fit; the model reads why.
func boundResults(results []chat.Content) []chat.Content {
	total := 0
	for _, r := range results {
		total += wire.TextBytes(r.Result)
	}
	if total <= wire.ToolResultLimit {
		return results
	}
	out := slices.Clone(results)
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return wire.TextBytes(out[b].Result) - wire.TextBytes(out[a].Result) })
	all := total
	for _, i := range order {
		if total <= wire.ToolResultLimit {
			break
		}
		n := wire.TextBytes(out[i].Result)
		out[i] = errorResult(out[i], fmt.Sprintf("left out: this result takes %d bytes encoded, and the results of this "+
			"reply's calls %d together; together they may take at most %d (ToolResultLimit)", n, all, wire.ToolResultLimit))
		total -= n
	}
	return out
}

// appendResults adds a tool message with the results, if any.
func (s *chatState) appendResults(ctx workflow.Context, t *turn, p wire.Participant, results []chat.Content) {
	if len(results) == 0 {
		return
	}
	m := chat.Message{MessageID: s.nextID(ctx, t), Role: chat.RoleTool, AgentID: p.ID, AuthorName: "tools", Contents: results}
	s.history.Append(m)
	for i := range results {
		s.turnEvent(t, wire.StreamEvent{Type: wire.EventToolResult, AgentID: p.ID, Result: &results[i]})
	}
	s.messageDone(t, m)
}

func errorResults(calls []chat.Content, msg string) []chat.Content {
	out := make([]chat.Content, len(calls))
	for i, c := range calls {
		out[i] = errorResult(c, msg)
	}
	return out
}

func errorResult(c chat.Content, msg string) chat.Content {
	return chat.Content{Type: chat.ContentFunctionResult, CallID: c.CallID, Error: msg}
}

func validArguments(args string) bool {
	var obj map[string]any
	return json.Unmarshal([]byte(args), &obj) == nil
}

func toolNames(p wire.Participant) string {
	if len(p.Tools) == 0 {
		return "no tools"
	}
	var names []string
	for _, t := range p.Tools {
		names = append(names, fmt.Sprintf("%q", t.Name))
	}
	return "tools " + fmt.Sprint(names)
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}

// validateApprove accepts a decision for a call the chat waits for, and a repeat of a
// decision already taken (decided.go); it refuses a different one.
func (s *chatState) validateApprove(in wire.ApproveInput) error {
	if err := s.changedDecisionRefusal(in); err != nil {
		return err
	}
	if _, ok := s.earlierDecision(in.CallID); ok {
		return nil
	}
	if err := s.approveRefusal(); err != nil {
		return err
	}
	if s.approvals.Suspended() == nil {
		return temporal.NewApplicationError(fmt.Sprintf("chat %q waits for no approval", s.chatID), wire.ErrTypeInvalidInput)
	}
	if !s.approvals.WaitsFor(in.CallID) {
		return temporal.NewApplicationError(fmt.Sprintf("chat %q waits for no approval of call %q (it waits for %s)",
			s.chatID, in.CallID, pendingIDs(s.approvals.Awaiting())), wire.ErrTypeInvalidInput)
	}
	return nil
}

func pendingIDs(ps []wire.PendingApproval) string {
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.CallID)
	}
	return fmt.Sprint(ids)
}

// handleApprove records a decision and waits for the chat to apply it (decisions.go):
// an approved call runs, a rejected one gets its error result, and when it was the last
// the suspended turn waits for, the turn resumes. The update returns the messages that
// added, up to the turn's end (or where it suspended again), and the calls still
// awaited. Refused while the chat continues as new or migrates (approveRefusal).
func (s *chatState) handleApprove(ctx workflow.Context, in wire.ApproveInput) (wire.TurnResult, error) {
	if res, ok, err := s.repeatedDecision(ctx, in); ok {
		return res, err
	}
	if i := s.history.AnsweredCall(in.CallID); i >= 0 && !s.approvals.WaitsFor(in.CallID) {
		return s.sinceResult(i), nil // a retried Approve: what the turn did after it
	}
	if err := s.approveRefusal(); err != nil {
		return wire.TurnResult{}, err
	}
	s.approvals.Decide(in.CallID, wire.Decision{Approved: in.Approved, Reason: in.Reason, By: in.By})
	return s.approvals.AwaitResumption(ctx)
}

// sinceResult returns the messages of a turn from index i to the turn's end.
func (s *chatState) sinceResult(i int) wire.TurnResult {
	user, end := s.history.TurnAround(i)
	var turnID string
	if m, ok := s.history.At(user); ok {
		turnID = m.MessageID
	}
	return wire.TurnResult{MessageID: turnID, Messages: boundMessages(s.history.Slice(i, end)),
		IsComplete: s.IsComplete && end == s.history.Len(), AwaitingApproval: s.approvals.Awaiting()}
}

// resumeSuspended continues a suspended turn once every awaited call is decided: the
// same agent's tool round goes on, then the turn as the strategies say.
func (s *chatState) resumeSuspended(ctx workflow.Context) {
	t, agent := s.approvals.Resume()
	s.turnQueue.Begin(t)
	from := s.history.Len()
	defer func() { s.turnQueue.End(); s.approvals.Resumed(s.resumedAnswer(t, from)) }()
	t.suspended, t.err = false, nil
	t.mark, t.errBefore = s.history.Len(), s.LastError
	s.boundary = s.strategiesNow()
	calls := s.history.OpenCalls()
	if err := s.runTools(ctx, t, agent, calls); err != nil { // errSuspended: a call waits again
		t.suspended = true
		return
	}
	s.approvals.Applied(calls)
	// The tools ran: a failure from here on keeps their results (a person approved a
	// side effect that happened), fails the turn, and the chat takes the next one.
	beforeTools := t.mark
	t.mark = s.history.Len()
	s.continueTurn(ctx, t, &agent)
	if t.err == nil {
		return
	}
	s.forgetAnswered(s.history.Since(beforeTools)) // the history keeps the results
}

// checkOpenCalls refuses a history (an imported document's) that ends with open calls
// of an agent that is not a participant of this chat: those calls wait for results
// (and approvals) that only the calling agent's tools and reply can give, and another
// agent must not read them as its own. Dropping them silently would lose a person's
// pending decision; so the import fails, naming the calls and the agent.
func (s *chatState) checkOpenCalls(history []chat.Message) error {
	err := chat.CheckOpenCalls(history, s.ids())
	if err == nil {
		return nil
	}
	return temporal.NewNonRetryableApplicationError("import: "+err.Error(), wire.ErrTypeInvalidDocument, nil)
}

// detectSuspension rebuilds a suspension from the history (after a continue-as-new or
// an import): tool calls still open at its end belong to the last user turn and wait
// for approval, or, for tools that need none, for running when the chat resumes. That
// turn is suspended, whatever the rebuilt record (turnQueue.Rebuild) says: a retried
// Send of it gets its pending result. The calls awaited are announced on the stream
// (announceWaiting).
func (s *chatState) detectSuspension(ctx workflow.Context) {
	calls := s.history.OpenCalls()
	if len(calls) == 0 {
		return
	}
	caller, _ := s.history.At(s.history.LastOf(chat.RoleAssistant))
	user, ok := s.history.At(s.history.LastOf(chat.RoleUser))
	if !ok {
		return
	}
	t, _ := s.turnQueue.Lookup(user.MessageID)
	if t == nil {
		t = &turn{msg: user, done: true}
		s.turnQueue.Record(t)
	}
	// Suspended, not failed: a reply that mixed an approval with a plain call ends, while
	// it waits, on the plain call's result, which turnQueue.Rebuild takes for a failure.
	t.suspended, t.err = true, nil
	p := s.participant(caller.AgentID)
	var pending []wire.PendingApproval
	for _, c := range calls {
		if spec, ok := p.Tool(c.Name); ok && spec.Approval {
			pending = append(pending, pendingApproval(c, p, t))
		}
	}
	s.approvals.Suspend(t, p, pending)
	s.announceWaiting()
}
