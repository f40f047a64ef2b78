package agentchat

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// StreamEvent is one event of a chat's stream (wire.StreamEvent; README, "Streaming").
type StreamEvent = wire.StreamEvent

// Event is a StreamEvent at its offset in the chat's stream: Follow from Offset+1 to
// resume after it, on chat ChatID when it is set.
type Event struct {
	Offset int64 `json:"offset"`
	// ChatID is the chat whose stream Offset is in when it is not the one followed:
	// the target of a migration that Follow followed (see Follow); "" otherwise.
	ChatID string `json:"chatId,omitempty"`
	StreamEvent
}

// streamRetry is the pause before polling again a run that hands over (StreamDraining)
// or a chat whose run could not be reached.
const streamRetry = 100 * time.Millisecond

// endGrace is how long SendStream waits, once the turn's update has answered, for the
// turn's last event before it reports the answer without it (a turn answered before:
// a retried messageId).
const endGrace = 2 * time.Second

// Follow yields the chat's events from offset fromOffset on (0: from the oldest the chat
// keeps), as they happen, by the Workflow Streams poll update; it follows the chat
// across continue-as-new, and ends when the chat's workflow has closed and every event
// was yielded, or with ctx's error. An offset dropped at a continue-as-new (the text
// deltas of finished messages) resumes at the next event kept, the message's
// messageDone; one before everything kept resumes at the oldest kept.
//
// A closed chat (completed, failed, terminated, or one that closes while Follow waits)
// answers no poll: Follow reads the events its last run holds from the offset on by the
// StreamRead query, then ends; an offset past its end ends at once, with no error. A
// chat that migrated goes on in its target's stream: Follow follows the target from
// its first event when it is in this client's namespace and cluster (a new chat id),
// as it does across continue-as-new; otherwise it ends with a *MigratedError naming the
// target's cluster, namespace and chat id, where the caller can Follow it from 0.
//
// Errors (yielded, then the sequence ends): ErrChatNotFound; ErrNoKeyRing (an encrypted
// chat, this client without a key ring: said at once); ctx's error; an item
// that is not a StreamEvent; a *MigratedError.
func (c *Client) Follow(ctx context.Context, chatID string, fromOffset int64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if c.sealedFromUs(ctx, chatID) { // else an encrypted chat fails only at its next event
			yield(Event{}, fmt.Errorf("agentchat: follow chat %q: %w", chatID, ErrNoKeyRing))
			return
		}
		followed := chatID
		for chatID != "" {
			on := chatID
			chatID = c.follow(ctx, on, fromOffset, func(ev Event, err error) bool {
				if err == nil && on != followed {
					ev.ChatID = on
				}
				return yield(ev, err)
			})
			fromOffset = 0
		}
	}
}

// follow yields chat chatID's events from offset on until it closes, as Follow does,
// and returns the chat its stream goes on in ("": none, or yield stopped, or an error
// was yielded).
func (c *Client) follow(ctx context.Context, chatID string, offset int64, yield func(Event, error) bool) (next string) {
	for {
		res, err := c.poll(ctx, chatID, offset)
		if err != nil {
			retry, again := c.pollFailed(ctx, chatID, err)
			switch {
			case again && retry == 0:
				offset = 0 // before the log's base: from the oldest kept
				continue
			case again:
				if sleep(ctx, retry) == nil {
					continue
				}
				err = ctx.Err()
			case retry < 0:
				return c.followClosed(ctx, chatID, offset, yield)
			default:
				if ended := endedBy(ctx, err); ended != nil {
					err = ended // not the SDK's words for it, which errors.Is does not match
				} else {
					err = c.chatError(ctx, "follow", chatID, err)
				}
			}
			yield(Event{}, err)
			return ""
		}
		if !yieldItems(chatID, res.Items, yield) {
			return ""
		}
		offset = res.NextOffset
		if len(res.Items) == 0 && sleep(ctx, streamRetry) != nil {
			yield(Event{}, ctx.Err()) // answered empty: the run hands over or ends
			return ""
		}
	}
}

