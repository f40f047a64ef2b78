package offline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentchat/agentchat/wire"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/offline"
)

// errorBody is an OpenAI error response.
type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    string  `json:"code"`
		Param   *string `json:"param"`
	} `json:"error"`
}

// do sends a raw request to s and decodes an error body when the status is not 200.
func do(t *testing.T, s *offline.Server, method, path, body string) (*http.Response, errorBody) {
	t.Helper()
	req, err := http.NewRequest(method, strings.TrimSuffix(s.URL(), "/v1")+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(offline.AgentHeader, "raw")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var e errorBody
	if resp.StatusCode != http.StatusOK {
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
	}
	return resp, e
}

func TestModels(t *testing.T) {
	s := startServer(t, offline.Options{})
	c := newClient(s, "a")
	list, err := c.ListModels(context.Background())
	require.NoError(t, err)
	require.Len(t, list.Models, 1)
	assert.Equal(t, offline.ModelID, list.Models[0].ID)
	assert.Equal(t, "model", list.Models[0].Object)

	m, err := c.GetModel(context.Background(), offline.ModelID)
	require.NoError(t, err)
	assert.Equal(t, offline.ModelID, m.ID)

	_, err = c.GetModel(context.Background(), "gpt-4o")
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.HTTPStatusCode)
	assert.Equal(t, 0, s.TotalRequests(), "only chat completions are counted")
}

func TestUnknownPathAndWrongMethod(t *testing.T) {
	s := startServer(t, offline.Options{})

	resp, e := do(t, s, http.MethodPost, "/v1/embeddings", `{}`)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, "invalid_request_error", e.Error.Type)
	assert.Equal(t, "unknown_url", e.Error.Code)
	assert.Contains(t, e.Error.Message, "/v1/embeddings")
	assert.Nil(t, e.Error.Param)

	resp, e = do(t, s, http.MethodGet, "/v1/chat/completions", "")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, http.MethodPost, resp.Header.Get("Allow"))
	assert.Equal(t, "method_not_allowed", e.Error.Code)

	resp, _ = do(t, s, http.MethodDelete, "/v1/models", "")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, http.MethodGet, resp.Header.Get("Allow"))
	assert.Equal(t, 0, s.TotalRequests())
}

func TestMalformedBodyIsABadRequest(t *testing.T) {
	s := startServer(t, offline.Options{})
	resp, e := do(t, s, http.MethodPost, "/v1/chat/completions", `{"messages": [`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "invalid_request_error", e.Error.Type)
	assert.Contains(t, e.Error.Message, "JSON")
}

func TestRateLimitSetsRetryAfter(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{
		"raw": {{Status: http.StatusTooManyRequests, RetryAfter: 7}},
		"a":   {{Status: http.StatusTooManyRequests, RetryAfter: 3, Message: "slow down"}},
	}})
	resp, e := do(t, s, http.MethodPost, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "7", resp.Header.Get("Retry-After"))
	assert.Equal(t, "Too Many Requests", e.Error.Message)
	assert.Equal(t, "rate_limit_exceeded", e.Error.Code)

	_, err := newClient(s, "a").CreateChatCompletion(context.Background(), chatRequest("hi"))
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusTooManyRequests, apiErr.HTTPStatusCode)
	assert.Equal(t, "slow down", apiErr.Message)
	assert.Equal(t, "rate_limit_exceeded", apiErr.Code)
}

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestAuthorizationIsAcceptedButNeverLogged(t *testing.T) {
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := startServer(t, offline.Options{Logger: logger})
	cfg := openai.DefaultConfig("sk-very-secret-key")
	cfg.BaseURL = s.URL()
	cfg.HTTPClient = &http.Client{Transport: agentTransport{agent: "a"}}
	c := openai.NewClientWithConfig(cfg)

	resp := complete(t, c, chatRequest("hi"))
	assert.True(t, strings.HasPrefix(resp.Choices[0].Message.Content, "[offline] a received"))
	completeStream(t, c, chatRequest("hi"))

	out := logs.String()
	assert.Contains(t, out, "agent=a", "requests are logged")
	assert.Contains(t, out, "request=2")
	assert.NotContains(t, out, "sk-very-secret-key")
	assert.NotContains(t, out, "Bearer")
}

func TestDelayIsCutShortByCancellation(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{
		"a": {{Text: "never", Delay: wire.Duration(time.Minute)}, {Text: "never", Delay: wire.Duration(time.Minute)}},
	}})
	c := newClient(s, "a")

	for _, stream := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		start := time.Now()
		var err error
		if stream {
			_, err = c.CreateChatCompletionStream(ctx, chatRequest("hi"))
		} else {
			_, err = c.CreateChatCompletion(ctx, chatRequest("hi"))
		}
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "stream=%v", stream)
		assert.Less(t, time.Since(start), 5*time.Second)
	}
	assert.Equal(t, 2, s.Requests("a"))
}

// TestServeHTTPReturnsWhenTheRequestIsCancelled checks the handler itself stops waiting,
// not just the client.
func TestServeHTTPReturnsWhenTheRequestIsCancelled(t *testing.T) {
	s := offline.New(offline.Options{
		Latency: time.Minute,
		Scripts: map[string][]offline.Reply{offline.DefaultAgent: {{Delay: wire.Duration(time.Hour)}}},
	})
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ServeHTTP(rec, req)
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ServeHTTP still waiting after the request was cancelled")
	}
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Contains(t, rec.Body.String(), "cancelled")
}

func TestCloseCutsInFlightRequestsShort(t *testing.T) {
	s, err := offline.Start(offline.Options{Scripts: map[string][]offline.Reply{"a": {{Text: "never", Delay: wire.Duration(time.Hour)}}}})
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() {
		_, err := newClient(s, "a").CreateChatCompletion(context.Background(), chatRequest("hi"))
		errc <- err
	}()
	require.Eventually(t, func() bool { return s.Requests("a") == 1 }, 5*time.Second, 5*time.Millisecond)

	start := time.Now()
	require.NoError(t, s.Close())
	assert.Less(t, time.Since(start), time.Second)
	var apiErr *openai.APIError
	require.ErrorAs(t, <-errc, &apiErr)
	assert.Equal(t, http.StatusServiceUnavailable, apiErr.HTTPStatusCode)
	require.NoError(t, s.Close(), "Close twice")

	_, err = newClient(s, "a").CreateChatCompletion(context.Background(), chatRequest("hi"))
	assert.Error(t, err, "closed servers do not answer")
}

func TestNewServesAsAHandler(t *testing.T) {
	s := offline.New(offline.Options{})
	assert.Empty(t, s.URL())
	assert.NoError(t, s.Close())
	ts := httptest.NewServer(s)
	defer ts.Close()
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = ts.URL + "/v1"
	resp, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(), chatRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, `[offline] assistant received 1 message. First user message: "hi". Last user message: "hi".`,
		resp.Choices[0].Message.Content)
}
