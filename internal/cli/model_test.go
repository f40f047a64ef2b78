package cli_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentchat/agentchat/internal/syncbuf"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/internal/cli"
)

// `starter model --listen` serves the offline model on its own: a plain OpenAI client
// gets the default reply, a request OpenAI refuses is refused, and the command ends
// cleanly when interrupted.
func TestModelServesTheOfflineModel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	ctx, cancel := context.WithCancel(t.Context())
	var out, errOut syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Execute(ctx, []string{"model", "--listen", addr}, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	}()
	url := "http://" + addr + "/v1"
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "serving at "+url) }, 10*time.Second, 10*time.Millisecond, errOut.String())

	cfg := openai.DefaultConfig("any-key")
	cfg.BaseURL = url
	c := openai.NewClientWithConfig(cfg)
	resp, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "offline",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Hello"}}})
	require.NoError(t, err)
	assert.Equal(t, `[offline] assistant received 1 message. First user message: "Hello". Last user message: "Hello".`, resp.Choices[0].Message.Content)

	_, err = c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "offline",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleTool, ToolCallID: "c1", Content: "42"}}})
	var api *openai.APIError
	require.True(t, errors.As(err, &api), "%v", err)
	assert.Equal(t, http.StatusBadRequest, api.HTTPStatusCode)
	assert.Contains(t, errOut.String(), "refused a request", "refusals are logged")

	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, errOut.String())
	case <-time.After(10 * time.Second):
		t.Fatal("the model command did not stop when interrupted")
	}
}
