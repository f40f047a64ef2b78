package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// streamLinger is how long a run whose chat closed, or that continues as new, stays
// open for the subscribers that polled it to read its last events (a closed workflow
// answers no poll; the next run keeps no delta of a finished message).
const streamLinger = 5 * time.Second

// lingerForSubscribers keeps a closing or handing-over run open until its subscribers
// have read every event (the next run keeps no text delta of a finished message), or
// streamLinger has passed: only when one polled this run and has not. It reports
// whether it waited.
func (s *chatState) lingerForSubscribers(ctx workflow.Context) bool {
	if s.events.CaughtUp() {
		return false
	}
	_, _ = workflow.AwaitWithTimeout(ctx, streamLinger, s.events.CaughtUp)
	return true
}

// registerStream sets the protocol's handlers: the publish signal's channel (taken
// while a model call runs, getPublishing, and drained with the other signals), the
// poll update and the offset query; and agentchat's followers query. None emits a
// command.
func (s *chatState) registerStream(ctx workflow.Context) error {
	s.publish = workflow.GetSignalChannel(ctx, wire.StreamPublishSignal)
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.StreamPollUpdate, s.poll,
		workflow.UpdateHandlerOptions{Validator: s.validatePoll}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, wire.StreamReadQuery, s.readStream); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, wire.StreamOffsetQuery, func() (int64, error) { return s.events.Next(), nil }); err != nil {
		return err
	}
	return workflow.SetQueryHandler(ctx, wire.StreamFollowersQuery, func() (wire.StreamFollowers, error) {
		return s.events.Followers(workflow.Now(ctx)), nil
	})
}

// takePublished takes the publish signals that have arrived (eventLog.Publish keeps
// the text deltas of the reply in flight and drops the rest).
func (s *chatState) takePublished() {
	for {
		var in wire.StreamPublishInput
		if !s.publish.ReceiveAsync(&in) {
			return
		}
		s.events.Publish(in)
	}
}

// getPublishing waits for f, an activity's result, into out, taking the publish
// signals that arrive meanwhile: a model call publishes its reply's text while it
// runs. The chat has no coroutine of its own for them (each costs an idle chat a
// goroutine stack); a signal that comes when no call runs waits for the next drain.
func (s *chatState) getPublishing(ctx workflow.Context, f workflow.Future, out any) error {
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(f, func(workflow.Future) {})
	sel.AddReceive(s.publish, func(workflow.ReceiveChannel, bool) { s.takePublished() })
	for !f.IsReady() {
		sel.Select(ctx)
	}
	s.takePublished() // sent before the call returned
	return f.Get(ctx, out)
}

// readStream is the StreamRead query: the items a poll from in.FromOffset would
// return, at once (a closed chat answers queries, not polls), from the log's base when
// in.FromOffset is before it; and where the chat went, once it migrated. A query
// emits no command: it needs no version.
func (s *chatState) readStream(in wire.StreamPollInput) (wire.StreamReadResult, error) {
	if err := s.validatePoll(in); err != nil {
		return wire.StreamReadResult{}, err
	}
	return wire.StreamReadResult{StreamPollResult: s.events.Page(max(in.FromOffset, s.events.Base()), in.Topics),
		MigratedTo: s.transfers.MigratedTo()}, nil
}

// streamDetached reports whether polls must not wait: the run hands over or ends (no
// turn runs or waits to run), so every handler must finish.
func (s *chatState) streamDetached() bool {
	switch s.phase {
	case phaseDraining, phaseCompleted, phaseFailed, phaseMigrated:
		return s.turnQueue.Active() == nil && !s.turnQueue.HasUpdateTurn()
	}
	return false
}

// validatePoll refuses a negative offset. While the run hands over or ends, a poll is
// answered at once, empty when nothing is new (the protocol's reference refuses it
// with StreamDraining instead): polling again reaches the next run, or finds the chat
// closed; and the poll tells the run what its subscriber has read (lingerForSubscribers).
func (s *chatState) validatePoll(in wire.StreamPollInput) error {
	if in.FromOffset < 0 {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("stream poll: from_offset %d is negative", in.FromOffset), wire.ErrTypeInvalidInput, nil)
	}
	return nil
}

