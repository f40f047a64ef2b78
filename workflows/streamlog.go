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
// read by Temporal's Workflow Streams protocol (wire/streams.go). It owns the items, the
// offsets, the reply in flight and what it knows of its subscribers: no other code
// reads or writes them (the handlers in stream.go call these methods), so that its
// rules live here:
//
//   - items are in order of offset, each offset given once: base <= the first item's,
//     the last item's < next; an item may be taken out (an announcement made again at
//     the end, DropAnnouncements), never renumbered;
//   - the workflow appends the turn's events itself (Emit); a publisher (the model
//     call's activity, by the publish signal) adds only text deltas of the reply in
//     flight, of its latest attempt, each batch once (Publish);
//   - the text deltas of a reply's last attempt concatenate to its final text
//     (FinishReply), unless its body is in the message store;
//   - what the next run takes is the latest events but text deltas and retries,
//     within wire.StreamCarryBytes (Carry), from the same next offset.
//
// Nothing here emits a command: the log is state, rebuilt by replay.
type eventLog struct {
	items []logItem
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
	// answered, by the workflow's clock (Followers).
	waiting  int
	answered time.Time
	// stopping is the number of stops that wait for the text a model call holds back
	// (AwaitHeldText): it counts as following.
	stopping int
}

// logItem is an item of the log. The workflow's own events are kept as it made them
// and encoded (wire.EncodeStreamData) only when a poll, a StreamRead or the carry
// asks: an idle chat's log then shares its texts with the history instead of holding
// a base64 copy of each (about 2.5 KB of heap a chat after one turn). An item a
// previous run carried keeps the data it came with. An event shares its strings and
// contents with the history, so they must never change in place once emitted: the
// history replaces a message's fields (history.Update, storeBodies' Contents = nil),
// it never writes into a message's Contents.
type logItem struct {
	offset int64
	ev     *wire.StreamEvent // nil: topic and data hold the item as it came
	topic  string
	data   string
}

// topicOf is its topic.
func (it logItem) topicOf() string {
	if it.ev == nil {
		return it.topic
	}
	return wire.StreamTopic
}

// item is it as the protocol sends it. Encoding is deterministic (the default data
// converter's JSON, a deterministic protobuf), so every answer gives the same bytes.
// The encoding is kept once made: a subscriber's polls, StreamRead and each measure of
// the carry at a hand-over read the same items again, and a large reply's messageDone
// must not be encoded on every one. An idle chat nobody read keeps none.
func (it *logItem) item() wire.StreamItem {
	if it.ev == nil {
		return wire.StreamItem{Topic: it.topic, Data: it.data, Offset: it.offset}
	}
	if it.data == "" {
		it.data = wire.EncodedStreamEvent(*it.ev)
	}
	return wire.StreamItem{Topic: wire.StreamTopic, Data: it.data, Offset: it.offset}
}

// event is its event; false for a carried item that is not one.
func (it logItem) event() (wire.StreamEvent, bool) {
	if it.ev != nil {
		return *it.ev, true
	}
	var ev wire.StreamEvent
	return ev, it.topic == wire.StreamTopic && wire.DecodeStreamData(it.data, &ev) == nil
}

// liveReply is the reply whose text deltas the log takes.
type liveReply struct {
	turnID, messageID, agentID, author string
	attempt                            int
	text                               strings.Builder
}

// MessageID is the reply's messageId.
func (r *liveReply) MessageID() string { return r.messageID }

// Text is the reply's text so far, in its current attempt.
func (r *liveReply) Text() string { return r.text.String() }

// Resume takes over the log a previous run carried (Carry); nil leaves the log empty.
func (l *eventLog) Resume(c *wire.StreamCarry) {
	if c == nil {
		return
	}
	l.items = make([]logItem, 0, len(c.Items))
	for _, it := range c.Items {
		l.items = append(l.items, logItem{offset: it.Offset, topic: it.Topic, data: it.Data})
	}
	l.next, l.base = c.NextOffset, c.NextOffset
	if len(l.items) > 0 {
		l.base = l.items[0].offset
	}
}

// Next is the offset the next item takes (wire.StreamOffsetQuery).
func (l *eventLog) Next() int64 { return l.next }

