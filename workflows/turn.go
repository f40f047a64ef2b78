package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// validateSend is the SendMessage validator: it refuses, before anything is written to
// the history, input that is malformed or oversize and turns the chat cannot take.
func (s *chatState) validateSend(in wire.SendMessageInput) error {
	_, err := s.admit(in)
	return err
}

// admit checks a user turn and returns its message: its shape (checkMessage), its
// messageId (idRefusal), the chat's state (stateRefusal) and its
// capacity (capacityRefusal). A messageId the chat already has (queued, running or
// answered) is admitted whatever the chat's state, so a retry gets the first answer.
func (s *chatState) admit(in wire.SendMessageInput) (chat.Message, error) {
	m, known, err := s.checkMessage(in)
	if err != nil || known {
		return m, err
	}
	if err := s.idRefusal(m); err != nil {
		return chat.Message{}, err
	}
	if err := s.stateRefusal(m); err != nil {
		return chat.Message{}, err
	}
	if err := s.capacityRefusal(m); err != nil {
		return chat.Message{}, err
	}
	return m, nil
}

// checkMessage returns the user message in carries, checked for shape and size, and
// whether its messageId is a live turn of the chat's (known: a retry).
func (s *chatState) checkMessage(in wire.SendMessageInput) (m chat.Message, known bool, err error) {
	m, err = in.Message(s.in.EffectiveMaxMessageBytes())
	if err != nil {
		return chat.Message{}, false, temporal.NewApplicationError(err.Error(), wire.ErrTypeInvalidMessage)
	}
	t, ok := s.turnQueue.Live(m.MessageID)
	if !ok {
		return m, false, nil
	}
	// A turn whose body moved to the message store (a stub) cannot be compared: its
	// retry is taken as the same turn and gets the first answer.
	if t.msg.Contents != nil && !sameContents(t.msg.Contents, m.Contents) {
		return chat.Message{}, false, temporal.NewApplicationError(fmt.Sprintf(
			"messageId %q was already used for a different message; give each turn its own messageId", m.MessageID),
			wire.ErrTypeInvalidMessage)
	}
	return m, true, nil
}

// stateRefusal is the error for new turn m that the chat's state refuses (it stalled, waits for
// an approval, continues as new, migrates or moved, could not start, is complete, or is
// a temporary thread that had its turn; or m's turn failed after its tools ran), or nil.
func (s *chatState) stateRefusal(m chat.Message) error {
	t, ok := s.turnQueue.Lookup(m.MessageID)
	switch {
	case s.stalled != nil:
		return s.stalled
	case s.approvals.Suspended() != nil:
		return temporal.NewApplicationError(fmt.Sprintf(
			"chat %q waits for the approval of tool call(s) %s; approve or reject each first with the %s update (callId, approved), then send the turn again",
			s.chatID, pendingIDs(s.approvals.Awaiting()), wire.ApproveUpdate), wire.ErrTypeAwaitingApproval)
	case ok && s.history.IndexOf(m.MessageID) < s.history.Len():
		cause := failureOf(t.err)
		return temporal.NewApplicationError(fmt.Sprintf(
			"turn %q failed after its tool calls ran (%s); their results stay in the history, so the turn is not run again: send a new message to go on",
			m.MessageID, cause.Message), wire.ErrTypeTurnFailed,
			wire.TurnError{MessageID: m.MessageID, AgentID: cause.AgentID, Type: cause.Type, Message: cause.Message, Kept: true})
	case s.draining():
		return temporal.NewApplicationError(
			fmt.Sprintf("chat %q is continuing as new; retry and the turn goes to the new run", s.chatID),
			wire.ErrTypeContinuingAsNew)
	case s.phase == phaseMigrated:
		return s.movedError(m.MessageID, false)
	case s.phase == phaseMigrating:
		return temporal.NewApplicationError(
			fmt.Sprintf("chat %q is migrating to %s; retry shortly and the answer will name its new location", s.chatID, describe(s.transfers.MigrationTarget())),
			wire.ErrTypeMigrating)
	case s.phase == phaseFailed:
		return temporal.NewApplicationError("chat could not start: "+errorMessage(s.failure), failureType(s.failure))
	case s.IsComplete && !s.in.Termination.AutoReset:
		return temporal.NewApplicationError(
			fmt.Sprintf("chat %q is complete: its termination strategy ended it; start a new chat", s.chatID),
			wire.ErrTypeNotAcceptingTurns)
	case s.in.Temporary && (s.turnQueue.Accepted() > 0 || s.Attempted > 0):
		return temporal.NewApplicationError(
			fmt.Sprintf("chat %q is a temporary thread and already has its one turn", s.chatID),
			wire.ErrTypeNotAcceptingTurns)
	}
	return nil
}

