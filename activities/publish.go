package activities

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat/wire"
)

// publisher sends a reply's text deltas to its own chat's event stream, a batch per
// interval, by the Workflow Streams publish signal (wire.StreamPublishSignal) to the
// run that scheduled the activity, while someone follows the chat
// (wire.StreamFollowersQuery, asked every followedCheck or unfollowedCheck while there
// is text to send, the first time once the call has run one interval): each batch
// costs the chat's history a signal and a workflow task. A reply written within one
// interval asks nothing and publishes nothing: the chat's log gets its text in one
// delta at the message's end, as a batch would have brought it. Text not sent while
// nobody follows waits, and goes in one batch once someone does, so the deltas stay
// contiguous. Publishing is best effort: a batch that cannot be signalled is logged
// and dropped, since the workflow completes the deltas from the final message
// (workflows.finishReply). A nil publisher publishes nothing.
type publisher struct {
	tc                     client.Client
	workflowID, runID, pid string
	messageID              string
	attempt                int

	mu      sync.Mutex
	pending strings.Builder // appended a chunk at a time: a reply streams a chunk a word
	seq     int64
	// taken is how much text add took, at most wire.StreamReplyBytes.
	taken   int
	flushed chan struct{} // a flush wanted now (the first delta)
	stop    chan struct{}
	done    chan struct{}

	// followed is the last answer of the followers query, asked again at checkAt (at
	// first one interval after the start); run owns both, close reads followed once
	// run has returned.
	followed bool
	checkAt  time.Time
}

const (
	// unfollowedCheck is how often a publisher whose chat nobody follows asks again: a
	// subscriber that comes mid-reply gets the text so far within about this.
	unfollowedCheck = 250 * time.Millisecond
	// followedCheck is how often a publisher whose chat is followed asks again: it stops
	// publishing within about this and wire.StreamFollowGrace of the last subscriber's
	// last poll.
	followedCheck = time.Second
	// followersTimeout bounds the followers query.
	followersTimeout = 2 * time.Second
)

// newPublisher returns the publisher of reply messageID, flushing every interval, or
// nil when there is nothing to publish to (no client, no reply id, a negative
// interval, an activity not scheduled by a workflow).
func newPublisher(ctx context.Context, tc client.Client, messageID string, interval time.Duration) *publisher {
	if tc == nil || messageID == "" || interval < 0 || !activity.IsActivity(ctx) {
		return nil
	}
	info := activity.GetInfo(ctx)
	if info.WorkflowExecution.ID == "" {
		return nil
	}
	p := &publisher{tc: tc, workflowID: info.WorkflowExecution.ID, runID: info.WorkflowExecution.RunID,
		pid:       fmt.Sprintf("%s/%s/%d", info.WorkflowExecution.RunID, info.ActivityID, info.Attempt),
		messageID: messageID, attempt: int(info.Attempt)}
	p.start(ctx, interval)
	return p
}

// start runs p's batches, every interval, the first check of the followers due one
// interval from now.
func (p *publisher) start(ctx context.Context, interval time.Duration) {
	p.stop, p.done, p.flushed = make(chan struct{}), make(chan struct{}), make(chan struct{}, 1)
	p.checkAt = time.Now().Add(interval)
	go p.run(ctx, interval)
}

type publisherKey struct{}

// withPublisher returns ctx carrying p, for the model call of the reply it publishes.
func withPublisher(ctx context.Context, p *publisher) context.Context {
	return context.WithValue(ctx, publisherKey{}, p)
}

// publisherOf returns the publisher ctx carries, or nil.
func publisherOf(ctx context.Context) *publisher {
	p, _ := ctx.Value(publisherKey{}).(*publisher)
	return p
}

