package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A command given a --message-store whose SQLite file does not exist fails first with
// that, naming the path, before it dials Temporal (the address here answers nothing),
// and creates neither the file nor its folder.
func TestReadsNeverCreateTheMessageStore(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing", "dir", "x.db")
	for _, args := range [][]string{
		{"history", "--chat", "c"},
		{"history", "--chat", "c", "--json"},
		{"state", "--chat", "c"},
		{"export", "--chat", "c", "--out", filepath.Join(dir, "c.json")},
		{"list"},
	} {
		t.Run(args[0], func(t *testing.T) {
			line := fails(t, nil, append([]string{"--address", "127.0.0.1:1", "--message-store", "sqlite://" + missing}, args...)...)
			assert.Contains(t, line, "the store file "+missing+" does not exist")
			assert.NotContains(t, line, "127.0.0.1:1", "the store is checked before the server")
			_, err := os.Stat(filepath.Join(dir, "missing"))
			assert.ErrorIs(t, err, os.ErrNotExist)
		})
	}
}
