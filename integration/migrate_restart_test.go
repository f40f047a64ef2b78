package integration_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
)

// A migration right after the server restarted: the target namespace's worker is
// there but has not polled again yet (here it comes back 3 s after the migration
// began). The migration waits for it, within a bound, instead of reporting that no
// worker serves the target.
func TestMigrationAcrossADevServerRestart(t *testing.T) {
	srv := testenv.NewRestartableServer(t) // stops after the harnesses' workers
	addr := srv.Address

	a := testenv.New(t, testenv.Options{Address: addr})
	b := testenv.New(t, testenv.Options{Address: addr, Namespace: "agentchat-test-restart", TaskQueue: a.TaskQueue})
	id := testenv.ChatID(t)
	seedThread(t, a, id)

	b.StopWorker()
	srv.Stop()
	srv.Start()
	type migrated struct {
		res agentchat.MigrationResult
		err error
	}
	done := make(chan migrated, 1)
	began := time.Now()
	go func() {
		res, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
		done <- migrated{res, err}
	}()
	time.Sleep(3 * time.Second)
	b.StartWorker(t)
	var m migrated
	select {
	case m = <-done:
	case <-time.After(90 * time.Second):
		require.FailNow(t, "the migration did not finish")
	}
	t.Logf("migration took %s after the restart", time.Since(began).Round(time.Millisecond))
	require.NoError(t, m.err)
	assert.Equal(t, b.Namespace, m.res.Target.Namespace)
	assert.Equal(t, 4, m.res.MessageCount)
	assertRemembers(t, b, id, 4, "Hello, how are you?", "My name is Alice")
	assertOneLiveChat(t, id, a, b)
}
