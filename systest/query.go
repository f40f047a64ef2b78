package systest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/wire"
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

// streamedTurns reads the whole stream log of the chat at each of its locations (the
// StreamRead query, which a closed run answers too) and returns what it shows of each
// turn: accepted, and how it ended.
func (r *Runner) streamedTurns(ctx context.Context, c *chatRun) (map[string]streamedTurn, error) {
	out := map[string]streamedTurn{}
	for _, l := range c.locations {
		tc := r.w.Temporal(l.ns)
		for offset := int64(0); ; {
			var res wire.StreamReadResult
			err := retryTransient(ctx, func() error {
				v, err := tc.QueryWorkflow(ctx, l.id, "", wire.StreamReadQuery,
					wire.StreamPollInput{Topics: []string{wire.StreamTopic}, FromOffset: offset})
				if err == nil {
					err = v.Get(&res)
				}
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("stream of %s: %w", l.id, err)
			}
			for _, it := range res.Items {
				var ev wire.StreamEvent
				if err := wire.DecodeStreamData(it.Data, &ev); err != nil {
					return nil, fmt.Errorf("stream of %s, offset %d: %w", l.id, it.Offset, err)
				}
				t := out[ev.TurnID]
				switch {
				case ev.Type == wire.EventTurnAccepted:
					t = streamedTurn{accepted: true} // a turn accepted again starts over
				case ev.Ends():
					t.end, t.err = ev.Type, ev.Error
				}
				out[ev.TurnID] = t
			}
			if !res.MoreReady || res.NextOffset <= offset {
				break
			}
			offset = res.NextOffset
		}
	}
	return out, nil
}
