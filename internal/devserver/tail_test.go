package devserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTailBufferKeepsTheEnd(t *testing.T) {
	tb := &tailBuffer{max: 16}
	for i := range 10 {
		_, _ = tb.Write([]byte("line " + string(rune('0'+i)) + "\n"))
	}
	assert.Equal(t, "line 8\nline 9", tb.lastLines(5), "only the last 16 bytes are kept")
	assert.Equal(t, "line 9", tb.lastLines(1))
}

func TestLastLinesSkipsBlankLines(t *testing.T) {
	assert.Equal(t, "b\nc", lastLines([]byte("a\n\nb\n  \nc\n\n"), 2))
	assert.Equal(t, "", lastLines(nil, 3))
}

func TestFileTailReadsOnlyNewOutput(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	old := "old run\n"
	require.NoError(t, os.WriteFile(p, []byte(old+"new 1\nnew 2\n"), 0o644))
	assert.Equal(t, "new 1\nnew 2", fileTail(p, int64(len(old)), 10))
	assert.Equal(t, "new 2", fileTail(p, 0, 1))
	assert.Equal(t, "", fileTail(filepath.Join(t.TempDir(), "missing"), 0, 3))

	big := strings.Repeat("x", 100<<10) + "\nlast\n"
	require.NoError(t, os.WriteFile(p, []byte(big), 0o644))
	assert.Equal(t, "last", fileTail(p, 0, 1), "large files are read from the end")
}
