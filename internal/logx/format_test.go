package logx

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewWritesTextOrJSON(t *testing.T) {
	var b bytes.Buffer
	l, err := New(&b, "json", slog.LevelInfo)
	require.NoError(t, err)
	l.Debug("hidden")
	l.Info("model call", "chatId", "c1")
	var line map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &line), "one JSON object: %s", b.String())
	assert.Equal(t, "model call", line["msg"])
	assert.Equal(t, "c1", line["chatId"])

	b.Reset()
	l, err = New(&b, "", slog.LevelDebug)
	require.NoError(t, err)
	l.Debug("shown", "k", "v")
	assert.True(t, strings.Contains(b.String(), "msg=shown k=v"), b.String())

	_, err = New(&b, "xml", slog.LevelInfo)
	assert.EqualError(t, err, `log format "xml": use text or json`)
}
