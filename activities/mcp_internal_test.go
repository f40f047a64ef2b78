package activities

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A stdio MCP server's standard error reaches the log redacted: the server may print
// the secrets its env gave it.
func TestMCPServerStderrIsRedactedInTheLog(t *testing.T) {
	const secret = "stdio-secret-DISTINCT-0077"
	addSecret(secret)
	var buf bytes.Buffer
	w := &logWriter{logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), server: "tickets"}
	_, _ = w.Write([]byte("starting with TICKETS_TOKEN=" + secret + "\n"))
	assert.Contains(t, buf.String(), "MCP server stderr")
	assert.NotContains(t, buf.String(), secret)
	assert.Contains(t, buf.String(), Redacted)
}
