package offline_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/offline"
)

// stream_options without stream is refused as OpenAI refuses it: the option is only for
// streamed calls.
func TestStreamOptionsWithoutStreamIsRefused(t *testing.T) {
	s := startServer(t, offline.Options{})
	req := openai.ChatCompletionRequest{Model: offline.ModelID, Messages: []openai.ChatCompletionMessage{user("hi")},
		StreamOptions: &openai.StreamOptions{IncludeUsage: true}}
	_, err := newClient(s, "helper").CreateChatCompletion(context.Background(), req)
	var api *openai.APIError
	require.True(t, errors.As(err, &api), "%v", err)
	assert.Equal(t, http.StatusBadRequest, api.HTTPStatusCode)
	require.NotNil(t, api.Param)
	assert.Equal(t, "stream_options", *api.Param)
	assert.Equal(t, "The 'stream_options' parameter is only allowed when 'stream' is enabled.", api.Message)
}

// The same request reports the same usage whole and streamed with include_usage.
func TestUsageIsReportedStreamedOrNot(t *testing.T) {
	s := startServer(t, offline.Options{})
	c := newClient(s, "helper")
	req := openai.ChatCompletionRequest{Model: offline.ModelID, Messages: []openai.ChatCompletionMessage{user("My name is Ada")}}
	whole, err := c.CreateChatCompletion(context.Background(), req)
	require.NoError(t, err)
	require.Positive(t, whole.Usage.PromptTokens)
	require.Positive(t, whole.Usage.CompletionTokens)

	req.Stream, req.StreamOptions = true, &openai.StreamOptions{IncludeUsage: true}
	stream, err := c.CreateChatCompletionStream(context.Background(), req)
	require.NoError(t, err)
	defer stream.Close()
	var got *openai.Usage
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if chunk.Usage != nil {
			got = chunk.Usage
		}
	}
	require.NotNil(t, got, "no usage chunk")
	assert.Equal(t, whole.Usage.PromptTokens, got.PromptTokens)
	assert.Equal(t, whole.Usage.CompletionTokens, got.CompletionTokens)
}
