package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
)

// A message comes from a file (--file F) or standard input (- or --file -), whole,
// less one final line break; it may be longer than a command line takes.
func TestSendTakesTheMessageFromAFileOrStdin(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper", "--max-message-bytes", "1048576")

	dir := t.TempDir()
	small := filepath.Join(dir, "small.txt")
	require.NoError(t, os.WriteFile(small, []byte("line one\n  line two, \"quoted\"\n"), 0o600))
	ok(t, h, "send", "--chat", id, "--id", "f1", "--file", small)

	r := starter(t, h, "from stdin\n", "send", "--chat", id, "--id", "f2", "-")
	require.Equal(t, 0, r.code, "%v", r)
	r = starter(t, h, "from --file -", "send", "--chat", id, "--id", "f3", "--file", "-")
	require.Equal(t, 0, r.code, "%v", r)

	// 800 KB: more than one shell argument may hold, less than the chat's 1 MiB.
	big := filepath.Join(dir, "big.txt")
	bigText := strings.Repeat("0123456789abcdef", 800_000/16)
	require.NoError(t, os.WriteFile(big, []byte(bigText+"\n"), 0o600))
	r = starter(t, h, "", "send", "--chat", id, "--id", "f4", "--no-stream", "--file", big)
	require.Equal(t, 0, r.code, "%v", r)
	assert.NotContains(t, r.out, "TMPRL1103", "the SDK's warnings never reach the output")
	assert.NotContains(t, r.err, "TMPRL1103", "nor stderr without -v")

	hist, err := h.Client.History(t.Context(), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	got := map[string]string{}
	for _, m := range hist.Messages {
		got[m.MessageID] = m.Text()
	}
	assert.Equal(t, "line one\n  line two, \"quoted\"", got["f1"], "the file whole, less its final line break")
	assert.Equal(t, "from stdin", got["f2"])
	assert.Equal(t, "from --file -", got["f3"])
	assert.Equal(t, bigText, got["f4"])

	// -v shows the SDK's warnings, on stderr.
	r = starter(t, h, "", "-v", "send", "--chat", id, "--id", "f5", "--no-stream", "--file", big)
	require.Equal(t, 0, r.code, "%v", r)
	assert.NotContains(t, r.out, "TMPRL1103")
	assert.Contains(t, r.err, "TMPRL1103")

	// Bad input: a clear error, and nothing sent.
	empty := filepath.Join(dir, "empty.txt")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	tooBig := filepath.Join(dir, "too-big.txt")
	require.NoError(t, os.WriteFile(tooBig, []byte(strings.Repeat("x", 1<<20+1)), 0o600))
	binary := filepath.Join(dir, "binary.bin")
	require.NoError(t, os.WriteFile(binary, []byte{0xff, 0xfe, 0x00}, 0o600))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--file", filepath.Join(dir, "missing.txt")}, "missing.txt"},
		{[]string{"--file", empty}, "empty"},
		{[]string{"--file", tooBig}, "over 1048576 bytes"},
		{[]string{"--file", binary}, "not UTF-8"},
		{[]string{"--file", small, "and", "words"}, "not both"},
		{[]string{"-"}, "standard input: empty"},
	} {
		line := fails(t, h, append([]string{"send", "--chat", id}, tc.args...)...)
		assert.Contains(t, line, tc.want, "%v", tc.args)
	}
	st, err := h.Client.State(t.Context(), id)
	require.NoError(t, err)
	assert.Equal(t, 5, st.TurnCount, "no refused input became a turn")
}

// A message over a chat's limit is refused with the limit and how to raise it: a chat
// started without --max-message-bytes takes 256 KiB, counted as encoded JSON (here
// text of '<', six bytes each when encoded, within 1 MiB raw but over it encoded).
func TestAMessageOverTheChatsLimitSaysHowToRaiseIt(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	dir := t.TempDir()
	over := filepath.Join(dir, "over.txt")
	require.NoError(t, os.WriteFile(over, []byte(strings.Repeat("x", 256<<10+1)), 0o600))
	line := fails(t, h, "send", "--chat", id, "--file", over)
	assert.Contains(t, line, "at most 262144")
	assert.Contains(t, line, "start a chat with --max-message-bytes N", "it names the flag that raises the limit")

	escaped := filepath.Join(dir, "escaped.txt")
	require.NoError(t, os.WriteFile(escaped, []byte(strings.Repeat("<", 200<<10)), 0o600))
	line = fails(t, h, "send", "--chat", id, "--file", escaped)
	assert.Contains(t, line, "encoded", "the limit counts encoded bytes, and says so")

	r := starter(t, h, "", "send", "--help")
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.out, "256 KiB", "send --help gives the default limit")
	st, err := h.Client.State(t.Context(), id)
	require.NoError(t, err)
	assert.Zero(t, st.TurnCount)
}
