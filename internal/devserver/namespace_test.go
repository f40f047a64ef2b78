package devserver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// EnsureNamespace registers a missing namespace, which is then usable, and leaves an
// existing one alone.
func TestEnsureNamespaceRegistersOnce(t *testing.T) {
	s := startServer(t, Options{Address: freeAddress(t), UIPort: Headless})
	require.Error(t, describeNamespace(t, s.Address, "ensured"), "not there before")
	require.NoError(t, EnsureNamespace(testContext(t), s.Address, "ensured", 24*time.Hour))
	require.NoError(t, describeNamespace(t, s.Address, "ensured"))
	require.NoError(t, EnsureNamespace(testContext(t), s.Address, "ensured", 24*time.Hour), "again: it exists")
}
