package systest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentchat/agentchat"
)

// burstWait is how long an action waits for its Sends before it leaves them in flight.
const burstWait = 30 * time.Second

func (r *Runner) burst(ctx context.Context, c *chatRun, a Action) string {
	c.group++
	group := c.group
	msgs := make([]*msgState, a.Burst)
	for i := range msgs {
		id := fmt.Sprintf("%s.%d", a.ID, i+1)
		msgs[i] = newMessage(id, 120)
		msgs[i].posted = i%2 == 1
		c.accept(msgs[i], group)
	}
	var posts sync.WaitGroup
	results := make([]string, 0, len(msgs))
	var resMu sync.Mutex
	var sends []*msgState
	for _, m := range msgs {
		if !m.posted {
			sends = append(sends, m)
			continue
		}
		posts.Add(1)
		go func() {
			defer posts.Done()
			res := r.postOne(ctx, c, m)
			resMu.Lock()
			results = append(results, res)
			resMu.Unlock()
		}()
	}
	sent := make(chan string, 1)
	go func() { sent <- r.sendAndWait(c, sends) }()
	posts.Wait()
	if s := <-sent; s != "" {
		results = append(results, s)
	}
	return strings.Join(results, "; ")
}

// sendAndWait sends msgs at once and waits up to burstWait for their answers. A Send
// queued behind a turn that waits for a person's approval is answered only after the
// approval, so one still waiting then is left in flight and its answer is recorded
// when it comes (applyLate). The answers are recorded by the caller's goroutine.
func (r *Runner) sendAndWait(c *chatRun, msgs []*msgState) string {
	type answer struct {
		m   *msgState
		res agentchat.TurnResult
		err error
	}
	answers := make(chan answer, len(msgs))
	for _, m := range msgs {
		r.inflight.Add(1)
		go func() {
			defer r.inflight.Done()
			res, err := r.w.Client(c.loc.ns).Send(r.bg, c.loc.id, agentchat.SendMessageInput{MessageID: m.id, Text: m.text})
			answers <- answer{m, res, err}
		}()
	}
	var results []string
	timeout := time.After(burstWait)
	n := len(msgs)
	for ; n > 0; n-- {
		select {
		case a := <-answers:
			results = append(results, r.settleSend(r.bg, c, a.m, a.res, a.err))
			continue
		case <-timeout:
		}
		break
	}
	if n > 0 {
		results = append(results, fmt.Sprintf("%d sends still waiting (behind an approval?)", n))
		r.late(func() {
			for ; n > 0; n-- {
				a := <-answers
				r.logf("late answer in c%d: %s", c.idx, r.settleSend(r.bg, c, a.m, a.res, a.err))
			}
		})
	}
	return strings.Join(results, "; ")
}

// late queues f to run once every Send in flight has returned (applyLate).
func (r *Runner) late(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lateFuncs = append(r.lateFuncs, f)
}

// applyLate waits for the Sends left in flight (at most settleTimeout) and records
// their answers.
func (r *Runner) applyLate() {
	done := make(chan struct{})
	go func() {
		r.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(settleTimeout):
		r.violate("Sends still without an answer %s after the chats settled (stuck)", settleTimeout)
		return
	}
	r.mu.Lock()
	fs := r.lateFuncs
	r.lateFuncs = nil
	r.mu.Unlock()
	for _, f := range fs {
		f()
	}
}
