package cli_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/internal/cli"
	"github.com/agentchat/agentchat/internal/testenv"
)

// The interactive chat's commands are one list: chat --help, the session's banner,
// /help, the unknown-command message and the README's table name every one of them.
func TestSlashCommandsAgreeEverywhere(t *testing.T) {
	usages := cli.SlashCommands()
	require.Contains(t, usages, "/approve CALL")
	require.Contains(t, usages, "/reject CALL [REASON]")

	help := execute(t, "", "chat", "--help")
	require.Equal(t, 0, help.code, "%v", help)
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)

	h := testenv.New(t, testenv.Options{})
	r := starter(t, h, "/help\n/bogus\n", "chat", "--chat", testenv.ChatID(t), "--agents", "helper")
	require.Equal(t, 0, r.code, "%v", r)
	lines := r.lines()
	require.NotEmpty(t, lines)
	banner := lines[0]
	helpOut := strings.Join(lines[1:], "\n")
	require.Len(t, strings.Split(strings.TrimSpace(r.err), "\n"), 1, r.err)

	for _, u := range usages {
		assert.Contains(t, help.out, "  "+u+" ", "chat --help")
		assert.Contains(t, banner, u, "the session's banner")
		assert.Contains(t, helpOut, "  "+u+" ", "/help")
		assert.Contains(t, r.err, u, "the unknown-command message")
		assert.Contains(t, string(readme), "| `"+u+"` |", "the README's table")
	}
	assert.Contains(t, r.err, "unknown command /bogus")
	assert.Zero(t, h.Model.TotalRequests(), "commands are not turns")
}

// A command missing its argument prints its usage (with the calls that wait, for
// /approve and /reject), not the library's refusal, and the session goes on.
func TestSlashCommandWithoutItsArgumentPrintsItsUsage(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	r := starter(t, h, "/approve\n/reject   \n/state\n", "chat", "--chat", testenv.ChatID(t), "--agents", "helper")
	require.Equal(t, 0, r.code, "%v", r)
	assert.Contains(t, r.err, "usage: /approve CALL")
	assert.Contains(t, r.err, "usage: /reject CALL [REASON]")
	assert.Contains(t, r.err, "no tool call waits for approval")
	assert.NotContains(t, r.err, "callId", "not the library's words")
	assert.Contains(t, r.out, "status:", "the session went on to /state")
}
