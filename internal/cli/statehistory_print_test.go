package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/wire"
)

// State prints the chat's window, page size, fanout and run budget, and how many
// messages are in pages ("none yet" before the first); a worker that does not report
// them (History nil) prints neither row.
func TestStatePrintsTheHistorySettings(t *testing.T) {
	for _, tt := range []struct {
		name string
		st   agentchat.StateResult
		want []string
		not  []string
	}{
		{"defaults, nothing paged", agentchat.StateResult{ChatID: "c", MessageCount: 4, TurnCount: 2,
			History:       &wire.HistoryWindow{WindowMessages: 256, PageMessages: 256, IndexFanout: 512},
			HistoryBudget: &wire.HistoryBudget{MaxEvents: 4000, MaxBytes: 4 << 20}},
			[]string{
				"paged:         none yet",
				"history:       window of 256 messages at least, 256 messages a page, index fanout 512\n",
				"run budget:    continues as new after 4000 events or 4 MiB of history a run\n",
			}, nil},
		{"small, paged", agentchat.StateResult{ChatID: "c", MessageCount: 20, PagedMessages: 12, Store: "sqlite",
			History:       &wire.HistoryWindow{WindowMessages: 8, PageMessages: 4, IndexFanout: 2},
			HistoryBudget: &wire.HistoryBudget{MaxEvents: 60, MaxBytes: 1536 << 10}},
			[]string{
				`paged:         the oldest 12 messages are in pages of message store "sqlite" (the workflow keeps the latest 8)`,
				"history:       window of 8 messages at least, 4 messages a page, index fanout 2\n",
				"run budget:    continues as new after 60 events or 1536 KiB of history a run\n",
			}, []string{"none yet"}},
		{"an older worker", agentchat.StateResult{ChatID: "c", MessageCount: 4},
			nil, []string{"paged:", "history:", "run budget:"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			printState(&b, tt.st)
			for _, w := range tt.want {
				assert.Contains(t, b.String(), w)
			}
			for _, w := range tt.not {
				assert.NotContains(t, b.String(), w)
			}
		})
	}
}

func TestSizeText(t *testing.T) {
	for n, want := range map[int]string{4 << 20: "4 MiB", 1536 << 10: "1536 KiB", 1000: "1000 bytes", 1: "1 byte", 0: "0 bytes"} {
		assert.Equal(t, want, sizeText(n), n)
	}
}
