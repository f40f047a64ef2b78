package activities

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// windowTail, given a history one message at a time, keeps what wire.ImportBoundary
// divides off the whole history: the messages from the boundary on.
func TestWindowTailKeepsTheMessagesFromImportBoundary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	roles := []chat.Role{chat.RoleUser, chat.RoleAssistant, chat.RoleTool}
	for range 500 {
		n, window := rng.IntN(60), 1+rng.IntN(12)
		var h []chat.Message
		for i := range n {
			h = append(h, chat.Message{MessageID: fmt.Sprint(i), Role: roles[rng.IntN(len(roles))]})
		}
		for _, w := range []int{window, 0} {
			tail := windowTail{window: w}
			for _, m := range h {
				tail.add(m)
			}
			base := 0
			if w > 0 {
				base = wire.ImportBoundary(h, w)
			}
			require.Equal(t, base, tail.base, "window %d of %v", w, h)
			require.Equal(t, n, tail.n)
			require.Equal(t, h[base:], tail.msgs)
		}
	}
}
