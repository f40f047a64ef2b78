package workflows

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// eventLog is the chat's stream: an offset-addressed log of wire.StreamEvent items,
// read by Temporal's Workflow Streams protocol (wire/streams.go). The workflow appends
// the turn's events itself; the model call's activity publishes the text deltas by the
// publish signal, and the log takes those of the reply in flight only (live), of its
// latest attempt. Nothing here emits a command: the log is state, rebuilt by replay.
type eventLog struct {
	items []wire.StreamItem
	// base is the first offset the log can answer; offsets before it were dropped at a
	// continue-as-new. next is one past the last item.
	base, next int64
	// sequences are the publishers' last sequences (the protocol's deduplication); the
	// publishers are the attempts of the reply in flight, so live resets them.
	sequences map[string]int64
	live      *liveReply
	// read is the highest offset a poll of this run asked for: its subscriber has read
	// everything before it (0: none polled).
	read int64
	// waiting is the number of polls that wait now; answered is when the last poll was
	// answered, by the workflow's clock (followers).
	waiting  int
	answered time.Time
	// stopping is the number of stops that wait for the text a model call holds back
	// (awaitPartial): it counts as following.
	stopping int
}

// followers is the answer of wire.StreamFollowersQuery at now, the time of the run's
// latest workflow task: a subscriber follows while its poll waits, and between two
// polls, its last answered at most wire.StreamFollowGrace before. A subscriber gone
// for good stops counting after the grace: whoever asks publishes while followed, and
// each publication is a workflow task that moves now on. A poll left waiting by a
// subscriber that went away counts until an event answers it. A stop waiting for the
// text held back counts too (awaitPartial).
func (l *eventLog) followers(now time.Time) wire.StreamFollowers {
	recent := !l.answered.IsZero() && now.Sub(l.answered) <= wire.StreamFollowGrace
	return wire.StreamFollowers{Waiting: l.waiting, Followed: l.waiting > 0 || recent || l.stopping > 0}
}

// streamLinger is how long a run whose chat closed, or that continues as new, stays
// open for the subscribers that polled it to read its last events (a closed workflow
// answers no poll; the next run keeps no delta of a finished message).
const streamLinger = 5 * time.Second

// lingerForSubscribers keeps a closing or handing-over run open until its subscribers
// have read every event (the next run keeps no text delta of a finished message), or
// streamLinger has passed: only when one polled this run and has not. It reports
// whether it waited.
func (s *chatState) lingerForSubscribers(ctx workflow.Context) bool {
	l := &s.events
	caughtUp := func() bool { return l.read == 0 || l.read >= l.next }
	if caughtUp() {
		return false
	}
	_, _ = workflow.AwaitWithTimeout(ctx, streamLinger, caughtUp)
	return true
}

// liveReply is the reply whose text deltas the log takes.
type liveReply struct {
	turnID, messageID, agentID, author string
	attempt                            int
	text                               strings.Builder
}

// emit appends ev to the log.
func (l *eventLog) emit(ev wire.StreamEvent) {
	l.items = append(l.items, wire.StreamItem{Topic: wire.StreamTopic, Data: wire.EncodedStreamEvent(ev), Offset: l.next})
	l.next++
}

// from returns the index in items of the first item at or after offset.
func (l *eventLog) from(offset int64) int {
	return sort.Search(len(l.items), func(i int) bool { return l.items[i].Offset >= offset })
}

// registerStream sets the protocol's handlers: the publish signal (taken by a
// goroutine of its own), the poll update and the offset query; and agentchat's
// followers query. None emits a command.
func (s *chatState) registerStream(ctx workflow.Context) error {
	publish := workflow.GetSignalChannel(ctx, wire.StreamPublishSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var in wire.StreamPublishInput
			if !publish.Receive(ctx, &in) {
				return
			}
			s.takePublish(in)
		}
	})
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.StreamPollUpdate, s.poll,
		workflow.UpdateHandlerOptions{Validator: s.validatePoll}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, wire.StreamReadQuery, s.readStream); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, wire.StreamOffsetQuery, func() (int64, error) { return s.events.next, nil }); err != nil {
		return err
	}
	return workflow.SetQueryHandler(ctx, wire.StreamFollowersQuery, func() (wire.StreamFollowers, error) {
		return s.events.followers(workflow.Now(ctx)), nil
	})
}