// add queues text for the next batch; the first text of the reply goes at once.
func (p *publisher) add(text string) {
	if p == nil || text == "" {
		return
	}
	p.mu.Lock()
	if room := wire.StreamReplyBytes - p.taken; len(text) > room {
		text = text[:max(room, 0)] // the rest comes with the final message
		for text != "" && !utf8.ValidString(text) {
			text = text[:len(text)-1]
		}
	}
	p.taken += len(text)
	first := p.seq == 0 && p.pending.Len() == 0
	p.pending.WriteString(text)
	p.mu.Unlock()
	if first {
		select {
		case p.flushed <- struct{}{}:
		default:
		}
	}
}

// close sends what is queued, when the chat was followed at the last check, and stops;
// the reply's deltas are then in the workflow's history before the activity's result.
// Unfollowed, the workflow fills the text in at the message's end.
func (p *publisher) close(ctx context.Context) {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.done
	if p.followed {
		p.flush(ctx)
	}
}

func (p *publisher) run(ctx context.Context, interval time.Duration) {
	defer close(p.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		case <-p.flushed:
		}
		if p.due(ctx) {
			p.flush(ctx)
		}
	}
}

// due reports whether the queued text goes now: there is some, and someone follows
// the chat, asked again once the last answer is older than its check interval.
func (p *publisher) due(ctx context.Context) bool {
	p.mu.Lock()
	empty := p.pending.Len() == 0
	p.mu.Unlock()
	if empty {
		return false
	}
	if time.Now().Before(p.checkAt) {
		return p.followed
	}
	p.followed = p.isFollowed(ctx)
	every := unfollowedCheck
	if p.followed {
		every = followedCheck
	}
	p.checkAt = time.Now().Add(every)
	return p.followed
}

// isFollowed asks the run whether someone follows its stream. A run that cannot say
// (a worker of a version without the query; the query failed) counts as followed: the
// deltas go, as they did before the query. When the reply ends (close) or the
// activity is cancelled before the answer comes, it returns the last answer at once
// and leaves the query to end by itself (within followersTimeout): the query is never
// cancelled, since an abandoned question is no failure (a cancelled call would be
// one, in the logs and as an error span in the turn's trace).
func (p *publisher) isFollowed(ctx context.Context) bool {
	answer := make(chan bool, 1)
	logger := activity.GetLogger(ctx)
	go func() {
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), followersTimeout)
		defer cancel()
		var f wire.StreamFollowers
		v, err := p.tc.QueryWorkflow(qctx, p.workflowID, p.runID, wire.StreamFollowersQuery)
		if err == nil {
			err = v.Get(&f)
		}
		if err != nil {
			logger.Debug("followers unknown: publishing", "messageId", p.messageID, "error", err)
			f.Followed = true
		}
		answer <- f.Followed
	}()
	select {
	case f := <-answer:
		return f
	case <-p.stop:
	case <-ctx.Done():
	}
	return p.followed
}

// flush signals the queued text as deltas of at most wire.StreamDeltaBytes, one signal
// each.
func (p *publisher) flush(ctx context.Context) {
	p.mu.Lock()
	pieces := wire.SplitDelta(p.pending.String())
	p.pending.Reset() // a new buffer: the pieces keep the old one
	first := p.seq
	p.seq += int64(len(pieces))
	p.mu.Unlock()
	for i, piece := range pieces { // run's loop and close flush one after the other
		p.signal(ctx, piece, first+int64(i)+1)
	}
}

func (p *publisher) signal(ctx context.Context, text string, seq int64) {
	data, err := wire.EncodeStreamData(wire.StreamEvent{Type: wire.EventTextDelta, MessageID: p.messageID, Attempt: p.attempt, Text: text})
	if err == nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err = p.tc.SignalWorkflow(sctx, p.workflowID, p.runID, wire.StreamPublishSignal, wire.StreamPublishInput{
			Items: []wire.StreamEntry{{Topic: wire.StreamTopic, Data: data}}, PublisherID: p.pid, Sequence: seq})
		cancel()
	}
	if err != nil {
		activity.GetLogger(ctx).Warn("text deltas not published", "messageId", p.messageID, "error", err)
	}
}