// capacityRefusal is the error for new turn m that the chat has no room for: the turns
// waiting would pass QueuedTurnsLimit (roomFor), or the chat is full (fullRefusal).
func (s *chatState) capacityRefusal(m chat.Message) error {
	if err := s.roomFor(m); err != nil {
		return err
	}
	return s.fullRefusal()
}

// fullRefusal is the error for a new turn once the chat has reached ChatLengthLimit, or nil.
func (s *chatState) fullRefusal() error {
	if n := s.length(); n >= wire.ChatLengthLimit {
		return temporal.NewApplicationError(fmt.Sprintf(
			"chat %q is full: its %d messages take %d bytes as references, and a chat holds at most %d (ChatLengthLimit); "+
				"it can still be read, exported and migrated; start a new chat to go on", s.chatID, s.history.Len()+s.turnQueue.Len(), n, wire.ChatLengthLimit),
			wire.ErrTypeNotAcceptingTurns)
	}
	return nil
}

// roomFor refuses m (QueueFull, retryable) when the turns waiting would pass
// QueuedTurnsLimit with it.
func (s *chatState) roomFor(m chat.Message) error {
	waiting := s.turnQueue.Bytes()
	if waiting+sentBytes(m) > wire.QueuedTurnsLimit {
		return temporal.NewApplicationError(fmt.Sprintf(
			"chat %q has %d bytes of turns waiting; with this message they would pass %d (QueuedTurnsLimit): retry once they are answered",
			s.chatID, waiting, wire.QueuedTurnsLimit), wire.ErrTypeQueueFull)
	}
	return nil
}

// sentBytes is m's encoded size as its client sent it, without the time the chat adds.
func sentBytes(m chat.Message) int {
	m.CreatedAt = time.Time{}
	return wire.MessageBytes(m)
}

// length is the chat's length as ChatLengthLimit counts it: the references to its
// messages (a running total, stubTotal) and queued turns.
func (s *chatState) length() int {
	return s.history.StubBytes() + s.turnQueue.StubBytes()
}

// handleSend is the SendMessage update: once the chat has started and the signals
// that came before it are queued (awaitTurnOrder), queue the turn (or find it, for a
// retried messageId), wait for its answer and return it.
func (s *chatState) handleSend(ctx workflow.Context, in wire.SendMessageInput) (wire.TurnResult, error) {
	if err := s.awaitTurnOrder(ctx); err != nil {
		return wire.TurnResult{}, err
	}
	m, err := s.admit(in)
	if err != nil {
		return wire.TurnResult{}, err
	}
	prior, known := s.turnQueue.Lookup(m.MessageID)
	if !known {
		if res, err := s.pagedTurn(ctx, m); err != nil || res != nil { // a paged id: a retry, or taken
			if err != nil {
				return wire.TurnResult{}, err
			}
			return *res, nil
		}
	}
	replayed := known && prior.done && prior.err == nil && !prior.suspended
	t := s.enqueueNew(ctx, m, false)
	if err := workflow.Await(ctx, func() bool { return t.done }); err != nil {
		return wire.TurnResult{}, err
	}
	if t.err != nil {
		return wire.TurnResult{}, t.err
	}
	if t.suspended {
		res := wire.TurnResult{MessageID: t.msg.MessageID, AwaitingApproval: s.approvals.Awaiting()}
		if i := s.history.IndexOf(t.msg.MessageID); i < s.history.Len() {
			res.Messages = boundMessages(s.history.Since(i + 1))
		}
		return res, nil
	}
	res := s.turnResult(t)
	res.Replayed = replayed
	return res, nil
}