// Base is the first offset the log can answer.
func (l *eventLog) Base() int64 { return l.base }

// Followers is the answer of wire.StreamFollowersQuery at now, the time of the run's
// latest workflow task: a subscriber follows while its poll waits, and between two
// polls, its last answered at most wire.StreamFollowGrace before. A subscriber gone
// for good stops counting after the grace: whoever asks publishes while followed, and
// each publication is a workflow task that moves now on. A poll left waiting by a
// subscriber that went away counts until an event answers it. A stop waiting for the
// text held back counts too (AwaitHeldText).
func (l *eventLog) Followers(now time.Time) wire.StreamFollowers {
	recent := !l.answered.IsZero() && now.Sub(l.answered) <= wire.StreamFollowGrace
	return wire.StreamFollowers{Waiting: l.waiting, Followed: l.waiting > 0 || recent || l.stopping > 0}
}

// CaughtUp reports whether every subscriber that polled this run has read every event
// (true when none polled).
func (l *eventLog) CaughtUp() bool { return l.read == 0 || l.read >= l.next }

// Emit appends ev to the log.
func (l *eventLog) Emit(ev wire.StreamEvent) {
	l.items = append(l.items, logItem{offset: l.next, ev: &ev})
	l.next++
}

// from returns the index in items of the first item at or after offset.
func (l *eventLog) from(offset int64) int {
	return sort.Search(len(l.items), func(i int) bool { return l.items[i].offset >= offset })
}

// Poll waits until the log holds an item at or after in.FromOffset (0: the log's base)
// on one of in.Topics (none: any), or detached reports true, and returns them, at most
// wire.StreamPollBytes of them. While it waits, and for wire.StreamFollowGrace after,
// its subscriber counts as following (Followers).
//
// Errors: TruncatedOffset when in.FromOffset is before the log's base.
func (l *eventLog) Poll(ctx workflow.Context, in wire.StreamPollInput, detached func() bool) (wire.StreamPollResult, error) {
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
			if wanted(it.topicOf()) {
				return true
			}
		}
		return detached()
	}); err != nil {
		return wire.StreamPollResult{}, err
	}
	if in.FromOffset != 0 && in.FromOffset < l.base {
		return wire.StreamPollResult{}, truncated()
	}
	return l.Page(from, in.Topics), nil
}

// Page returns the items at or after offset from on topics (none: any), at most
// wire.StreamPollBytes of them (at least one).
func (l *eventLog) Page(from int64, topics []string) wire.StreamPollResult {
	res := wire.StreamPollResult{Items: []wire.StreamItem{}, NextOffset: l.next}
	size := 0
	for k := l.from(from); k < len(l.items); k++ {
		li := &l.items[k]
		if len(topics) > 0 && !contains(topics, li.topicOf()) {
			continue
		}
		it := li.item()
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

// Publish takes a published batch: a text delta of the reply in flight, of its latest
// attempt, is appended; anything else is dropped (the workflow alone writes the other
// events). A delta of a later attempt than the log knows says the earlier one was
// abandoned: the log says so (retry) before it.
func (l *eventLog) Publish(in wire.StreamPublishInput) {
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
			l.Emit(wire.StreamEvent{Type: wire.EventRetry, TurnID: r.turnID, MessageID: r.messageID, AgentID: r.agentID, Attempt: r.attempt})
			r.attempt = ev.Attempt
			r.text.Reset()
			l.Emit(r.started())
		}
		r.text.WriteString(ev.Text)
		l.Emit(wire.StreamEvent{Type: wire.EventTextDelta, TurnID: r.turnID, MessageID: r.messageID, AgentID: r.agentID,
			Attempt: r.attempt, Text: ev.Text})
	}
}

// StartReply says agent p begins reply replyID of turn turnID, and takes its deltas from
// now on. A reply begun again under the same id (a lost thread resynchronized) drops
// the deltas of the first (retry).
func (l *eventLog) StartReply(turnID string, p wire.Participant, replyID string) {
	attempt := 1
	if r := l.live; r != nil && r.messageID == replyID {
		l.Emit(wire.StreamEvent{Type: wire.EventRetry, TurnID: r.turnID, MessageID: r.messageID, AgentID: r.agentID, Attempt: r.attempt})
		attempt = r.attempt + 1
	}
	l.live = &liveReply{turnID: turnID, messageID: replyID, agentID: p.ID, author: p.Name, attempt: attempt}
	l.sequences = nil
	l.Emit(l.live.started())
}

