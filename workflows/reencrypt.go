package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/wire"
)

// versionReencrypt: a Reencrypt signal makes the run continue as new at its next turn
// boundary. Before, the signal was not read; the version marker is written only when
// one arrives, so the histories of chats that never get it are unchanged.
const versionReencrypt = "reencrypt-signal"

// registerReencrypt reads Reencrypt signals: each asks the run to hand over at its
// next boundary (continueAsNewDue), so that the next run's input, the carried state,
// is encoded again by the worker's data converter, with its current key.
func (s *chatState) registerReencrypt(ctx workflow.Context) {
	ch := workflow.GetSignalChannel(ctx, wire.ReencryptSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			ch.Receive(ctx, nil)
			if changed(ctx, versionReencrypt) {
				s.reencrypt = true
			}
		}
	})
}
