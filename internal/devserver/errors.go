package devserver

import "errors"

// Sentinel errors of this package; callers match them with errors.Is.
var (
	// ErrCLINotFound means no Temporal CLI binary was found by FindCLI.
	ErrCLINotFound = errors.New("devserver: Temporal CLI not found")
	// ErrNotRunning means a PID file names no running dev server.
	ErrNotRunning = errors.New("devserver: dev server not running")
	// ErrNotReady means a started server did not become ready in time or exited.
	ErrNotReady = errors.New("devserver: dev server not ready")
)
