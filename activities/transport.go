package activities

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/agentchat/agentchat/wire"
)

// callKey carries a *callInfo through the request context.
type callKey struct{}

// callInfo is filled by doer as a model request goes out and comes back: the agent id
// it sets in the AgentHeader, and the Retry-After the provider answered with.
type callInfo struct {
	agentID string
	chatID  string
	// reply marks an agent's own model call (not a selector's, judge's or summary's):
	// wire.AuthorHeader then gives author, the name its replies carry in the request.
	reply      bool
	author     string
	retryAfter time.Duration
}

func withCall(ctx context.Context, c *callInfo) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// doer is go-openai's HTTPDoer: it names the agent in wire.AgentHeader and records
// the response's Retry-After (seconds or an HTTP date), which go-openai's errors do
// not expose.
type doer struct{ client *http.Client }

func (d *doer) Do(req *http.Request) (*http.Response, error) {
	c, _ := req.Context().Value(callKey{}).(*callInfo)
	if c != nil && c.agentID != "" {
		req.Header.Set(wire.AgentHeader, c.agentID)
	}
	if c != nil && c.chatID != "" {
		req.Header.Set(wire.ChatHeader, c.chatID)
	}
	if c != nil && c.reply {
		req.Header.Set(wire.AuthorHeader, c.author)
	}
	putEncodedBody(req)
	resp, err := d.client.Do(req)
	if c != nil && resp != nil {
		c.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return resp, err
}

// parseRetryAfter reads a Retry-After header (RFC 9110 §10.2.3): delay-seconds or an
// HTTP date. Zero when absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
