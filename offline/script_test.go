package offline_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

func TestScriptsAreCopied(t *testing.T) {
	scripts := map[string][]offline.Reply{"a": {{Text: "original"}}}
	s := startServer(t, offline.Options{Scripts: scripts})
	scripts["a"][0].Text = "changed"
	scripts["b"] = []offline.Reply{{Text: "added"}}
	assert.Equal(t, "[offline] a: original", complete(t, newClient(s, "a"), chatRequest("x")).Choices[0].Message.Content)
	assert.True(t, strings.HasPrefix(complete(t, newClient(s, "b"), chatRequest("x")).Choices[0].Message.Content, "[offline] b received"))
}

func TestSetScriptReplacesTheScriptAndResetsTheCounter(t *testing.T) {
	s := startServer(t, offline.Options{})
	c := newClient(s, "a")
	complete(t, c, chatRequest("x"))
	complete(t, c, chatRequest("x"))
	require.Equal(t, 2, s.Requests("a"))

	replies := []offline.Reply{{Text: "one"}, {Text: "two"}}
	s.SetScript("a", replies)
	replies[0].Text = "changed"
	assert.Equal(t, 0, s.Requests("a"))
	assert.Equal(t, 2, s.TotalRequests(), "the total is not reset")
	assert.Equal(t, "[offline] a: one", complete(t, c, chatRequest("x")).Choices[0].Message.Content)
	assert.Equal(t, "[offline] a: two", complete(t, c, chatRequest("x")).Choices[0].Message.Content)

	s.SetScript("a", nil)
	assert.True(t, strings.HasPrefix(complete(t, c, chatRequest("x")).Choices[0].Message.Content, "[offline] a received"))
	assert.Equal(t, 1, s.Requests("a"))
}

func TestLastRequestIsTheDecodedBody(t *testing.T) {
	s := startServer(t, offline.Options{})
	_, ok := s.LastRequest("a")
	assert.False(t, ok)

	c := newClient(s, "a")
	complete(t, c, chatRequest("first"))
	req := chatRequest("second", "answer", "third")
	req.Model = "gpt-x"
	req.Temperature = 0.5
	req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "lookup"}}}
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	completeStream(t, c, req)

	got, ok := s.LastRequest("a")
	require.True(t, ok)
	assert.True(t, got.Stream)
	assert.Equal(t, "gpt-x", got.Model)
	assert.Equal(t, float32(0.5), got.Temperature)
	require.Len(t, got.Tools, 1)
	assert.Equal(t, "lookup", got.Tools[0].Function.Name)
	require.NotNil(t, got.StreamOptions)
	assert.True(t, got.StreamOptions.IncludeUsage)
	assert.Equal(t, req.Messages, got.Messages)

	got.Messages[0].Content = "mutated"
	again, _ := s.LastRequest("a")
	assert.Equal(t, "second", again.Messages[0].Content, "callers get a copy")
	_, ok = s.LastRequest("b")
	assert.False(t, ok)
}

// TestConcurrentAgentsAreCountedApart runs several agents at once (run with -race): each
// gets every reply of its own script exactly once, and its own count and last request.
func TestConcurrentAgentsAreCountedApart(t *testing.T) {
	const agents, perAgent = 4, 15
	scripts := map[string][]offline.Reply{}
	for a := range agents {
		agent := fmt.Sprintf("agent-%d", a)
		for i := range perAgent {
			scripts[agent] = append(scripts[agent], offline.Reply{Text: fmt.Sprintf("reply %d", i)})
		}
	}
	s := startServer(t, offline.Options{Scripts: scripts})

	var mu sync.Mutex
	got := map[string][]string{}
	var wg sync.WaitGroup
	for a := range agents {
		agent := fmt.Sprintf("agent-%d", a)
		c := newClient(s, agent)
		for i := range perAgent {
			wg.Go(func() {
				req := chatRequest(fmt.Sprintf("%s says %d", agent, i))
				var text string
				if i%2 == 0 {
					text = completeStream(t, c, req).text
				} else {
					text = complete(t, c, req).Choices[0].Message.Content
				}
				_ = s.Requests(agent) // read while others write
				mu.Lock()
				got[agent] = append(got[agent], text)
				mu.Unlock()
			})
		}
	}
	wg.Wait()

	assert.Equal(t, agents*perAgent, s.TotalRequests())
	for a := range agents {
		agent := fmt.Sprintf("agent-%d", a)
		assert.Equal(t, perAgent, s.Requests(agent))
		var want []string
		for i := range perAgent {
			want = append(want, fmt.Sprintf("[offline] %s: reply %d", agent, i))
		}
		assert.ElementsMatch(t, want, got[agent], agent)
		last, ok := s.LastRequest(agent)
		require.True(t, ok)
		assert.True(t, strings.HasPrefix(last.Messages[0].Content, agent+" says "), last.Messages[0].Content)
	}
}

// Each chat follows an agent's script from its start: a worker's second chat gets the
// same scripted conversation as its first.
func TestScriptsRunPerChat(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{"a": {{Text: "one"}, {Text: "two"}}}})
	ask := func(chat string) string {
		req, err := http.NewRequest(http.MethodPost, s.URL()+"/chat/completions",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		require.NoError(t, err)
		req.Header.Set(offline.AgentHeader, "a")
		req.Header.Set(wire.ChatHeader, chat)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out openai.ChatCompletionResponse
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return out.Choices[0].Message.Content
	}
	assert.Equal(t, "[offline] a: one", ask("c1"))
	assert.Equal(t, "[offline] a: one", ask("c2"))
	assert.Equal(t, "[offline] a: two", ask("c1"))
	assert.Equal(t, 3, s.Requests("a"))
}
