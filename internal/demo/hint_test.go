package demo_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/internal/cli"
	"github.com/agentchat/agentchat/internal/testenv"
)

// keepTalking runs the commands that the demo's closing hint prints, as printed: the
// worker (built from ./worker), then each starter send, which must be answered.
func keepTalking(t *testing.T, demoOut string) {
	t.Helper()
	_, hint, found := strings.Cut(demoOut, "To keep talking to these chats")
	require.True(t, found, "the demo prints how to keep talking:\n%s", demoOut)
	var cmds [][]string
	lines := strings.Split(hint, "\n")[1:]
	for len(lines) > 0 && strings.HasPrefix(lines[0], "  ") {
		cmds = append(cmds, shellWords(t, strings.TrimSpace(lines[0])))
		lines = lines[1:]
	}
	require.True(t, len(lines) > 1 && strings.HasPrefix(lines[0], "List the demo's chats"), "the hint says how to list the chats:\n%s", hint)
	list := shellWords(t, strings.TrimSpace(lines[1]))
	require.GreaterOrEqual(t, len(cmds), 3, "a worker and a turn for each chat that takes one:\n%s", hint)
	assert.Contains(t, hint, "--chat story-", "the streaming step's chat is one of them")

	env, worker := splitEnv(cmds[0])
	require.Equal(t, []string{"go", "run", "./worker"}, worker[:3], "the first command runs the worker")
	proc := exec.Command(testenv.WorkerBinary(t), worker[3:]...)
	proc.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+testenv.Address(t))
	proc.Env = append(proc.Env, env...)
	var log strings.Builder
	proc.Stdout, proc.Stderr = &log, &log
	require.NoError(t, proc.Start())
	t.Cleanup(func() {
		_ = proc.Process.Kill()
		_ = proc.Wait()
		if t.Failed() {
			t.Logf("worker: %s", log.String())
		}
	})

	for _, c := range cmds[1:] {
		_, args := splitEnv(c)
		require.Equal(t, []string{"go", "run", "./starter"}, args[:3], "%v", c)
		var out, errOut strings.Builder
		code := cli.Execute(t.Context(), append([]string{"--address", testenv.Address(t), "--timeout", time.Minute.String()}, args[3:]...),
			cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
		require.Equal(t, 0, code, "%v\nout: %s\nerr: %s", c, out.String(), errOut.String())
		assert.Contains(t, out.String(), "[offline]", "%v: an agent answered", c)
	}

	_, args := splitEnv(list)
	require.Equal(t, []string{"go", "run", "./starter", "list"}, args[:4], "%v", list)
	var out, errOut strings.Builder
	code := cli.Execute(t.Context(), append([]string{"--address", testenv.Address(t)}, args[3:]...),
		cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	require.Equal(t, 0, code, "%v\nout: %s\nerr: %s", list, out.String(), errOut.String())
	for _, c := range cmds[1:] {
		_, args := splitEnv(c)
		assert.Contains(t, out.String(), args[slices.Index(args, "--chat")+1], "the list names the chats the hint talks to")
	}
}

// splitEnv splits a command's leading NAME=value words from the rest.
func splitEnv(words []string) (env, rest []string) {
	for i, w := range words {
		if !strings.Contains(w, "=") || strings.HasPrefix(w, "-") {
			return words[:i], words[i:]
		}
	}
	return words, nil
}

// shellWords splits a line as a POSIX shell splits plain words and '...' or "..."
// quotes (no expansions; the hint prints none).
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var (
		words []string
		cur   strings.Builder
		in    bool // a word is under way
		quote rune
	)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ':
			if in {
				words, in = append(words, cur.String()), false
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	require.Zero(t, quote, "unclosed quote in %q", line)
	if in {
		words = append(words, cur.String())
	}
	return words
}