// started is the agentStarted event of r's current attempt.
func (r *liveReply) started() wire.StreamEvent {
	return wire.StreamEvent{Type: wire.EventAgentStarted, TurnID: r.turnID, MessageID: r.messageID, AgentID: r.agentID,
		Author: r.author, Attempt: r.attempt}
}

// FinishReply ends the reply in flight with its final message m: when its deltas do not
// concatenate to m's text (an agent kind or endpoint that does not stream, a batch
// lost), the log completes them, or drops them (retry) and gives the whole text, so
// the deltas of the last attempt always concatenate to the final text. A message whose
// body is in the store (a reference) keeps its deltas as they are.
func (l *eventLog) FinishReply(m chat.Message) {
	r := l.live
	l.live = nil
	if r == nil || r.messageID != m.MessageID || m.Contents == nil {
		return
	}
	final, sent := m.Text(), r.text.String()
	deltas := func(text string) {
		for _, piece := range wire.SplitDelta(text) {
			l.Emit(wire.StreamEvent{Type: wire.EventTextDelta, TurnID: r.turnID, MessageID: r.messageID, AgentID: r.agentID,
				Attempt: r.attempt, Text: piece})
		}
	}
	switch {
	case final == sent:
	case strings.HasPrefix(final, sent):
		deltas(final[len(sent):])
	default:
		l.Emit(wire.StreamEvent{Type: wire.EventRetry, TurnID: r.turnID, MessageID: r.messageID, AgentID: r.agentID, Attempt: r.attempt})
		r.attempt++
		l.Emit(r.started())
		deltas(final)
	}
}

// Abandon forgets the reply in flight (its call failed or was cancelled) and returns
// it, nil when there is none.
func (l *eventLog) Abandon() *liveReply {
	r := l.live
	l.live = nil
	return r
}

// InFlight describes the reply in flight when its messageId is id; "" when none is.
func (l *eventLog) InFlight(id string) string {
	if r := l.live; r != nil && r.messageID == id {
		return fmt.Sprintf("agent %q's reply in turn %q, in flight", r.agentID, r.turnID)
	}
	return ""
}

// AwaitHeldText waits, while nobody follows the chat and a reply of turn turnID is in
// flight, for the text its model call holds back: meanwhile Followers says followed, so
// the call publishes what it holds. It waits at most wait, and not at all when someone
// follows (the deltas are published already).
func (l *eventLog) AwaitHeldText(ctx workflow.Context, turnID string, wait time.Duration) {
	r := l.live
	if r == nil || r.turnID != turnID || l.Followers(workflow.Now(ctx)).Followed {
		return
	}
	sent := r.text.Len()
	l.stopping++
	defer func() { l.stopping-- }()
	_, _ = workflow.AwaitWithTimeout(ctx, wait, func() bool { return l.live != r || r.text.Len() > sent })
}

// DropAnnouncements takes out the approvalNeeded events of the calls in waiting, to be
// announced again at the end of the log.
func (l *eventLog) DropAnnouncements(waiting []wire.PendingApproval) {
	l.items = slices.DeleteFunc(l.items, func(it logItem) bool {
		ev, ok := it.event()
		return ok && ev.Type == wire.EventApprovalNeeded && ev.Call != nil &&
			slices.ContainsFunc(waiting, func(p wire.PendingApproval) bool { return p.CallID == ev.Call.CallID })
	})
}

// Carry is the log the next run takes: the latest events other than text deltas and
// retries, within wire.StreamCarryBytes, and the next offset.
func (l *eventLog) Carry() *wire.StreamCarry {
	c := &wire.StreamCarry{NextOffset: l.next}
	size := 0
	for i := len(l.items) - 1; i >= 0; i-- {
		if ev, ok := l.items[i].event(); ok && (ev.Type == wire.EventTextDelta || ev.Type == wire.EventRetry) {
			continue
		}
		it := l.items[i].item()
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
