package wire_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// ImportTail, given a history one message at a time, keeps what wire.ImportBoundary
// divides off the whole history: the messages from the boundary on.
func TestImportTailKeepsTheMessagesFromImportBoundary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	roles := []chat.Role{chat.RoleUser, chat.RoleAssistant, chat.RoleTool}
	for range 500 {
		n, window := rng.IntN(60), 1+rng.IntN(12)
		var h []chat.Message
		for i := range n {
			h = append(h, chat.Message{MessageID: fmt.Sprint(i), Role: roles[rng.IntN(len(roles))]})
		}
		for _, w := range []int{window, 0} {
			tail := wire.NewImportTail(w)
			for _, m := range h {
				tail.Add(m)
			}
			base := 0
			if w > 0 {
				base = wire.ImportBoundary(h, w)
			}
			require.Equal(t, base, tail.Base(), "window %d of %v", w, h)
			require.Equal(t, n, tail.Len())
			require.Equal(t, h[base:], tail.Messages())
		}
	}
}
