package offline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentchat/agentchat/wire"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/offline"
)

func TestStreamYieldsSeveralChunks(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{"a": {{Text: "ok"}}}})
	got := completeStream(t, newClient(s, "a"), chatRequest("hi"))
	assert.Equal(t, "[offline] a: ok", got.text)
	assert.Equal(t, 3, got.content, "one chunk per word: even the shortest reply streams in 3 content chunks")
	assert.Equal(t, 1+3+1, got.chunks, "role chunk, content chunks, finish chunk")
	assert.Equal(t, "chatcmpl-offline-1", got.id)
	assert.Equal(t, offline.ModelID, got.model)
	assert.Nil(t, got.usage, "no usage unless asked for")
}

func TestStreamIncludesUsageWhenAsked(t *testing.T) {
	s := startServer(t, offline.Options{})
	c := newClient(s, "a")
	req := chatRequest(seed...)
	whole := complete(t, c, req)
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	got := completeStream(t, c, req)
	require.NotNil(t, got.usage)
	assert.Equal(t, whole.Usage.PromptTokens, got.usage.PromptTokens)
	assert.Equal(t, whole.Usage.CompletionTokens, got.usage.CompletionTokens)
	assert.Equal(t, whole.Usage.TotalTokens, got.usage.TotalTokens)
}

// TestStreamWireFormat reads the raw event stream and checks it is framed as OpenAI frames it.
func TestStreamWireFormat(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{
		"a": {{Text: "one two", ToolCalls: []offline.ToolCall{{ID: "c1", Name: "f", Arguments: `{"k":"a long value"}`}}}},
	}})
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	req, err := http.NewRequest(http.MethodPost, s.URL()+"/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(offline.AgentHeader, "a")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)

	require.True(t, bytes.HasSuffix(raw, []byte("data: [DONE]\n\n")), "%s", raw)
	events := strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n")
	events = events[:len(events)-1] // [DONE]
	var chunks []map[string]any
	for _, e := range events {
		require.True(t, strings.HasPrefix(e, "data: "), "event %q", e)
		var c map[string]any
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(e, "data: ")), &c), e)
		assert.Equal(t, "chat.completion.chunk", c["object"])
		assert.Equal(t, "m", c["model"])
		assert.Contains(t, c, "usage")
		chunks = append(chunks, c)
	}
	// role, 4 content ("[offline]", " a:", " one", " two"), tool header, 3 argument fragments, finish, usage
	require.Len(t, chunks, 1+4+1+3+1+1)

	delta := func(i int) map[string]any {
		return chunks[i]["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
	}
	finish := func(i int) any { return chunks[i]["choices"].([]any)[0].(map[string]any)["finish_reason"] }
	assert.Equal(t, map[string]any{"role": "assistant", "content": ""}, delta(0))
	assert.Equal(t, " a:", delta(2)["content"])
	assert.Equal(t, []any{map[string]any{"index": 0.0, "id": "c1", "type": "function",
		"function": map[string]any{"name": "f", "arguments": ""}}}, delta(5)["tool_calls"])
	assert.Equal(t, []any{map[string]any{"index": 0.0, "function": map[string]any{"arguments": `{"k":"a `}}},
		delta(6)["tool_calls"])
	for i := 0; i < 9; i++ {
		assert.Nil(t, finish(i), "chunk %d has finish_reason null", i)
		assert.Nil(t, chunks[i]["usage"], "chunk %d has usage null", i)
	}
	assert.Equal(t, "tool_calls", finish(9))
	assert.Equal(t, map[string]any{}, delta(9))
	last := chunks[10]
	assert.Equal(t, []any{}, last["choices"])
	assert.Equal(t, 1.0, last["usage"].(map[string]any)["prompt_tokens"])
}

// TestStreamIsFlushedChunkByChunk shows events arrive as they are written, ChunkDelay apart.
func TestStreamIsFlushedChunkByChunk(t *testing.T) {
	const chunkDelay = 100 * time.Millisecond
	s := startServer(t, offline.Options{
		ChunkDelay: chunkDelay,
		Scripts:    map[string][]offline.Reply{"a": {{Text: "one two three"}}},
	})
	start := time.Now()
	stream, err := newClient(s, "a").CreateChatCompletionStream(context.Background(), chatRequest("hi"))
	require.NoError(t, err)
	defer stream.Close()
	first, err := stream.Recv()
	require.NoError(t, err)
	firstAt := time.Since(start)
	assert.Equal(t, openai.ChatMessageRoleAssistant, first.Choices[0].Delta.Role)
	n := 1
	for ; ; n++ {
		if _, err := stream.Recv(); err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
	}
	total := time.Since(start)
	assert.Equal(t, 1+5+1, n, "role, five words, finish")
	assert.GreaterOrEqual(t, total, time.Duration(n)*chunkDelay, "a pause between events, [DONE] included")
	assert.Less(t, firstAt, total/2, "the first chunk did not wait for the rest")
}

func TestStreamDelayHoldsTheFirstByte(t *testing.T) {
	const latency, delay = 100 * time.Millisecond, 150 * time.Millisecond
	s := startServer(t, offline.Options{Latency: latency, Scripts: map[string][]offline.Reply{"a": {{Text: "late", Delay: wire.Duration(delay)}}}})
	start := time.Now()
	got := completeStream(t, newClient(s, "a"), chatRequest("hi"))
	assert.GreaterOrEqual(t, time.Since(start), latency+delay)
	assert.Equal(t, "[offline] a: late", got.text)
}

// An agent's chunk delay (Options.ChunkDelays) and a reply's own (Reply.ChunkDelay)
// pace the stream in place of the server's.
func TestStreamChunkDelayPerAgentAndPerReply(t *testing.T) {
	const agentDelay, replyDelay = 60 * time.Millisecond, 120 * time.Millisecond
	s := startServer(t, offline.Options{
		ChunkDelays: map[string]time.Duration{"slow": agentDelay},
		Scripts: map[string][]offline.Reply{"slow": {{Text: "one two three"}},
			"own": {{Text: "one two three", ChunkDelay: wire.Duration(replyDelay)}}, "fast": {{Text: "one two three"}}},
	})
	timed := func(agent string) time.Duration {
		start := time.Now()
		completeStream(t, newClient(s, agent), chatRequest("hi"))
		return time.Since(start)
	}
	const events = 1 + 5 + 1 + 1 // role, five words, finish, [DONE]
	assert.GreaterOrEqual(t, timed("slow"), time.Duration(events-1)*agentDelay)
	assert.GreaterOrEqual(t, timed("own"), time.Duration(events-1)*replyDelay)
	assert.Less(t, timed("fast"), agentDelay, "an agent without a delay streams at once")
}
