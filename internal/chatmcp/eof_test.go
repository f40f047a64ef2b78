package chatmcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/internal/chatmcp"
	"github.com/agentchat/agentchat/internal/testenv"
)

// eofInput is initialize and requests sent right after it, before any answer, and
// the answer each id must get: a result, or an error with this code.
var eofInput = []struct {
	id, line string
	code     int64
}{
	{`"init"`, fmt.Sprintf(initializeLine, `"init"`), 0},
	{`"ping"`, `{"jsonrpc":"2.0","id":"ping","method":"ping"}`, 0},
	{`"list"`, `{"jsonrpc":"2.0","id":"list","method":"tools/list"}`, 0},
	{`"bad"`, `{"jsonrpc":"2.0","id":"bad","method":"tools/list","params":5}`, codeInvalidParams},
	{`7`, `{"jsonrpc":"2.0","id":7,"method":"no/such"}`, codeMethodNotFound},
}

// checkEOFAnswers asserts that out holds one answer to every request of eofInput.
func checkEOFAnswers(t *testing.T, out []byte) {
	t.Helper()
	got := map[string]rpcAnswer{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		var a rpcAnswer
		require.NoError(t, json.Unmarshal([]byte(line), &a), "not JSON-RPC: %s", line)
		_, dup := got[string(a.ID)]
		assert.False(t, dup, "two answers to %s", a.ID)
		got[string(a.ID)] = a
	}
	for _, in := range eofInput {
		a, ok := got[in.id]
		if !assert.True(t, ok, "no answer to %s before the end; output: %s", in.line, out) {
			continue
		}
		if in.code == 0 {
			assert.Nil(t, a.Error, in.line)
		} else if assert.NotNil(t, a.Error, in.line) {
			assert.Equal(t, in.code, a.Error.Code, in.line)
		}
	}
	assert.Equal(t, len(eofInput), len(got), "answers: %s", out)
}

func eofStdin() string {
	var b strings.Builder
	for _, in := range eofInput {
		b.WriteString(in.line + "\n")
	}
	return b.String()
}

// When standard input ends right after initialize and a few requests, the stdio
// server answers every request it read, then returns cleanly (many times, since the
// end races with the answers).
func TestStdioAnswersEveryRequestBeforeTheEnd(t *testing.T) {
	for i := range 50 {
		var out bytes.Buffer
		err := chatmcp.NewServer(nil, "test").Run(t.Context(), &chatmcp.LineTransport{
			In: io.NopCloser(strings.NewReader(eofStdin())), Out: &out})
		require.NoError(t, err, "round %d: the end of the input ends the session cleanly", i)
		checkEOFAnswers(t, out.Bytes())
		if t.Failed() {
			t.Fatalf("round %d", i)
		}
	}
}

// `starter mcp` with its standard input closed right after initialize and a few
// requests answers them all and exits 0.
func TestStarterMCPCommandAnswersEveryRequestBeforeTheEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Binary(t, "github.com/agentchat/agentchat/starter"), "mcp",
		"--address", testenv.Address(t), "--task-queue", testenv.TaskQueue(t))
	cmd.Stdin = strings.NewReader(eofStdin())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "starter mcp exits cleanly at the end of its input: %s", stderr.String())
	checkEOFAnswers(t, stdout.Bytes())
}
