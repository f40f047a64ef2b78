package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

// registerReencrypt reads Reencrypt signals: each asks the run to hand over at its
// next boundary (continueAsNewDue), so that the next run's input, the carried state,
// is encoded again by the worker's data converter, with its current key.
func (s *chatState) registerReencrypt(ctx workflow.Context) {
	ch := workflow.GetSignalChannel(ctx, wire.ReencryptSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			ch.Receive(ctx, nil)
			s.reencrypt = true
		}
	})
}
