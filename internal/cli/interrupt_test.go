package cli

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// During a turn the first Ctrl-C cancels the turn only, the second (the stop being
// sent) the command; with no turn, the first ends the command.
func TestInterruptStopsTheTurnThenTheCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	i := &interrupter{command: cancel}
	ch := make(chan os.Signal)
	go i.watch(ctx, ch)

	tctx, end := i.turnContext(ctx)
	ch <- os.Interrupt
	<-tctx.Done()
	assert.NoError(t, ctx.Err(), "the first Ctrl-C stops the turn only")
	ch <- os.Interrupt // while the stop is sent
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a second Ctrl-C did not end the command")
	}
	assert.True(t, end(), "the turn knows it was interrupted")

	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	i = &interrupter{command: cancel}
	go i.watch(ctx, ch)
	_, end = i.turnContext(ctx)
	assert.False(t, end(), "a turn that ended by itself")
	ch <- os.Interrupt // at the prompt
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Ctrl-C with no turn in flight did not end the command")
	}
}