// followClosed yields the events closed chat chatID's last run holds from offset on
// (the StreamRead query) and returns its migration target's id when this client
// reaches the target, else "" (after a *MigratedError when it does not).
func (c *Client) followClosed(ctx context.Context, chatID string, offset int64, yield func(Event, error) bool) string {
	for {
		var res wire.StreamReadResult
		in := wire.StreamPollInput{Topics: []string{wire.StreamTopic}, FromOffset: offset}
		if err := c.query(ctx, chatID, wire.StreamReadQuery, &res, in); err != nil {
			if ended := endedBy(ctx, err); ended != nil {
				err = ended
			}
			yield(Event{}, err)
			return ""
		}
		if !yieldItems(chatID, res.Items, yield) {
			return ""
		}
		offset = res.NextOffset
		if res.MoreReady {
			continue
		}
		to := res.MigratedTo
		switch {
		case to == nil:
			return ""
		case (to.Cluster == "" || to.Cluster == c.cluster) && to.Address == "" && to.Namespace == c.namespace && to.ChatID != chatID:
			return to.ChatID
		}
		yield(Event{}, &MigratedError{ChatID: chatID, Target: *to})
		return ""
	}
}

// yieldItems decodes and yields items of chat chatID's stream; it reports whether to
// go on (false: yield stopped, or an item was not a StreamEvent).
func yieldItems(chatID string, items []wire.StreamItem, yield func(Event, error) bool) bool {
	for _, it := range items {
		var ev StreamEvent
		if err := wire.DecodeStreamData(it.Data, &ev); err != nil {
			yield(Event{}, fmt.Errorf("agentchat: follow chat %q: offset %d: %w", chatID, it.Offset, err))
			return false
		}
		if !yield(Event{Offset: it.Offset, StreamEvent: ev}, nil) {
			return false
		}
	}
	return true
}

// releaseTimeout bounds release's poll.
const releaseTimeout = time.Second

// release tells a chat whose run is closing that this subscriber has read its events
// before offset, so that the run need not wait for it (a closed run answers no poll:
// it stays open a few seconds for subscribers that have not read its last events).
func (c *Client) release(ctx context.Context, chatID string, offset int64) {
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	_, _ = c.poll(ctx, chatID, offset)
}

// poll runs one poll update on the chat's current run.
func (c *Client) poll(ctx context.Context, chatID string, offset int64) (wire.StreamPollResult, error) {
	var res wire.StreamPollResult
	h, err := c.tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{UpdateID: uuid.NewString(), WorkflowID: chatID,
		UpdateName: wire.StreamPollUpdate, WaitForStage: client.WorkflowUpdateStageCompleted,
		Args: []any{wire.StreamPollInput{Topics: []string{wire.StreamTopic}, FromOffset: offset}}})
	if err == nil {
		err = h.Get(ctx, &res)
	}
	return res, err
}

// pollFailed says what to do after a failed poll: again after retry (0: from offset 0),
// end (retry < 0, again false: the chat's workflow closed), or fail with the error
// returned (again false, retry 0).
func (c *Client) pollFailed(ctx context.Context, chatID string, err error) (retry time.Duration, again bool) {
	if endedBy(ctx, err) != nil {
		return 0, false
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		switch app.Type() {
		case wire.ErrTypeTruncatedOffset:
			return 0, true
		case wire.ErrTypeStreamDraining:
			return streamRetry, true
		}
	}
	var busy *serviceerror.ResourceExhausted
	if errors.As(err, &busy) {
		return streamRetry, true
	}
	d, derr := c.tc.DescribeWorkflowExecution(ctx, chatID, "")
	if derr != nil {
		return 0, false
	}
	if d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return streamRetry, true // the run the poll reached handed over
	}
	return -1, false
}

// SendStream sends a user turn, as Send does, and yields the turn's events as they
// happen: turnAccepted, then per reply agentStarted, textDelta..., messageDone (and
// toolCall, toolResult, approvalNeeded, retry), up to turnDone, turnFailed or
// turnCancelled, which ends the sequence; after turnFailed or turnCancelled, the turn's
// error as Send returns it. Events the stream could not give (a retried messageId the
// chat answered before; a temporary thread whose run closed before they were read)
// come from the answer: a messageDone per message, then turnDone.
//
// Errors (yielded, then the sequence ends): those of Send when the turn is refused.
func (c *Client) SendStream(ctx context.Context, chatID string, msg SendMessageInput) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if msg.MessageID == "" {
			msg.MessageID = uuid.NewString()
		}
		if err := msg.Validate(); err != nil {
			yield(Event{}, refused("send to", chatID, err))
			return
		}
		var from int64
		if err := c.queryAs(ctx, "send to", "nothing was sent", chatID, wire.StreamOffsetQuery, &from); err != nil {
			if c.keys == nil && encryptedAnswer(err) { // the turn's text would go in the clear
				err = fmt.Errorf("agentchat: send to chat %q: %w; nothing was sent", chatID, ErrNoKeyRing)
			}
			yield(Event{}, err)
			return
		}
		c.streamTurn(ctx, "send to", chatID, msg.MessageID, from, false, func(ctx context.Context) (client.WorkflowUpdateHandle, error) {
			var h client.WorkflowUpdateHandle
			err := retryBusy(ctx, func() error {
				updateID := uuid.NewString()
				return c.withWorker(ctx, chatID, updateID, func(ctx context.Context) (err error) {
					h, err = c.tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{UpdateID: updateID, WorkflowID: chatID,
						UpdateName: wire.SendMessageUpdate, Args: []any{msg}, WaitForStage: client.WorkflowUpdateStageAccepted})
					if err != nil {
						return err
					}
					return rejection(ctx, h)
				})
			})
			if errors.Is(err, errNotTaken) {
				return nil, c.chatNoWorker(ctx, "send to", chatID, pendingUpdate(wire.SendMessageUpdate, msg), err)
			}
			if err != nil {
				return nil, c.chatError(ctx, "send to", chatID, err)
			}
			return h, nil
		}, yield)
	}
}