// readStream is the StreamRead query: the items a poll from in.FromOffset would
// return, at once (a closed chat answers queries, not polls), from the log's base when
// in.FromOffset is before it; and where the chat went, once it migrated. A query
// emits no command: it needs no version.
func (s *chatState) readStream(in wire.StreamPollInput) (wire.StreamReadResult, error) {
	if err := s.validatePoll(in); err != nil {
		return wire.StreamReadResult{}, err
	}
	res := wire.StreamReadResult{StreamPollResult: s.events.page(max(in.FromOffset, s.events.base), in.Topics)}
	if m := s.migration; m != nil && m.result != nil {
		loc := m.result.Target
		res.MigratedTo = &loc
	}
	return res, nil
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

// poll is the poll update: it waits until the log holds an item at or after
// in.FromOffset (0: the log's base) on one of in.Topics (none: any), or the run hands
// over, and returns them, at most wire.StreamPollBytes of them. While it waits, and
// for wire.StreamFollowGrace after, its subscriber counts as following (followers).
//
// Errors: TruncatedOffset when in.FromOffset is before the log's base.
func (s *chatState) poll(ctx workflow.Context, in wire.StreamPollInput) (wire.StreamPollResult, error) {
	l := &s.events
	truncated := func() error {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"stream poll: offset %d was dropped; the log begins at %d", in.FromOffset, l.base), wire.ErrTypeTruncatedOffset, nil)
	}
	if in.FromOffset != 0 && in.FromOffset < l.base {
		return wire.StreamPollResult{}, truncated()
	}
	from := max(in.FromOffset, l.base)
	l.read = max(l.read, from, 1)
	wanted := func(topic string) bool { return len(in.Topics) == 0 || contains(in.Topics, topic) }
	l.waiting++
	defer func() {
		l.waiting--
		l.answered = workflow.Now(ctx)
	}()
	if err := workflow.Await(ctx, func() bool {
		for _, it := range l.items[l.from(from):] {
			if wanted(it.Topic) {
				return true
			}
		}
		return s.streamDetached()
	}); err != nil {
		return wire.StreamPollResult{}, err
	}
	if in.FromOffset != 0 && in.FromOffset < l.base {
		return wire.StreamPollResult{}, truncated()
	}
	return l.page(from, in.Topics), nil
}

