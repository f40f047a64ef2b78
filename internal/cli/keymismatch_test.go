package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/internal/testenv"
)

// The worker command with ring k2 and the starter with ring k1 (then with a ring of
// the same id k2 but other bytes): start and import fail in one line that names the
// key id, the worker logs which key it could not open, and the id starts with the
// right ring afterwards.
func TestStarterWithAnotherKeyRingThanTheWorkerNamesTheKeyAndFreesTheID(t *testing.T) {
	dir := t.TempDir()
	ringOf := func(name, id string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		_, errOut, code := run(t, "keys", "--id", id, "--out", path)
		require.Equal(t, 0, code, errOut)
		return path
	}
	a, b, sameID := ringOf("a.json", "k1"), ringOf("b.json", "k2"), ringOf("c.json", "k2")
	tq := testenv.TaskQueue(t)
	w := testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq, Args: []string{"--offline", "--keys", b},
		Config: "agents:\n  - {id: helper, name: Helper, model: offline}\n"})
	addr := testenv.Address(t)
	starter := func(ring string, args ...string) result {
		return execute(t, "", append([]string{"--address", addr, "--task-queue", tq, "--keys", ring, "--timeout", "1m"}, args...)...)
	}
	doc := filepath.Join(dir, "doc.json")
	id := testenv.ChatID(t)
	require.Equal(t, 0, starter(b, "start", "--chat", id, "--agents", "helper").code)
	require.Equal(t, 0, starter(b, "export", "--chat", id, "--out", doc, "--plain").code)

	for _, ring := range []struct{ path, key string }{{a, `key id "k1"`}, {sameID, `key id "k2"`}} {
		newID := id + "-" + filepath.Base(ring.path)
		for _, args := range [][]string{
			{"start", "--chat", newID, "--agents", "helper"},
			{"import", "--chat", newID + "-import", "--in", doc},
		} {
			r := starter(ring.path, args...)
			require.Equal(t, 1, r.code, "%v: %v", args, r)
			assert.Contains(t, r.err, "key rings of this client and the chat's workers differ", "%v", args)
			assert.Contains(t, r.err, ring.key, "%v", args)
			assert.NotContains(t, r.err, "Encoded failure", "%v", args)
		}
		r := starter(b, "start", "--chat", newID, "--agents", "helper")
		assert.Equal(t, 0, r.code, "the right ring starts the id: %v", r)
		r = starter(b, "import", "--chat", newID+"-import", "--in", doc)
		assert.Equal(t, 0, r.code, "the right ring imports into the id: %v", r)
	}
	require.Eventually(t, func() bool {
		log, err := os.ReadFile(w.LogFile)
		return err == nil && strings.Contains(string(log), "does not open with this key ring") && strings.Contains(string(log), `keyId=k1`)
	}, 10*time.Second, 100*time.Millisecond, "the worker logs the key it could not open")
}