// takeSignal queues a UserMessage signal's turn. A signal during a migration, a
// continue-as-new or a wait for approval is not refused for that (it is forwarded,
// carried, or run after the wait), but is for the chat's capacity (the queue's and,
// as for an update, ChatLengthLimit); one that does not validate is not dropped
// silently: it becomes lastError and a warning.
func (s *chatState) takeSignal(ctx workflow.Context, in wire.SendMessageInput) {
	m, known, err := s.checkMessage(in)
	if err == nil && !known {
		err = s.idRefusal(m)
	}
	if err == nil && !known {
		var retried *wire.TurnResult
		if retried, err = s.pagedTurn(ctx, m); retried != nil {
			return // a retry of a paged turn: answered long ago
		}
	}
	if !known && s.stalled != nil {
		err = s.stalled // lastError keeps saying why the chat takes no turns
	} else if err == nil && !known {
		spared := s.phase == phaseMigrating || s.phase == phaseMigrated || s.draining() || s.approvals.Suspended() != nil
		if err = s.stateRefusal(m); err != nil && spared {
			err = s.roomFor(m)
			if full := s.fullRefusal(); err == nil && full != nil {
				err = full
			}
		} else if err == nil {
			err = s.capacityRefusal(m)
		}
	}
	if err != nil {
		s.LastError = &wire.TurnError{MessageID: in.MessageID, Type: errorType(err), Message: errorMessage(err)}
		workflow.GetLogger(ctx).Warn("UserMessage signal refused", "messageId", in.MessageID, "error", err)
		return
	}
	s.enqueueNew(ctx, m, true)
}

// enqueueNew is enqueue for a turn that arrives: a new one is accepted (turnAccepted).
func (s *chatState) enqueueNew(ctx workflow.Context, m chat.Message, signal bool) *turn {
	old, _ := s.turnQueue.Lookup(m.MessageID)
	t := s.enqueue(ctx, m, signal)
	if t != old {
		s.turnAccepted(t)
	}
	return t
}

// enqueue returns the live turn for m's messageId, or queues a new one.
func (s *chatState) enqueue(ctx workflow.Context, m chat.Message, signal bool) *turn {
	if t, ok := s.turnQueue.Live(m.MessageID); ok {
		return t
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = workflow.Now(ctx).UTC()
	}
	t := &turn{msg: m, signal: signal, bytes: sentBytes(m), span: ctx.Value(wire.TraceSpanKey)}
	s.turnQueue.Enqueue(t)
	s.queueDepth(ctx)
	return t
}

// canTakeTurn reports whether a queued turn may start now: the chat is running (no
// import, drain or migration), not stalled, and no turn waits for approvals.
func (s *chatState) canTakeTurn() bool {
	return s.turnQueue.Len() > 0 && s.phase == phaseRunning && s.approvals.Suspended() == nil && s.stalled == nil
}

// readyToResume reports whether a suspended turn has decisions to apply now
// (resumeDue): the chat is running or draining (no import, no migration) and no export
// reads it.
func (s *chatState) readyToResume() bool {
	return s.resumeDue() && (s.phase == phaseRunning || s.phase == phaseDraining) && !s.transfers.Exporting()
}

// refuseQueued fails the turns still queued when the chat closes.
func (s *chatState) refuseQueued() {
	s.turnQueue.Refuse(func(t *turn) error {
		err := temporal.NewApplicationError(
			fmt.Sprintf("chat %q completed before turn %q was taken; start a new chat", s.chatID, t.msg.MessageID),
			wire.ErrTypeNotAcceptingTurns)
		if t.signal { // nobody waits for it: say so where State shows it
			s.LastError = &wire.TurnError{MessageID: t.msg.MessageID, Type: wire.ErrTypeNotAcceptingTurns, Message: errorMessage(err)}
		}
		return err
	})
}

