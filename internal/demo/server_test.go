package demo_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat/internal/demo"
)

// Each address has its own files, whatever way it is written; two addresses never
// share one.
func TestServerFilesAreKeyedByAddress(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "")
	dir := t.TempDir()
	same := []string{"", "localhost:7233", "127.0.0.1:7233", ":7233"}
	want, _, _ := demo.ServerFiles(dir, demo.ResolveAddress(""))
	assert.Equal(t, filepath.Join(dir, "temporal-127.0.0.1-7233.db"), want)
	for _, a := range same {
		db, log, pid := demo.ServerFiles(dir, demo.ResolveAddress(a))
		assert.Equal(t, want, db, "%q", a)
		assert.Equal(t, filepath.Join(dir, "temporal-127.0.0.1-7233.log"), log, "%q", a)
		assert.Equal(t, filepath.Join(dir, "temporal-127.0.0.1-7233.pid"), pid, "%q", a)
	}
	seen := map[string]string{}
	for _, a := range []string{"127.0.0.1:7233", "127.0.0.1:27233", "127.0.0.1:27333", "10.0.0.1:7233", "[::1]:7233", "[::1]:27233"} {
		db, _, _ := demo.ServerFiles(dir, demo.ResolveAddress(a))
		assert.Equal(t, dir, filepath.Dir(db), "%q stays in the data folder", a)
		if other, ok := seen[db]; ok {
			t.Errorf("%s and %s share %s", a, other, db)
		}
		seen[db] = a
	}

	t.Setenv("TEMPORAL_ADDRESS", "localhost:27233")
	assert.Equal(t, "127.0.0.1:27233", demo.ResolveAddress(""), "TEMPORAL_ADDRESS is the default")
	assert.Equal(t, "127.0.0.1:27333", demo.ResolveAddress("127.0.0.1:27333"), "a given address wins")
}
