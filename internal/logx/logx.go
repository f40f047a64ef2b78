// Package logx holds small log/slog helpers shared by the client and the commands.
package logx

import (
	"context"
	"log/slog"
)

// MinLevel returns a handler that passes on records at or above min to h. It keeps the
// Temporal SDK's info-level chatter out of command-line output.
func MinLevel(h slog.Handler, min slog.Level) slog.Handler { return levelHandler{h, min} }

type levelHandler struct {
	slog.Handler
	min slog.Level
}

func (h levelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h levelHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return levelHandler{h.Handler.WithAttrs(a), h.min}
}

func (h levelHandler) WithGroup(n string) slog.Handler {
	return levelHandler{h.Handler.WithGroup(n), h.min}
}
