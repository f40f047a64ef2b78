package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

// registerReencrypt opens the channel of Reencrypt signals: each asks the run to hand
// over at its next boundary (continueAsNewDue), so that the next run's input, the
// carried state, is encoded again by the worker's data converter, with its current
// key. The serve loop drains it (drainSignals) and wakes on it; no coroutine of its
// own waits on it, as an idle chat's goroutines are most of its memory.
func (s *chatState) registerReencrypt(ctx workflow.Context) {
	s.reencryptSignal = workflow.GetSignalChannel(ctx, wire.ReencryptSignal)
}

// takeReencrypt takes the Reencrypt signals that have arrived.
func (s *chatState) takeReencrypt() {
	for s.reencryptSignal.ReceiveAsync(nil) {
		s.reencrypt = true
	}
}