// runTurn answers one turn: agents chosen by the selection strategy reply until the
// termination strategy ends the turn. A turn is all or nothing: if an agent cannot
// reply, the turn's messages are taken back out of the history and the strategies'
// state restored, the error goes to the caller (and to lastError), and the chat goes on.
// A tool call that needs a person's approval suspends the turn instead (tools.go).
func (s *chatState) runTurn(ctx workflow.Context, t *turn) {
	if t.span != nil { // traced: the turn's activities are children of the update's span
		ctx = workflow.WithValue(ctx, wire.TraceSpanKey, t.span)
	}
	ctx = workflow.WithValue(ctx, wire.LogTurnKey, t.msg.MessageID) // on the turn's log lines
	s.turnQueue.Begin(t)
	defer s.timeTurn(ctx, t)()
	defer func() { s.turnQueue.End(); t.done = true }()
	t.mark, t.errBefore = s.history.Len(), s.LastError
	s.boundary = s.strategiesNow()
	s.history.Append(t.msg)
	s.Termination = strategies.TerminationState{}
	if s.IsComplete && s.in.Termination.AutoReset {
		s.IsComplete = false // the strategy resets for the next user turn
	}
	ctx, t.cancel = workflow.WithCancel(ctx)
	defer t.releaseContext()
	s.continueTurn(ctx, t, nil)
}

// continueTurn runs agents for turn t until the termination strategy ends it: first
// the agent first (a suspended agent resuming), then as the selection strategy picks.
// On failure it takes back everything since t.mark.
func (s *chatState) continueTurn(ctx workflow.Context, t *turn, first *wire.Participant) {
	limit := s.in.Termination.Limit(len(s.Participants))
	for {
		var p wire.Participant
		if first != nil {
			p, first = *first, nil
		} else {
			if s.Termination.Iterations >= limit {
				break
			}
			next, err := s.selectNext(ctx, t)
			if err != nil && t.cancelled {
				s.stopTurn(ctx, t, wire.Participant{ID: "(selection)"})
				return
			}
			if err != nil {
				s.failTurn(t, wire.Participant{ID: "(selection)"}, err)
				return
			}
			p = next
		}
		final, err := s.runAgent(ctx, p, t)
		if errors.Is(err, errSuspended) {
			t.suspended = true
			return
		}
		if err != nil && t.cancelled {
			s.stopTurn(ctx, t, p)
			return
		}
		if err != nil {
			s.failTurn(t, p, err)
			return
		}
		s.Termination.Iterations++
		if t.cancelled { // stopped after the agent's reply
			s.stopTurn(ctx, t, p)
			return
		}
		done, err := s.terminates(ctx, s.in.Termination, t, final)
		if err != nil && t.cancelled {
			s.stopTurn(ctx, t, p)
			return
		}
		if err != nil {
			s.failTurn(t, wire.Participant{ID: "(termination)"}, err)
			return
		}
		if done {
			s.IsComplete = true
			break
		}
	}
	s.turnEvent(t, wire.StreamEvent{Type: wire.EventTurnDone, IsComplete: s.IsComplete})
	s.answered(t)
}

// answered records turn t as answered with the messages after its user message.
func (s *chatState) answered(t *turn) {
	t.start, t.end = s.history.IndexOf(t.msg.MessageID)+1, s.history.Len()
	s.forgetAnswered(s.history.Slice(t.start, t.end))
	s.TurnCount++
	s.Attempted++
	if e := s.LastError; e != nil && (e == t.errBefore || e.MessageID == t.msg.MessageID) {
		s.LastError = nil // recorded before this turn began, or this turn's own failure: past
	}
}

// failTurn takes back what the turn added since t.mark and records why.
func (s *chatState) failTurn(t *turn, p wire.Participant, err error) {
	s.retireStored(s.history.TruncateTo(t.mark))
	s.Selection, s.Termination = s.boundary.sel, s.boundary.term
	s.channels.Restore(s.boundary.channels)
	kept := s.keptOf(t)
	s.LastError = &wire.TurnError{MessageID: t.msg.MessageID, AgentID: p.ID, Type: errorType(err), Message: errorMessage(err),
		Kept: kept != nil}
	t.err = turnError(t, p, err, *s.LastError, kept)
	failed := *s.LastError
	s.turnEvent(t, wire.StreamEvent{Type: wire.EventTurnFailed, Error: &failed})
	s.Attempted++
}

