package cli

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/wire"
)

// failedTurn is a failed turn's error as the client returns it: an *agentchat.Error
// over the chat's application error, whose details are the TurnError.
func failedTurn(typ string, d wire.TurnError) error {
	app := temporal.NewApplicationError("turn m1: agent clerk could not reply", typ, d)
	return fmt.Errorf("%w: %w", &agentchat.Error{Op: "send to", ChatID: "c1", Type: typ, Message: "turn m1: agent clerk could not reply"}, app)
}

// The starter adds "send it again" only to a turn the chat took back whole: a turn it
// keeps (resumed after an approval, its calls ran) is not run again by its messageId,
// and the chat's own message says to send a new one.
func TestSendAgainHintOnlyForATurnThatLeftNothing(t *testing.T) {
	gone := failedTurn(wire.ErrTypeTurnFailed, wire.TurnError{MessageID: "m1", Type: wire.ErrTypeModelRejected})
	assert.Contains(t, sendAgainHint(gone, "c1", "m1").Error(), "starter send --chat c1 --id m1")
	assert.Contains(t, turnLeftNothing(gone), "type it again")
	store := failedTurn(wire.ErrTypeStoreUnavailable, wire.TurnError{MessageID: "m1", Type: wire.ErrTypeStoreUnavailable})
	assert.Contains(t, sendAgainHint(store, "c1", "m1").Error(), "once the message store is back: starter send --chat c1 --id m1")

	kept := failedTurn(wire.ErrTypeTurnFailed, wire.TurnError{MessageID: "m1", Type: wire.ErrTypeStoreUnavailable, Kept: true})
	assert.Equal(t, kept, sendAgainHint(kept, "c1", "m1"), "no advice that fails")
	assert.Empty(t, turnLeftNothing(kept))
}
