package bench

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// wantRows are the names of every row a run prints, by group.
var wantRows = []string{
	"Heap, 20 idle chats (MB)", "Heap per idle chat (KB)", "Live heap objects per idle chat (KB)",
	"Goroutine stacks per idle chat (KB)", "Heap, 20 chats, 5 active (MB)", "Heap added per active chat (KB)",
	"Turn p50 (ms)", "Turn p99 (ms)", "Turn p50, history up to 16 KB (ms)", "Turn p50, history over 16 KB (ms)",
	"Turn phase p50: update to activity scheduled (ms)", "Turn phase p50: activity (ms)",
	"Turn phase p50: activity scheduled to started (ms)", "Turn phase p50: activity started to completed (ms)",
	"Turn phase p50: activity done to update done (ms)", "Turn p50 vs local-activity floor (ms)", "Turn p50 vs update-only floor (ms)",
	"Throughput, 4 chats x 3 turns (turns/s)", "Throughput, CPU of this process per turn (ms)",
	"Throughput, CPU of the server per turn (ms)",
	"Start + first reply p50 (ms)", "Start + first reply p99 (ms)",
	"Group turn, 3 agents, p50 (ms)", "Group turn, per agent reply p50 (ms)",
	"Export, 500 messages (ms)", "Import, 500 messages (ms)", "Document size, 500 messages (MB)",
	"Turn p50, 2,000-message chat vs 100 (ms)", "Import, 2,000 vs 200 messages (s)", "Peak heap, import of 2,000 vs 200 messages (MB)", "Heap kept for the idle chat after its import, 2,000 vs 200 messages (KB)",
	"Export, 2,000 vs 200 messages (s)", "Peak heap, export of 2,000 vs 200 messages (MB)",
}

// The short run on the shared test server: every row is there with numbers (memory
// deltas may be negative, since a collection can free more than a few chats hold; the
// server's CPU only when the server is a dev server on this machine), the targets are
// printed and none is judged.
func TestShortRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // about 15 s
	defer cancel()
	env, err := NewEnv(ctx, EnvOptions{Address: testenv.Address(t)})
	require.NoError(t, err)
	defer env.Close()
	var progress strings.Builder
	table, err := Run(ctx, env, Config{Short: true, Progress: &progress, ProfileDir: t.TempDir()})
	require.NoError(t, err)

	var names []string
	for _, r := range table.Rows {
		names = append(names, r.Name)
		if strings.Contains(r.Name, "CPU of the server") && env.ServerPID == 0 {
			continue // a server elsewhere: its CPU is not measured
		}
		assert.False(t, math.IsNaN(r.Value) || math.IsInf(r.Value, 0), "%s: agentchat figure %v", r.Name, r.Value)
		assert.False(t, math.IsNaN(r.Floor) || math.IsInf(r.Floor, 0), "%s: floor figure %v", r.Name, r.Floor)
		if r.Group != "memory" && !strings.HasPrefix(r.Name, "Peak heap") { // heap deltas may be zero or negative
			assert.Positive(t, r.Value, r.Name)
			assert.Positive(t, r.Floor, r.Name)
		}
		assert.Contains(t, []string{"-", "(short)"}, r.Result(true), r.Name)
	}
	assert.Equal(t, wantRows, names)
	assert.Empty(t, table.Missed(), "a short run judges no target")

	var out strings.Builder
	require.NoError(t, table.WriteText(&out))
	for _, name := range wantRows {
		assert.Contains(t, out.String(), name)
	}
	assert.Contains(t, out.String(), "<= 1.3")
	assert.Contains(t, out.String(), "profiles (throughput, agentchat)")
	assert.Contains(t, progress.String(), "bench: memory done")
}

func TestSelectGroups(t *testing.T) {
	got, err := selectGroups([]string{"transfer", "turn", "memory"})
	require.NoError(t, err)
	assert.Equal(t, []string{"memory", "turn", "transfer"}, got, "in the order Run measures them: memory first, in a process that ran no other row")
	all, err := selectGroups(nil)
	require.NoError(t, err)
	assert.True(t, slices.Equal(Groups, all))
	_, err = selectGroups([]string{"turns"})
	assert.ErrorContains(t, err, `unknown row group "turns"`)
}