// StartStream starts a chat with its first turn (update-with-start) and yields the
// turn's events, as SendStream does. opts.ChatID "" gets a new UUID.
//
// Errors: those of Start; ErrChatExists when the id is taken.
func (c *Client) StartStream(ctx context.Context, opts StartOptions, msg SendMessageInput) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		in, err := opts.input(false)
		if err != nil {
			yield(Event{}, err)
			return
		}
		id := opts.ChatID
		if id == "" {
			id = uuid.NewString()
		}
		c.startStream(ctx, id, in, msg, yield)
	}
}

// RunStream answers one message on a temporary thread, as Run does, and yields the
// turn's events, as SendStream does.
func (c *Client) RunStream(ctx context.Context, opts RunOptions, msg SendMessageInput) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		in, err := StartOptions{Participants: opts.Agents, Selection: opts.Selection, Termination: opts.Termination}.input(true)
		if err != nil {
			yield(Event{}, err)
			return
		}
		id := opts.ChatID
		if id == "" {
			id = "run-" + uuid.NewString()
		}
		c.startStream(ctx, id, in, msg, yield)
	}
}

func (c *Client) startStream(ctx context.Context, id string, in wire.AgentChatInput, msg SendMessageInput, yield func(Event, error) bool) {
	if msg.MessageID == "" {
		msg.MessageID = uuid.NewString()
	}
	if _, err := msg.Message(in.EffectiveMaxMessageBytes()); err != nil { // before the chat exists
		yield(Event{}, refused("start", id, err))
		return
	}
	op, began := c.startOperation(ctx, id, in, false), time.Now()
	discarding := func(e Event, err error) bool { // a chat this client cannot use (its input in the clear, other keys) is deleted
		return yield(e, c.discardFailedStart(ctx, id, op, began, c.discardIfClearText(ctx, id, op, began, err)))
	}
	c.streamTurn(ctx, "start", id, msg.MessageID, 0, in.Temporary, func(ctx context.Context) (client.WorkflowUpdateHandle, error) {
		var h client.WorkflowUpdateHandle
		updateID := uuid.NewString()
		err := c.withWorker(ctx, id, updateID, func(ctx context.Context) (err error) {
			h, err = c.tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
				StartWorkflowOperation: op,
				UpdateOptions: client.UpdateWorkflowOptions{UpdateID: updateID, UpdateName: wire.SendMessageUpdate, Args: []any{msg},
					WaitForStage: client.WorkflowUpdateStageAccepted},
			})
			return err
		})
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		switch {
		case errors.Is(err, errNotTaken):
			return nil, c.startNoWorker(ctx, id, op, began)
		case errors.As(err, &started):
			return nil, fmt.Errorf("agentchat: start chat %q: %w: %s", id, ErrChatExists, c.idTaken(ctx, id))
		case err != nil:
			if ce := asChatError("start", id, err); ce != nil {
				return nil, ce
			}
			return nil, fmt.Errorf("agentchat: start chat %q: %w", id, err)
		}
		return h, nil
	}, discarding)
}

