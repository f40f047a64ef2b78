package systest

import (
	"context"
	"strings"
	"time"

	"github.com/agentchat/agentchat"
)

// Queries fail for a moment when the server has seen no poller on the chat's queue
// lately ("no poller seen for task queue recently"), as right after the fleet of a
// namespace was killed and restarted: the new workers are polling, but not yet
// listed. The checks retry such failures for up to queryPatience; any other error
// counts at once.
const queryPatience = 30 * time.Second

func transient(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no poller seen")
}

// state is the State query of the chat at l, retried while transient.
func (r *Runner) state(ctx context.Context, l location) (agentchat.StateResult, error) {
	var st agentchat.StateResult
	err := retryTransient(ctx, func() (err error) {
		st, err = r.w.Client(l.ns).State(ctx, l.id)
		return err
	})
	return st, err
}

// history is the whole History of the chat at l, retried while transient.
func (r *Runner) history(ctx context.Context, l location) (agentchat.HistoryResult, error) {
	var h agentchat.HistoryResult
	err := retryTransient(ctx, func() (err error) {
		h, err = r.w.Client(l.ns).History(ctx, l.id, agentchat.HistoryInput{})
		return err
	})
	return h, err
}

func retryTransient(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(queryPatience)
	for {
		err := f()
		if !transient(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
}