// poll is the poll update (eventLog.Poll): its wait ends when the run hands over or
// ends (streamDetached).
func (s *chatState) poll(ctx workflow.Context, in wire.StreamPollInput) (wire.StreamPollResult, error) {
	return s.events.Poll(ctx, in, s.streamDetached)
}

// startReply says agent p begins reply replyID of turn t, and takes its deltas from now
// on (eventLog.StartReply).
func (s *chatState) startReply(t *turn, p wire.Participant, replyID string) {
	s.events.StartReply(t.msg.MessageID, p, replyID)
}

// finishReply ends the reply in flight with its final message m (eventLog.FinishReply)
// and says m is final.
func (s *chatState) finishReply(t *turn, m chat.Message) {
	s.events.FinishReply(m)
	s.messageDone(t, m)
}

// messageDone says m, a message of turn t, is final.
func (s *chatState) messageDone(t *turn, m chat.Message) {
	s.turnEvent(t, wire.StreamEvent{Type: wire.EventMessageDone, MessageID: m.MessageID, AgentID: m.AgentID, Message: &m})
}

// abandonReply forgets the reply in flight (its call failed or was cancelled) and
// returns it.
func (s *chatState) abandonReply() *liveReply {
	return s.events.Abandon()
}

// turnEvent appends an event of turn t.
func (s *chatState) turnEvent(t *turn, ev wire.StreamEvent) {
	ev.TurnID = t.msg.MessageID
	s.events.Emit(ev)
}

// announceWaiting puts an approvalNeeded for each call the chat waits for at the end of
// the log, and takes out the announcements of those calls the log held from a previous
// run: whatever State lists as pending, the stream says, once, read from offset 0 or from
// where the previous run's log ended. A run that rebuilds its wait from the history (a
// continue-as-new, whose carried log may have dropped the first announcement; a
// document restored at the start or by Import, whose log begins empty) calls it.
func (s *chatState) announceWaiting() {
	waiting := s.approvals.Awaiting()
	if len(waiting) == 0 {
		return
	}
	s.events.DropAnnouncements(waiting)
	for _, p := range waiting {
		call := chat.Content{Type: chat.ContentFunctionCall, CallID: p.CallID, Name: p.Tool, Arguments: p.Arguments}
		s.turnEvent(s.approvals.Suspended(), wire.StreamEvent{Type: wire.EventApprovalNeeded, AgentID: p.AgentID, Call: &call})
	}
}

// turnAccepted says turn t was queued, at its place in the queue, with the start of
// its text.
func (s *chatState) turnAccepted(t *turn) {
	pos := s.turnQueue.Len()
	if s.turnQueue.Active() != nil {
		pos++
	}
	s.turnEvent(t, wire.StreamEvent{Type: wire.EventTurnAccepted, Position: pos,
		Text: wire.ClipText(t.msg.Text(), wire.AcceptedTextBytes), Author: t.msg.AuthorName})
}

// carryEvents is the log the next run takes (eventLog.Carry).
func (s *chatState) carryEvents() *wire.StreamCarry { return s.events.Carry() }

// resumeEvents takes over the log a previous run carried.
func (s *chatState) resumeEvents(c *wire.StreamCarry) { s.events.Resume(c) }

// replyInFlight describes the reply in flight when its messageId is id; "" when none is.
func (s *chatState) replyInFlight(id string) string { return s.events.InFlight(id) }

// stopTextWait bounds awaitPartial's wait: a model call holding text back asks who
// follows every 250 ms (activities.publisher).
const stopTextWait = time.Second

// awaitPartial waits, before turn t's model call is cancelled, for the text the call
// holds back while nobody follows the chat: meanwhile the followers query says
// followed, the call publishes what it holds, and the partial reply kept is the text
// written so far, as when someone follows. It waits at most stopTextWait (a reply
// with no text yet), and not at all when the partial is to be dropped, no reply of t is
// in flight, or someone follows (its deltas are published already).
func (s *chatState) awaitPartial(ctx workflow.Context, t *turn) {
	if t.dropPartial {
		return
	}
	s.events.AwaitHeldText(ctx, t.msg.MessageID, stopTextWait)
}