// streamTurn has turn turnID accepted (accept), then yields its events from offset
// from on until its last one (verb names the call in errors: "send to", "start"); when
// the turn's answer comes without it (answered
// before), it yields a turnDone of its own, and the turn's error when it failed.
func (c *Client) streamTurn(ctx context.Context, verb, chatID, turnID string, from int64, closes bool,
	accept func(context.Context) (client.WorkflowUpdateHandle, error), yield func(Event, error) bool) {
	h, err := accept(ctx)
	if err != nil {
		yield(Event{}, err)
		return
	}
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	type answer struct {
		res TurnResult
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		var a answer
		a.err = h.Get(fctx, &a.res)
		answered <- a
		if a.err != nil || a.res.Replayed { // a replayed turn has no events to wait for
			stop()
		} else {
			time.AfterFunc(endGrace, stop)
		}
	}()
	ended, seen := false, map[string]bool{}
	for ev, err := range c.Follow(fctx, chatID, from) {
		if err != nil {
			break
		}
		if ev.TurnID != turnID {
			continue
		}
		if ev.Type == wire.EventMessageDone {
			seen[ev.MessageID] = true
		}
		if ev.Type == wire.EventTurnDone {
			if ev.IsComplete || closes {
				c.release(ctx, chatID, ev.Offset+1)
			}
			yield(ev, nil)
			return
		}
		if ev.Type == wire.EventApprovalNeeded {
			seen[ev.Call.CallID] = true
		}
		if !yield(ev, nil) {
			return
		}
		if ev.Ends() {
			ended = true
			break // then the turn's error, as Send returns it
		}
	}
	select {
	case a := <-answered:
		if a.err != nil {
			yield(Event{}, c.chatError(ctx, verb, chatID, a.err))
			return
		}
		if !ended {
			answerEvents(turnID, a.res, seen, yield)
		}
	case <-ctx.Done():
		yield(Event{}, ctx.Err())
	}
}

// rejection returns the error of an update its validator refused (the handle then
// holds the outcome already, and Get returns it without a call), or nil for one that
// was accepted. A refusal comes from Get, not from UpdateWorkflow, when the update
// waits only for acceptance; retryBusy retries the retryable ones (ContinuingAsNew,
// QueueFull).
func rejection(ctx context.Context, h client.WorkflowUpdateHandle) error {
	probe, cancel := context.WithCancel(ctx)
	cancel() // an accepted update's Get would wait: it returns at once instead
	var app *temporal.ApplicationError
	if err := h.Get(probe, nil); errors.As(err, &app) {
		return err
	}
	return nil
}

// answerEvents yields the events of answer res that the stream did not give (the
// chat's run closed before they were read, or the turn was answered before): a
// messageDone for each message not seen done, approvalNeeded for each call awaited
// not seen, and turnDone.
func answerEvents(turnID string, res TurnResult, seen map[string]bool, yield func(Event, error) bool) {
	for i := range res.Messages {
		m := res.Messages[i]
		if !seen[m.MessageID] && !yield(Event{StreamEvent: StreamEvent{Type: wire.EventMessageDone, TurnID: turnID,
			MessageID: m.MessageID, AgentID: m.AgentID, Message: &m}}, nil) {
			return
		}
	}
	for _, p := range res.AwaitingApproval {
		if seen[p.CallID] {
			continue
		}
		call := chat.Content{Type: chat.ContentFunctionCall, CallID: p.CallID, Name: p.Tool, Arguments: p.Arguments}
		if !yield(Event{StreamEvent: StreamEvent{Type: wire.EventApprovalNeeded, TurnID: turnID, AgentID: p.AgentID, Call: &call}}, nil) {
			return
		}
	}
	yield(Event{StreamEvent: StreamEvent{Type: wire.EventTurnDone, TurnID: turnID, IsComplete: res.IsComplete, Replayed: res.Replayed}}, nil)
}

// CancelTurn stops a turn of the chat (the CancelTurn update): in.MessageID "" is the
// turn in flight, whose model call and tools are cancelled; it ends with what it
// produced, the last reply kept marked incomplete (chat.Message.Incomplete) unless
// in.DropPartial, every tool call answered, and the chat takes its next turn. A queued
// turn's messageId takes it out of the queue (its Send fails with TurnCancelled).
//
// Errors: ErrChatNotFound, ErrChatClosed; InvalidInput when no such turn is in flight
// or queued (or it waits for approvals: reject its calls instead).
func (c *Client) CancelTurn(ctx context.Context, chatID string, in CancelTurnInput) (CancelTurnResult, error) {
	var res CancelTurnResult
	if err := c.update(ctx, chatID, "cancel a turn of", wire.CancelTurnUpdate, in, &res); err != nil {
		return CancelTurnResult{}, err
	}
	return res, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
