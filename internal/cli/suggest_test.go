package cli_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An unknown command's error is one line, and the commands it may have meant follow,
// one a line.
func TestUnknownCommandSuggestsOneALine(t *testing.T) {
	r := execute(t, "", "stat", "--chat", "x")
	require.Equal(t, 1, r.code, "%v", r)
	assert.Empty(t, r.out)
	lines := strings.Split(strings.TrimSuffix(r.err, "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 3, r.err)
	assert.Equal(t, `starter: unknown command "stat" for "starter"`, lines[0])
	assert.Equal(t, "Did you mean this?", lines[1])
	assert.Contains(t, lines[2:], "  state")
	assert.Contains(t, lines[2:], "  start")
	for _, l := range lines[2:] {
		assert.Regexp(t, `^  [a-z-]+$`, l, "one command a line")
	}
}
