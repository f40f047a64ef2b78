package activities

import (
	"context"
	"net/url"
)

// ToolCall identifies the tool call a ToolFunc runs. CallTool puts it in the function's
// context; read it with CallOf.
type ToolCall struct {
	ChatID  string
	AgentID string
	CallID  string
	Name    string
}

// IdempotencyKey is IdempotencyKey(c.ChatID, c.CallID): the same for every attempt of
// this call, on any worker, after any crash, retry or rollback of the turn.
func (c ToolCall) IdempotencyKey() string { return IdempotencyKey(c.ChatID, c.CallID) }

type toolCallKey struct{}

// WithToolCall returns ctx carrying call, as CallTool gives it to the tool function
// that runs it; tests of a tool use it to call the function directly.
func WithToolCall(ctx context.Context, call ToolCall) context.Context {
	return context.WithValue(ctx, toolCallKey{}, call)
}

// CallOf returns the tool call that ctx runs; ok is false outside a tool function.
func CallOf(ctx context.Context) (call ToolCall, ok bool) {
	call, ok = ctx.Value(toolCallKey{}).(ToolCall)
	return call, ok
}

// IdempotencyKey returns the idempotency key of call callID of chat chatID:
// "<chatId>/<callId>", each part path-escaped (RFC 3986), so the key is printable
// ASCII (fit for an HTTP header such as a payment service's Idempotency-Key) and two
// different calls never share it. A call id is unique within its chat, and a chat id is
// never reused, so the key names one call for good.
//
// Temporal runs an activity at least once: a worker that dies after the tool's side
// effect and before its completion reaches the server has the call run again, with the
// same key. A tool with side effects deduplicates on it.
func IdempotencyKey(chatID, callID string) string {
	return url.PathEscape(chatID) + "/" + url.PathEscape(callID)
}
