package demo_test

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/demo"
)

// With --stop-server the demo stops the dev server it started, so it prints no links
// into that server's UI (they would lead nowhere), and says why; the server is gone.
func TestDemoThatStopsItsServerPrintsNoDeadLinks(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err = demo.Run(ctx, demo.Options{Out: &out, Offline: true, DataDir: t.TempDir(), StopServer: true,
		Dial: agentchat.DialOptions{Address: addr}})
	require.NoError(t, err, out.String())
	text := out.String()
	assert.Contains(t, text, "started the dev server at "+addr)
	assert.NotContains(t, text, "/workflows/demo-", "no links into a stopped server's UI")
	assert.Contains(t, text, "no links: the demo stops the dev server it started")
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
	}
	assert.Error(t, err, "the demo's server is stopped")
}
