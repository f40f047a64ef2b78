package offline_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/offline"
)

// startServer starts a server for opts and closes it when the test ends.
func startServer(t *testing.T, opts offline.Options) *offline.Server {
	t.Helper()
	s, err := offline.Start(opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.True(t, strings.HasPrefix(s.URL(), "http://127.0.0.1:"), s.URL())
	require.True(t, strings.HasSuffix(s.URL(), "/v1"), s.URL())
	return s
}

// fuzzPost fuzzes POST path on an offline server with arbitrary bodies, seeded with
// seeds. A 200 must pass checkOK; a status in errorStatuses must carry an OpenAI
// error body with a message; any other status, or a panic, fails.
func fuzzPost(f *testing.F, path string, seeds []string, checkOK func(*testing.T, *httptest.ResponseRecorder), errorStatuses ...int) {
	for _, body := range seeds {
		f.Add(body)
	}
	s := offline.New(offline.Options{})
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		switch {
		case rec.Code == http.StatusOK:
			checkOK(t, rec)
		case slices.Contains(errorStatuses, rec.Code):
			var e struct {
				Error *openai.APIError `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == nil || e.Error.Message == "" {
				t.Fatalf("%d without an OpenAI error body: %s", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("status %d for %q", rec.Code, body)
		}
	})
}

// agentTransport sets offline.AgentHeader on every request, as agentchat's model activity does.
type agentTransport struct{ agent string }

func (a agentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(offline.AgentHeader, a.agent)
	return http.DefaultTransport.RoundTrip(r)
}

// newClient is the real go-openai client for s, calling as agent ("" sends no AgentHeader).
func newClient(s *offline.Server, agent string) *openai.Client {
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = s.URL()
	if agent != "" {
		cfg.HTTPClient = &http.Client{Transport: agentTransport{agent: agent}}
	}
	return openai.NewClientWithConfig(cfg)
}

// chatRequest is a request for model "offline" with messages alternating user and
// assistant roles, starting with user.
func chatRequest(texts ...string) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{Model: offline.ModelID}
	for i, text := range texts {
		role := openai.ChatMessageRoleUser
		if i%2 == 1 {
			role = openai.ChatMessageRoleAssistant
		}
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: role, Content: text})
	}
	return req
}

// streamed is what a chat completion stream delivered, reassembled.
type streamed struct {
	text      string
	chunks    int // chunks received, of any kind
	content   int // chunks that carried content
	toolCalls []openai.ToolCall
	finish    openai.FinishReason
	usage     *openai.Usage
	id, model string
}

// complete sends req non-streaming and returns the response.
func complete(t *testing.T, c *openai.Client, req openai.ChatCompletionRequest) openai.ChatCompletionResponse {
	t.Helper()
	resp, err := c.CreateChatCompletion(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, resp.Choices, 1)
	return resp
}

// completeStream sends req streaming and reassembles what arrives, as a client would.
func completeStream(t *testing.T, c *openai.Client, req openai.ChatCompletionRequest) streamed {
	t.Helper()
	stream, err := c.CreateChatCompletionStream(context.Background(), req)
	require.NoError(t, err)
	defer stream.Close()
	var out streamed
	var b strings.Builder
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		out.chunks++
		out.id, out.model = resp.ID, resp.Model
		if resp.Usage != nil {
			out.usage = resp.Usage
		}
		for _, ch := range resp.Choices {
			if ch.Delta.Content != "" {
				out.content++
				b.WriteString(ch.Delta.Content)
			}
			for _, tc := range ch.Delta.ToolCalls {
				require.NotNil(t, tc.Index, "streamed tool call without index")
				for len(out.toolCalls) <= *tc.Index {
					out.toolCalls = append(out.toolCalls, openai.ToolCall{})
				}
				call := &out.toolCalls[*tc.Index]
				if tc.ID != "" {
					call.ID = tc.ID
				}
				if tc.Type != "" {
					call.Type = tc.Type
				}
				call.Function.Name += tc.Function.Name
				call.Function.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != "" {
				out.finish = ch.FinishReason
			}
		}
	}
	out.text = b.String()
	return out
}
