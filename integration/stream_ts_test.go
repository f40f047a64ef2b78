package integration_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
)

// Temporal's own TypeScript Workflow Streams client (@temporalio/workflow-streams,
// streams-ts/) follows a live chat and checks its events against the final History:
// the chat's stream is the protocol, with no agentchat code on the other side. The
// test needs node and `npm ci` in streams-ts (scripts/test does it); it fails without
// them, never skips.
func TestStreamTypeScriptClient(t *testing.T) {
	dir, err := filepath.Abs("../streams-ts")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "node_modules", "@temporalio", "workflow-streams"))
	require.NoError(t, err, "run `npm ci` in streams-ts (scripts/test does)")
	npm, err := exec.LookPath("npm")
	require.NoError(t, err, "node and npm are needed (scripts/test checks them)")

	h := testenv.New(t, testenv.Options{Config: kindsConfig, Model: offline.Options{ChunkDelay: 10 * time.Millisecond}})
	id := testenv.ChatID(t)
	_, err = h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"writer", "analyst"}})
	require.NoError(t, err)

	cmd := exec.CommandContext(ctxFor(t), npm, "test", "--silent")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTCHAT_STREAM_ADDRESS="+testenv.Address(t), "AGENTCHAT_STREAM_NAMESPACE="+h.Namespace,
		"AGENTCHAT_STREAM_CHAT="+id, "AGENTCHAT_STREAM_TURN=t1")
	out := &watchedOutput{mark: "SUBSCRIBING", seen: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	select {
	case <-out.seen:
	case <-time.After(time.Minute):
		t.Fatalf("the TypeScript test did not subscribe within a minute:\n%s", out)
	}
	send(t, h, id, "t1", "Hello, how are you?")
	require.NoError(t, cmd.Wait(), "the TypeScript test failed:\n%s", out)
	t.Logf("TypeScript test:\n%s", out)
}

// watchedOutput collects a process's output and closes seen once it holds mark.
type watchedOutput struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	mark string
	seen chan struct{}
}

func (w *watchedOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.buf.String(), w.mark)
	w.buf.Write(p)
	if !had && strings.Contains(w.buf.String(), w.mark) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *watchedOutput) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
