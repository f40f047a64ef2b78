package logx

import (
	"fmt"
	"io"
	"log/slog"
)

// New returns a logger writing to w at level and above, in format "text" (slog's
// key=value lines; "" too) or "json" (one JSON object a line). Any other format is an
// error naming it.
func New(w io.Writer, format string, level slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: use text or json", format)
}