// keptOf returns the ids of the messages failed turn t keeps in the history once taken
// back to t.mark, its user message first; nil when it keeps none (taken back whole).
// Only a resumed turn keeps any: its user message and its tool calls and results.
func (s *chatState) keptOf(t *turn) []string {
	i := s.history.IndexOf(t.msg.MessageID)
	if i >= s.history.Len() {
		return nil
	}
	kept := make([]string, 0, s.history.Len()-i)
	for _, m := range s.history.Since(i) {
		kept = append(kept, m.MessageID)
	}
	return kept
}

// turnError is the error the caller of failed turn t gets, saying what the chat holds
// and what to do:
//   - a turn that keeps messages (kept: a resumed turn whose tool calls ran): TurnFailed,
//     naming them; the turn is not run again, so the advice is to send a new message
//     (once the message store is back, when it was the cause);
//   - a turn taken back whole, when the message store could not be reached:
//     StoreUnavailable, which says to send the turn again once it is back;
//   - any other: TurnFailed; the turn left nothing and may be sent again.
//
// details (the TurnError) go with it, Kept set as the chat holds the turn.
func turnError(t *turn, p wire.Participant, err error, details wire.TurnError, kept []string) error {
	msg := fmt.Sprintf("turn %q: agent %q could not reply: %s", t.msg.MessageID, p.ID, errorMessage(err))
	store := details.Type == wire.ErrTypeStoreUnavailable
	switch {
	case kept != nil:
		msg += fmt.Sprintf("; the chat keeps the turn's message and what its tool calls did (messages %s), "+
			"so the turn is not run again: send a new message to go on", idRange(kept))
		if store {
			msg += " once the message store is back"
		}
		return temporal.NewApplicationError(msg, wire.ErrTypeTurnFailed, details)
	case store:
		return temporal.NewApplicationError(msg+fmt.Sprintf(
			"; the turn left nothing in the chat: send it again (messageId %q) once the message store is back", t.msg.MessageID),
			wire.ErrTypeStoreUnavailable, details)
	}
	return temporal.NewApplicationError(msg, wire.ErrTypeTurnFailed, details)
}

// idRange names messages ids: all of them, or past three the first and the last.
func idRange(ids []string) string {
	if len(ids) > 3 {
		return fmt.Sprintf("%s to %s, %d messages", ids[0], ids[len(ids)-1], len(ids))
	}
	return strings.Join(ids, ", ")
}

// failureOf is the TurnError a failed turn's error carries (its cause), or one made of
// the error itself.
func failureOf(err error) wire.TurnError {
	var app *temporal.ApplicationError
	var d wire.TurnError
	if errors.As(err, &app) && app.HasDetails() && app.Details(&d) == nil && d.Message != "" {
		return d
	}
	return wire.TurnError{Type: errorType(err), Message: errorMessage(err)}
}

// invoke runs one model call of agent p as an activity and returns its reply, which
// becomes the turn's next message.
func (s *chatState) invoke(ctx workflow.Context, p wire.Participant, t *turn) (chat.Message, error) {
	return s.invokeWith(ctx, p, t, "")
}

