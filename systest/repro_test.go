package systest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/internal/testenv"
)

// The minimal reproductions of the faults this test found (10.S1–10.S5, all fixed), as
// fixed action lists: each is its fault's regression test.
var reproductions = map[string][]Action{
	"10.S1": {
		{Op: opStart, Chat: 0, Agents: []string{"clerk"}, Budget: 34},
		{Op: opSend, Chat: 0, ID: "t1", Size: 100},
		{Op: opPost, Chat: 0, ID: "t2", Size: 100},
		{Op: opApprove, Chat: 0, Approve: true},
		{Op: opMigrate, Chat: 0, NewID: true},
	},
	"10.S2": postThenSend(8),
	"10.S4": postThenSendAfterHandOver(4),
	"10.S5": retryAfterFailure(4),
	// User ids in the form of reply ids, in both orders, sent and posted: the ones taken
	// are refused, the replies skip the others, and the chat exports and migrates.
	"21.1": {
		{Op: opStart, Chat: 0, Agents: []string{"helper"}, Budget: 34},
		{Op: opSend, Chat: 0, ID: "t1/1", Size: 100},
		{Op: opSend, Chat: 0, ID: "t1", Size: 100},
		{Op: opSend, Chat: 0, ID: "t1/2", Size: 100},
		{Op: opPost, Chat: 0, ID: "t1/1/1", Size: 100},
		{Op: opPost, Chat: 0, ID: "t2/1", Size: 100},
		{Op: opSend, Chat: 0, ID: "t2", Size: 100},
		{Op: opRetry, Chat: 0},
		{Op: opExport, Chat: 0, Target: 1},
		{Op: opMigrate, Chat: 0},
	},
	// A chat of large turns whose store refuses every body it must take: it stalls
	// (StoreRefused), is never terminated for size, and exports and migrates.
	"21.1-store": {
		{Op: opStart, Chat: 0, Agents: []string{"helper"}, MaxBytes: 1 << 20, Budget: 30, Refuses: 100},
		{Op: opSend, Chat: 0, ID: "t1", Size: 1000 << 10},
		{Op: opSend, Chat: 0, ID: "t2", Size: 1000 << 10},
		{Op: opSend, Chat: 0, ID: "t3", Size: 100},
		{Op: opPost, Chat: 0, ID: "t4", Size: 100},
		{Op: opSend, Chat: 0, ID: "t5", Size: 100},
		{Op: opRetry, Chat: 0},
	},
	"10.S3": {
		{Op: opStart, Chat: 0, Agents: []string{"clerk"}},
		{Op: opSend, Chat: 0, ID: "t1", Size: 100},
		{Op: opPost, Chat: 0, ID: "t2", Size: 100},
		{Op: opApprove, Chat: 0, Approve: true},
	},
}

// postThenSend is n chats of helper that each get a Post and at once a Send: the race
// of 10.S2 is lost in about half of them.
func postThenSend(n int) []Action {
	var out []Action
	for c := 0; c < n; c++ {
		out = append(out, Action{Op: opStart, Chat: c, Agents: []string{"helper"}},
			Action{Op: opPost, Chat: c, ID: "t1", Size: 100}, Action{Op: opSend, Chat: c, ID: "t2", Size: 100})
	}
	return out
}

// postThenSendAfterHandOver is n chats of looper that continue as new after their
// first turn (its seven replies pass the budget) and then get a Post and a Send: both
// reach the new run with its first workflow task, and the Send was answered first.
func postThenSendAfterHandOver(n int) []Action {
	var out []Action
	for c := 0; c < n; c++ {
		out = append(out, Action{Op: opStart, Chat: c, Agents: []string{"looper"}, Budget: 50},
			Action{Op: opSend, Chat: c, ID: "t1", Size: 100}, Action{Op: opPost, Chat: c, ID: "t2", Size: 100},
			Action{Op: opSend, Chat: c, ID: "t3", Size: 100})
	}
	return out
}

// retryAfterFailure is n chats of tooler and flaky that continue as new often, each
// with an answered turn, a failed one, and the answered one sent again.
func retryAfterFailure(n int) []Action {
	var out []Action
	for c := 0; c < n; c++ {
		out = append(out, Action{Op: opStart, Chat: c, Agents: []string{"tooler", "flaky"}, Budget: 37},
			Action{Op: opSend, Chat: c, ID: "t1", Size: 80}, Action{Op: opSend, Chat: c, ID: "t2", Size: 80},
			Action{Op: opRetry, Chat: c})
	}
	return out
}

func TestKnownFaultReproductions(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a dev server and worker processes")
	}
	w := newTestWorld(t)
	for _, fault := range slices.Sorted(maps.Keys(reproductions)) {
		t.Run(fault, func(t *testing.T) {
			r := NewRunner(w, "repro-"+strings.ReplaceAll(fault, ".", "")+"-"+uuid.NewString()[:4])
			ctx := context.Background()
			require.NoError(t, r.Run(ctx, reproductions[fault]))
			r.Settle(ctx)
			violations := r.Check(ctx)
			require.Empty(t, violations, "action log:\n%s", strings.Join(r.Log(), "\n"))
			t.Logf("action log:\n%s", strings.Join(r.Log(), "\n"))
		})
	}
}

// newTestWorld starts a world on the test binary's dev server.
func newTestWorld(t *testing.T) *World {
	t.Helper()
	ns := [2]string{testenv.Namespace(t, "default"), testenv.Namespace(t, "systest-b")}
	w, err := NewWorld(context.Background(), WorldOptions{Address: testenv.Address(t), Namespaces: ns,
		TaskQueue: testenv.TaskQueue(t), Dir: t.TempDir()})
	require.NoError(t, err, fmt.Sprintf("start the world for %s", t.Name()))
	t.Cleanup(w.Close)
	return w
}