// page returns the items at or after offset from on topics (none: any), at most
// wire.StreamPollBytes of them (at least one).
func (l *eventLog) page(from int64, topics []string) wire.StreamPollResult {
	res := wire.StreamPollResult{Items: []wire.StreamItem{}, NextOffset: l.next}
	size := 0
	for _, it := range l.items[l.from(from):] {
		if len(topics) > 0 && !contains(topics, it.Topic) {
			continue
		}
		n := len(it.Data) + len(it.Topic)
		if size+n > wire.StreamPollBytes && len(res.Items) > 0 {
			res.NextOffset, res.MoreReady = it.Offset, true
			break
		}
		size += n
		res.Items = append(res.Items, it)
	}
	return res
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// takePublish takes a published batch: a text delta of the reply in flight, of its
// latest attempt, is appended; anything else is dropped (the workflow alone writes the
// other events). A delta of a later attempt than the log knows says the earlier one was
// abandoned: the log says so (retry) before it.
func (s *chatState) takePublish(in wire.StreamPublishInput) {
	l := &s.events
	if in.PublisherID != "" {
		if in.Sequence <= l.sequences[in.PublisherID] {
			return // a batch sent again
		}
		if l.sequences == nil {
			l.sequences = map[string]int64{}
		}
		l.sequences[in.PublisherID] = in.Sequence
	}
	for _, e := range in.Items {
		var ev wire.StreamEvent
		if e.Topic != wire.StreamTopic || wire.DecodeStreamData(e.Data, &ev) != nil || ev.Type != wire.EventTextDelta {
			continue
		}
		r := l.live
		if r == nil || ev.MessageID != r.messageID || ev.Attempt < r.attempt || ev.Text == "" || len(ev.Text) > wire.StreamDeltaBytes {
			continue
		}
		if ev.Attempt > r.attempt {
			l.emit(wire.StreamEvent{Type: wire.EventRetry, TurnID: r.turnID, MessageID: r.messageID, AgentID: r.agentID, Attempt: r.attempt})
			r.attempt = ev.Attempt
			r.text.Reset()
			l.emit(r.started())
		}
		r.text.WriteString(ev.Text)
		l.emit(wire.StreamEvent{Type: wire.EventTextDelta, TurnID: r.turnID, MessageID: r.messageID, AgentID: r.agentID,
			Attempt: r.attempt, Text: ev.Text})
	}
}

// startReply says agent p begins reply replyID of turn t, and takes its deltas from now
// on. A reply begun again under the same id (a lost thread resynchronized) drops the
// deltas of the first (retry).
func (s *chatState) startReply(t *turn, p wire.Participant, replyID string) {
	l := &s.events
	attempt := 1
	if r := l.live; r != nil && r.messageID == replyID {
		l.emit(wire.StreamEvent{Type: wire.EventRetry, TurnID: r.turnID, MessageID: r.messageID, AgentID: r.agentID, Attempt: r.attempt})
		attempt = r.attempt + 1
	}
	l.live = &liveReply{turnID: t.msg.MessageID, messageID: replyID, agentID: p.ID, author: p.Name, attempt: attempt}
	l.sequences = nil
	l.emit(l.live.started())
}

// started is the agentStarted event of r's current attempt.
func (r *liveReply) started() wire.StreamEvent {
	return wire.StreamEvent{Type: wire.EventAgentStarted, TurnID: r.turnID, MessageID: r.messageID, AgentID: r.agentID,
		Author: r.author, Attempt: r.attempt}
}

// finishReply ends the reply in flight with its final message m: when its deltas do not
// concatenate to m's text (an agent kind or endpoint that does not stream, a batch
// lost), the log completes them, or drops them (retry) and gives the whole text, so
// the deltas of the last attempt always concatenate to the final text. A message whose
// body is in the store (a reference) keeps its deltas as they are.
func (s *chatState) finishReply(t *turn, m chat.Message) {
	l := &s.events
	r := l.live
	l.live = nil
	if r != nil && r.messageID == m.MessageID && m.Contents != nil {
		final, sent := m.Text(), r.text.String()
		deltas := func(text string) {
			for _, piece := range wire.SplitDelta(text) {
				l.emit(wire.StreamEvent{Type: wire.EventTextDelta, TurnID: r.turnID, MessageID: r.messageID, AgentID: r.agentID,
					Attempt: r.attempt, Text: piece})
			}
		}
		switch {
		case final == sent:
		case strings.HasPrefix(final, sent):
			deltas(final[len(sent):])
		default:
			l.emit(wire.StreamEvent{Type: wire.EventRetry, TurnID: r.turnID, MessageID: r.messageID, AgentID: r.agentID, Attempt: r.attempt})
			r.attempt++
			l.emit(r.started())
			deltas(final)
		}
	}
	s.messageDone(t, m)
}

// messageDone says m, a message of turn t, is final.
func (s *chatState) messageDone(t *turn, m chat.Message) {
	s.turnEvent(t, wire.StreamEvent{Type: wire.EventMessageDone, MessageID: m.MessageID, AgentID: m.AgentID, Message: &m})
}

// abandonReply forgets the reply in flight (its call failed or was cancelled) and
// returns it.
func (s *chatState) abandonReply() *liveReply {
	r := s.events.live
	s.events.live = nil
	return r
}

// turnEvent appends an event of turn t.
func (s *chatState) turnEvent(t *turn, ev wire.StreamEvent) {
	ev.TurnID = t.msg.MessageID
	s.events.emit(ev)
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
	l := &s.events
	l.items = slices.DeleteFunc(l.items, func(it wire.StreamItem) bool {
		var ev wire.StreamEvent
		return wire.DecodeStreamData(it.Data, &ev) == nil && ev.Type == wire.EventApprovalNeeded && ev.Call != nil &&
			slices.ContainsFunc(waiting, func(p wire.PendingApproval) bool { return p.CallID == ev.Call.CallID })
	})
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

// carryEvents is the log the next run takes: the latest events other than text deltas
// and retries, within wire.StreamCarryBytes, and the next offset.
func (s *chatState) carryEvents() *wire.StreamCarry {
	l := &s.events
	c := &wire.StreamCarry{NextOffset: l.next}
	size := 0
	for i := len(l.items) - 1; i >= 0; i-- {
		it := l.items[i]
		var ev wire.StreamEvent
		if wire.DecodeStreamData(it.Data, &ev) == nil && (ev.Type == wire.EventTextDelta || ev.Type == wire.EventRetry) {
			continue
		}
		if size += len(it.Data) + len(it.Topic); size > wire.StreamCarryBytes {
			break
		}
		c.Items = append(c.Items, it)
	}
	for i, j := 0, len(c.Items)-1; i < j; i, j = i+1, j-1 {
		c.Items[i], c.Items[j] = c.Items[j], c.Items[i]
	}
	return c
}

// resumeEvents takes over the log a previous run carried.
func (s *chatState) resumeEvents(c *wire.StreamCarry) {
	if c == nil {
		return
	}
	l := &s.events
	l.items = append([]wire.StreamItem(nil), c.Items...)
	l.next, l.base = c.NextOffset, c.NextOffset
	if len(l.items) > 0 {
		l.base = l.items[0].Offset
	}
}