// invokeWith is invoke with the request's tool choice ("" = the model's choice,
// wire.ToolChoiceNone = answer without calling tools).
func (s *chatState) invokeWith(ctx workflow.Context, p wire.Participant, t *turn, toolChoice string) (chat.Message, error) {
	ctx = workflow.WithValue(ctx, wire.LogAgentKey, p.ID) // on the reply's log lines
	c := p.Call.WithDefaults()
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Duration(c.Timeout),
		HeartbeatTimeout:    time.Duration(c.HeartbeatTimeout),
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Duration(c.InitialInterval),
			BackoffCoefficient:     2,
			MaximumInterval:        time.Duration(c.MaxInterval),
			MaximumAttempts:        int32(c.MaxAttempts),
			NonRetryableErrorTypes: []string{wire.ErrTypeModelRejected, wire.ErrTypeUnknownAgent},
		},
	})
	if err := s.summarizeIfDue(ctx, p, t); err != nil {
		return chat.Message{}, err
	}
	var (
		in  wire.InvokeInput
		res wire.InvokeResult
	)
	for resynced := false; ; resynced = true {
		in = s.invokeInput(ctx, p, t)
		in.ReplyID, in.ToolChoice = s.nextID(ctx, t), toolChoice
		s.startReply(t, p, in.ReplyID)
		err := s.agentActivity(actx, wire.InvokeAgentActivity, in, &res)
		if err == nil {
			break
		}
		if t.cancelled {
			t.partial = s.abandonReply()
			return chat.Message{}, err
		}
		if err = unwrapActivityError(err); resynced || !s.dropLostThread(ctx, p, err) {
			s.abandonReply()
			if errorType(err) == wire.ErrTypeStoreConflict {
				s.retireIDs(in.ReplyID) // the store holds another body under it
			}
			return chat.Message{}, err
		}
	}
	if res.Stored != "" && s.Store == "" {
		s.Store = res.Stored
	}
	if ch := s.channels.Of(p); ch != nil && len(res.ChannelState) > 0 {
		ch.SetState(res.ChannelState) // a service thread's new id and watermark
	}
	s.uniqueCallIDs(in.ReplyID, res.Contents)
	s.addUsage(p.ID, res)
	m := chat.Message{
		MessageID:  in.ReplyID,
		Role:       chat.RoleAssistant,
		AuthorName: p.Name,
		AgentID:    p.ID,
		CreatedAt:  workflow.Now(ctx).UTC(),
		Contents:   res.Contents,
		Usage:      res.Usage,
	}
	s.finishReply(t, m)
	return m, nil
}

func (s *chatState) participant(id string) wire.Participant {
	for _, p := range s.Participants {
		if p.ID == id {
			return p
		}
	}
	return wire.Participant{ID: id, Name: id}
}

// uniqueCallIDs makes the callIds of a reply unique in the chat: a provider may reuse
// an id (or give none), and the chat-state document requires unique callIds. A
// repeated or empty id becomes "<replyId>#<n>"; the model sees the id the history
// holds, in the call and in its result alike. An id under which another call ran in a
// turn taken back counts as used too, and so does one of a message whose body is in the
// message store (callIDs): a call's id is its idempotency key. A new id that is taken as
// well becomes "<replyId>#<n+1>", and so on.
func (s *chatState) uniqueCallIDs(replyID string, contents []chat.Content) {
	if !slices.ContainsFunc(contents, func(c chat.Content) bool { return c.Type == chat.ContentFunctionCall }) {
		return // no calls: the history need not be scanned
	}
	used := map[string]bool{}
	for _, m := range s.history.Window() {
		for _, c := range m.FunctionCalls() {
			used[c.CallID] = true
		}
	}
	taken := func(c chat.Content) bool {
		return c.CallID == "" || used[c.CallID] || s.ranOther(c) ||
			s.CallIDs.MayHave(c.CallID)
	}
	for i := range contents {
		c := &contents[i]
		if c.Type != chat.ContentFunctionCall {
			continue
		}
		if taken(*c) {
			c.CallID = fmt.Sprintf("%s#%d", replyID, i+1)
			// A retried turn's reply has the same replyId: the new id may be taken too.
			// The filter of stored calls is asked for the first 16 tries only: one that
			// holds very many ids says "maybe" to nearly all, and a "<replyId>#<n>" can
			// only be taken by this reply's own earlier attempts (used, ranOther).
			for n := i + 2; taken(*c) && (n < i+18 || used[c.CallID] || s.ranOther(*c)); n++ {
				c.CallID = fmt.Sprintf("%s#%d", replyID, n)
			}
		}
		used[c.CallID] = true
	}
}

// turnResult returns the answer of a finished turn, read back from the history; past
// HistoryPageBytes its messages are references (boundMessages).
func (s *chatState) turnResult(t *turn) wire.TurnResult {
	msgs := boundMessages(s.history.Slice(t.start, t.end))
	complete := s.IsComplete && t.end == s.history.Len()
	return wire.TurnResult{MessageID: t.msg.MessageID, Messages: msgs, IsComplete: complete, Cancelled: t.cancelled}
}

