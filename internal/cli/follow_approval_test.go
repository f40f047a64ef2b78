package cli_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
)

// follow prints a call that waits for approval when the stream announces it, with the
// command that decides it: for the chat that asked for it, and for a copy imported
// while it waits (whose turn never ends until someone decides).
func TestFollowPrintsTheCallThatWaits(t *testing.T) {
	h := clerkHarness(t, "Refunded.")
	id := suspendedClerk(t, h)
	doc, _, err := h.Client.Export(t.Context(), id)
	require.NoError(t, err)
	copyID := id + "-copy"
	_, err = h.Client.Import(t.Context(), agentchat.ImportOptions{ChatID: copyID, Document: doc})
	require.NoError(t, err)

	for _, chatID := range []string{id, copyID} {
		r := starter(t, h, "", "--timeout", "3s", "follow", "--chat", chatID)
		assert.Contains(t, r.lines(), waitingLine(chatID), "%s:\n%s", chatID, r.out)
	}
}
