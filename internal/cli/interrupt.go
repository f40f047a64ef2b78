package cli

import (
	"context"
	"errors"
	"os"
	"sync"
)

// errInterrupted is the cause of a command's context that the user's Ctrl-C ended
// (context.Cause); the context's Err is still context.Canceled.
var errInterrupted = errors.New("interrupted")

// interrupter takes the user's Ctrl-C (Streams.Interrupts): while chat waits for a
// turn's reply, the first one cancels that turn's context only; any other cancels the
// command's context.
type interrupter struct {
	mu      sync.Mutex
	command context.CancelFunc
	// turn cancels the context of the turn in flight (nil: none); interrupted says one
	// Ctrl-C cancelled it.
	turn        context.CancelFunc
	interrupted bool
}

// watch takes interrupts from ch until ctx ends.
func (i *interrupter) watch(ctx context.Context, ch <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ch:
			i.interrupt()
		}
	}
}

func (i *interrupter) interrupt() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.turn != nil {
		i.turn()
		i.turn, i.interrupted = nil, true
		return
	}
	i.command()
}

// turnContext returns the context of a turn, from ctx, that the next interrupt cancels
// instead of the command's, and end, which the turn calls when it is over: it reports
// whether an interrupt cancelled it (then interrupts end the command again).
func (i *interrupter) turnContext(ctx context.Context) (_ context.Context, end func() (interrupted bool)) {
	tctx, cancel := context.WithCancel(ctx)
	i.mu.Lock()
	i.turn, i.interrupted = cancel, false
	i.mu.Unlock()
	return tctx, func() bool {
		i.mu.Lock()
		defer i.mu.Unlock()
		cancel()
		interrupted := i.interrupted
		i.turn, i.interrupted = nil, false
		return interrupted
	}
}