// unwrapActivityError returns the application error an activity failed with, without
// the activity wrapper, so callers read the provider's or registry's own message.
func unwrapActivityError(err error) error {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return temporal.NewNonRetryableApplicationError(app.Message(), app.Type(), nil)
	}
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		msg := fmt.Sprintf("model call timed out (%s)", timeout.TimeoutType())
		if cause := errors.Unwrap(timeout); cause != nil {
			msg += ": " + cause.Error()
		}
		return temporal.NewNonRetryableApplicationError(msg, wire.ErrTypeModelUnavailable, nil)
	}
	return err
}

// errorMessage returns an error's own message, without the "(type: …, retryable: …)"
// that Temporal's application errors append.
func errorMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	return err.Error()
}

func errorType(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Type()
	}
	return "Error"
}

// sameContents reports whether a retried turn carries the message it was first sent with.
func sameContents(a, b []chat.Content) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Text != b[i].Text || a[i].URI != b[i].URI || a[i].Data != b[i].Data ||
			string(a[i].Raw) != string(b[i].Raw) {
			return false
		}
	}
	return true
}

// InlineHistoryBytes is the largest history a model call's input carries whole; longer
// ones travel as the delta since the run's previous call, or are read by the activity
// from the run, so a model call's input holds only what is new since the previous one.
const InlineHistoryBytes = 16 << 10

// maxDeltaBytes is the largest delta (encoded) a model call's input carries, well under
// the 2 MB payload limit whatever else the input holds; a larger one is read by the
// activity.
const maxDeltaBytes = 256 << 10

// invokeInput describes the history agent p sees for this call.
//
// A chat_history agent sees the history through its reducer (and its channel's summary).
// A service-thread agent (responses, assistant) is sent only what its service has not
// seen: the messages after its channel's watermark.
//
// The history travels, in order of preference: as the messages added since this run's
// previous model call (the worker that made that call has the rest cached; with eager
// activity execution, the usual case); whole, as a delta from the start, when it is
// short (the worker then caches it); as the agent's reduced view, when only that is
// short; or not at all, the activity reading it from the run by its History query.
func (s *chatState) invokeInput(ctx workflow.Context, p wire.Participant, t *turn) wire.InvokeInput {
	in := wire.InvokeInput{ChatID: s.chatID, RunID: workflow.GetInfo(ctx).WorkflowExecution.RunID,
		AgentID: p.ID, TurnID: t.msg.MessageID, Store: s.Store, Tools: make([]string, 0, len(p.Tools))}
	for _, tool := range p.Tools {
		in.Tools = append(in.Tools, tool.Name)
	}
	if ch := s.channels.Of(p); ch != nil {
		in.ChannelState = ch.State()
	}
	if p.Kind.ServiceThread() {
		if wm, _ := wire.SyncedThrough(in.ChannelState); wm != "" {
			if i := s.history.IndexOf(wm); i < s.history.Len() {
				in.HistoryFrom = i + 1
			}
		}
	}
	if in.Base = s.history.Base(); in.Base > 0 && p.Kind.ServiceThread() { // the agent reads the window
		in.HistoryFrom = max(in.HistoryFrom, in.Base)
	}
	committed := s.history.IndexOf(t.msg.MessageID)
	switch {
	case s.sentCommitted > 0 && s.sentCommitted <= committed && messagesBytes(s.history.Since(s.sentCommitted)) <= maxDeltaBytes:
		in.DeltaFrom, in.Delta = s.sentCommitted, slices.Clone(s.history.Since(s.sentCommitted))
	case s.history.Base() == 0 && inlineable(s.history.Window()):
		in.Delta = slices.Clone(s.history.Window())
	default:
		view := s.history.Since(in.HistoryFrom)
		if !p.Kind.ServiceThread() {
			view = p.Reducer.ReduceWith(s.history.Window(), in.ChannelState)
		}
		if inlineable(view) {
			in.History = view
			return in
		}
	}
	in.HistoryLength, in.Committed, in.Reducer = s.history.Len(), committed, p.Reducer
	s.sentCommitted = committed
	return in
}

// inlineable reports whether msgs may travel whole in an activity's input: at most
// InlineHistoryBytes encoded, with every body present.
func inlineable(msgs []chat.Message) bool {
	return messagesBytes(msgs) <= InlineHistoryBytes && !historyHasStubs(msgs)
}
