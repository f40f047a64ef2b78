package integration_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// RequireMCPEnv, set to 1 (as .ci/run does), makes a test whose third-party MCP server is
// not installed fail instead of skip.
const RequireMCPEnv = "AGENTCHAT_REQUIRE_MCP"

// everythingServer returns the entry point of @modelcontextprotocol/server-everything as
// integration/testdata/mcp pins it (npm ci there; scripts/test does).
func everythingServer(t *testing.T) string {
	path, err := filepath.Abs(filepath.Join("testdata", "mcp", "node_modules", "@modelcontextprotocol",
		"server-everything", "dist", "index.js"))
	require.NoError(t, err)
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("@modelcontextprotocol/server-everything is not installed (%v): run `npm ci` in integration/testdata/mcp "+
			"(scripts/test does)", err)
		if os.Getenv(RequireMCPEnv) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; " + RequireMCPEnv + "=1 makes this a failure")
	}
	return path
}

// toolMessage returns the tool result of call callID in req.
func toolMessage(req openai.ChatCompletionRequest, callID string) (openai.ChatCompletionMessage, bool) {
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleTool && m.ToolCallID == callID {
			return m, true
		}
	}
	return openai.ChatCompletionMessage{}, false
}

func toolNamesOf(req openai.ChatCompletionRequest) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

// A real third-party MCP server from npm over stdio: the worker starts it, lists its
// tools, offers them to the model as everything__TOOL with their schemas, and the
// model's scripted call reaches the server; its result reaches the next model request.
// The server's process gets the variable its env entry names, and not the worker's
// secrets.
func TestMCPToolsOfAThirdPartyStdioServer(t *testing.T) {
	entry := everythingServer(t)
	t.Setenv("AGENTCHAT_TEST_MCP_SECRET", "s3cret-value")
	t.Setenv("AGENTCHAT_TEST_OTHER_SECRET", "never-passed")
	script := []offline.Reply{
		{ToolCalls: []offline.ToolCall{{ID: "e1", Name: "everything__echo", Arguments: `{"message":"hello over stdio"}`},
			{ID: "s1", Name: "everything__get-sum", Arguments: `{"a":2,"b":40}`}}},
		{Text: "echoed"},
		{ToolCalls: []offline.ToolCall{{ID: "v1", Name: "everything__get-env", Arguments: `{}`}}},
		{Text: "read the environment"},
	}
	config := fmt.Sprintf(`
mcpServers:
  everything: {command: node, args: [%q, stdio], env: {PASSED_SECRET: AGENTCHAT_TEST_MCP_SECRET}, maxAttempts: 1}
agents:
  - {id: desk, name: Desk, model: offline, tools: [everything/*], call: {initialInterval: 50ms, maxAttempts: 4}}
`, entry)
	h := testenv.New(t, testenv.Options{Config: config, Model: offline.Options{Scripts: map[string][]offline.Reply{"desk": script}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"desk"}})
	require.NoError(t, err)

	res, err := h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m1", Text: "echo something"})
	require.NoError(t, err)
	require.NotEmpty(t, res.Messages)
	req, ok := h.Model.LastRequest("desk")
	require.True(t, ok)
	assert.Subset(t, toolNamesOf(req), []string{"everything__echo", "everything__get-sum", "everything__get-env"})
	for _, tool := range req.Tools {
		if tool.Function.Name == "everything__echo" {
			assert.Equal(t, "Echoes back the input string", tool.Function.Description)
			assert.Contains(t, fmt.Sprint(tool.Function.Parameters), "message", "the tool's input schema")
		}
	}
	echo, ok := toolMessage(req, "e1")
	require.True(t, ok, "the echo result reached the next model request")
	assert.Equal(t, "Echo: hello over stdio", echo.Content)
	sum, ok := toolMessage(req, "s1")
	require.True(t, ok)
	assert.Contains(t, sum.Content, "42")

	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m2", Text: "what is your environment?"})
	require.NoError(t, err)
	req, _ = h.Model.LastRequest("desk")
	env, ok := toolMessage(req, "v1")
	require.True(t, ok)
	assert.Contains(t, env.Content, "s3cret-value", "the variable its env entry names")
	assert.NotContains(t, env.Content, "never-passed", "a stdio server does not get the worker's whole environment")
}

// tickets is an MCP server built with the Go SDK, served over streamable HTTP in the
// test process.
type tickets struct {
	server *mcp.Server
	http   *httptest.Server

	mu       sync.Mutex
	keys     []string // the idempotency keys of the create_ticket calls
	auth     []string // the Authorization header of each request
	crashes  int      // how many calls of crash to abort mid-call
	crashed  int
	creating int
}

type ticketArgs struct {
	Title string `json:"title" jsonschema:"the ticket's title"`
}

func newTickets(t *testing.T) *tickets {
	tk := &tickets{server: mcp.NewServer(&mcp.Implementation{Name: "tickets", Version: "1"}, nil)}
	mcp.AddTool(tk.server, &mcp.Tool{Name: "create_ticket", Description: "Open a ticket"},
		func(ctx context.Context, req *mcp.CallToolRequest, in ticketArgs) (*mcp.CallToolResult, any, error) {
			tk.mu.Lock()
			defer tk.mu.Unlock()
			key, _ := req.Params.Meta[activities.IdempotencyKeyMeta].(string)
			tk.keys = append(tk.keys, key)
			tk.creating++
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("ticket T-%d: %s", tk.creating, in.Title)}}}, nil, nil
		})
	mcp.AddTool(tk.server, &mcp.Tool{Name: "close_ticket", Description: "Close a ticket"},
		func(ctx context.Context, req *mcp.CallToolRequest, in ticketArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no ticket titled " + in.Title}}}, nil, nil
		})
	mcp.AddTool(tk.server, &mcp.Tool{Name: "crash", Description: "Crash the server during the call"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			tk.mu.Lock()
			crash := tk.crashed < tk.crashes
			tk.crashed++
			tk.mu.Unlock()
			if crash {
				tk.http.CloseClientConnections() // the server dies with the call open
				return nil, nil, errors.New("crashed")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "still here"}}}, nil, nil
		})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return tk.server }, nil)
	tk.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tk.mu.Lock()
		tk.auth = append(tk.auth, r.Header.Get("Authorization"))
		tk.mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(tk.http.Close)
	return tk
}

func (tk *tickets) keysSeen() []string {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	return slices.Clone(tk.keys)
}

// An MCP server built with the Go SDK over streamable HTTP: a call of a tool that needs
// approval waits for a person, runs once approved with the call's idempotency key in
// _meta and the header from the variable headersEnv names, and its result reaches the
// next model request; an error result (isError) and a refused call (unknown tool) are
// error results the model reads; a server that dies mid-call gives a clear error result,
// after which the next call succeeds; a tool the server adds later (list_changed) is
// offered to the chats that start after it, not to one that started before (it holds
// the tools it resolved, and could not run the new one).
func TestMCPToolsOfAStreamableHTTPServer(t *testing.T) {
	tk := newTickets(t)
	tk.crashes = 1
	t.Setenv("AGENTCHAT_TEST_TICKETS_TOKEN", "Bearer tk-123")
	script := []offline.Reply{
		{ToolCalls: []offline.ToolCall{{ID: "t1", Name: "tickets__create_ticket", Arguments: `{"title":"printer on fire"}`}}},
		{Text: "opened"},
		{ToolCalls: []offline.ToolCall{{ID: "x1", Name: "tickets__crash", Arguments: `{}`}}},
		{ToolCalls: []offline.ToolCall{{ID: "x2", Name: "tickets__crash", Arguments: `{}`},
			{ID: "c1", Name: "tickets__close_ticket", Arguments: `{"title":"none"}`}}},
		{Text: "recovered"},
	}
	config := fmt.Sprintf(`
mcpServers:
  tickets: {url: %q, headersEnv: {Authorization: AGENTCHAT_TEST_TICKETS_TOKEN}, maxAttempts: 1, timeout: 20s}
agents:
  - {id: desk, name: Desk, model: offline, tools: [tickets/*], approval: [tickets/create_ticket], call: {initialInterval: 50ms, maxAttempts: 4}}
`, tk.http.URL)
	h := testenv.New(t, testenv.Options{Config: config, Model: offline.Options{Scripts: map[string][]offline.Reply{"desk": script}}})
	id := testenv.ChatID(t)
	st, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"desk"}})
	require.NoError(t, err)
	_ = st

	res, err := h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m1", Text: "open a ticket"})
	require.NoError(t, err)
	require.Len(t, res.AwaitingApproval, 1, "create_ticket waits for a person")
	assert.Equal(t, wire.PendingApproval{CallID: "t1", Tool: "tickets__create_ticket", Arguments: `{"title":"printer on fire"}`,
		AgentID: "desk", TurnID: "m1"}, res.AwaitingApproval[0])
	assert.Empty(t, tk.keysSeen(), "nothing ran before the approval")

	res, err = h.Client.Approve(ctxFor(t), id, agentchat.ApproveInput{CallID: "t1", Approved: true, By: "ops"})
	require.NoError(t, err)
	require.NotEmpty(t, res.Messages)
	assert.Equal(t, []string{activities.IdempotencyKey(id, "t1")}, tk.keysSeen(), "the call's idempotency key in _meta")
	req, _ := h.Model.LastRequest("desk")
	created, ok := toolMessage(req, "t1")
	require.True(t, ok)
	assert.Equal(t, "ticket T-1: printer on fire", created.Content)
	tk.mu.Lock()
	assert.Contains(t, tk.auth, "Bearer tk-123", "the header from the variable headersEnv names")
	tk.mu.Unlock()

	start := time.Now()
	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m2", Text: "crash it"})
	require.NoError(t, err, "a server that dies mid-call does not fail the turn")
	assert.Less(t, time.Since(start), 15*time.Second, "the dead server's call ends before its timeout")
	req, _ = h.Model.LastRequest("desk")
	var crashed chat.Content
	for _, m := range req.Messages {
		if m.ToolCallID == "x1" {
			crashed = chat.Content{Result: m.Content}
		}
	}
	assert.Contains(t, crashed.Result, `MCP server "tickets" went away during the call of tool "crash"`)
	again, ok := toolMessage(req, "x2")
	require.True(t, ok)
	assert.Equal(t, "still here", again.Content, "the next call reaches the server again")
	closed, ok := toolMessage(req, "c1")
	require.True(t, ok)
	assert.Contains(t, closed.Content, "no ticket titled none", "an error result (isError) reaches the model")
	assert.Contains(t, closed.Content, "failed")

	doc, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	assert.NotContains(t, string(doc), "tk-123", "no header value reaches a document")
	assert.NotContains(t, string(doc), "AGENTCHAT_TEST_TICKETS_TOKEN")
	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	histJSON, err := json.Marshal(hist)
	require.NoError(t, err)
	assert.NotContains(t, string(histJSON), "tk-123", "nor the history")
	seenSchema := false // the tools' schemas do reach it: the check reads payloads
	events := h.Temporal.GetWorkflowHistory(ctxFor(t), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for events.HasNext() {
		ev, err := events.Next()
		require.NoError(t, err)
		b, err := proto.Marshal(ev) // payloads as their raw JSON bytes
		require.NoError(t, err)
		require.NotContains(t, string(b), "tk-123", "nor the workflow's event history")
		seenSchema = seenSchema || strings.Contains(string(b), "the ticket's title")
	}
	assert.True(t, seenSchema, "the participant's ToolSpecs carry the MCP tools' schemas")

	mcp.AddTool(tk.server, &mcp.Tool{Name: "escalate", Description: "Escalate a ticket"},
		func(ctx context.Context, req *mcp.CallToolRequest, in ticketArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "escalated"}}}, nil, nil
		})
	n := 0
	require.Eventually(t, func() bool { // a chat started after the change resolves the new tool
		n++
		later := fmt.Sprintf("%s-later-%d", id, n)
		_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: later, Participants: []string{"desk"}})
		require.NoError(t, err)
		_, err = h.Client.Send(ctxFor(t), later, agentchat.SendMessageInput{MessageID: "m1", Text: "anything new?"})
		require.NoError(t, err)
		req, _ := h.Model.LastRequest("desk")
		return slices.Contains(toolNamesOf(req), "tickets__escalate")
	}, 20*time.Second, 200*time.Millisecond, "a tool the server adds reaches the model after notifications/tools/list_changed")
	// The chat started before it is not offered the tool: it resolved its tools when it
	// started and could not run one it does not hold, so the model sees only those.
	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m9", Text: "and now?"})
	require.NoError(t, err)
	req, _ = h.Model.LastRequest("desk")
	assert.NotContains(t, toolNamesOf(req), "tickets__escalate", "offered only what the chat can call")
	assert.Contains(t, toolNamesOf(req), "tickets__create_ticket")
}

// A server that cannot be reached when the worker starts is a clear error at start; so
// is an agent's tool that the server does not offer.
func TestMCPServerErrorsAtWorkerStart(t *testing.T) {
	tk := newTickets(t)
	for name, c := range map[string]struct{ config, want string }{
		"unreachable": {`mcpServers: {gone: {url: "http://127.0.0.1:1/mcp"}}
agents: [{id: desk, model: offline, tools: [gone/*]}]`, `MCP server "gone"`},
		"no such tool": {fmt.Sprintf(`mcpServers: {tickets: {url: %q}}
agents: [{id: desk, model: offline, tools: [tickets/delete_everything]}]`, tk.http.URL), `which MCP server "tickets" does not offer`},
		"no such program": {`mcpServers: {nothing: {command: /nonexistent/mcp-server}}
agents: [{id: desk, model: offline, tools: [nothing/*]}]`, `MCP server "nothing"`},
	} {
		t.Run(name, func(t *testing.T) {
			reg, err := registryOf(c.config)
			require.NoError(t, err)
			_, err = activities.New(activities.Config{Registry: reg,
				Models: activities.ModelConfig{BaseURLOverride: "http://127.0.0.1:1/v1"},
			})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.False(t, strings.Contains(err.Error(), "panic"))
		})
	}
}

// registryOf parses an agent config.
func registryOf(config string) (*agents.Registry, error) {
	cfg, err := agents.ParseConfig([]byte(config))
	if err != nil {
		return nil, err
	}
	return agents.NewRegistry(cfg), nil
}

// A stdio server that exits in the middle of a call: with one attempt the model reads a
// clear error result, and the next call starts the server again (a new process); with
// two attempts the retry starts it again and the call succeeds.
func TestMCPStdioServerThatExitsIsStartedAgain(t *testing.T) {
	bin := testenv.Binary(t, "github.com/agentchat/agentchat/internal/mcptest/stdioserver")
	once := filepath.Join(t.TempDir(), "exited-once")
	t.Setenv("AGENTCHAT_TEST_STDIOSERVER_ONCE", once)
	script := []offline.Reply{
		{ToolCalls: []offline.ToolCall{{ID: "p1", Name: "fragile__pid", Arguments: `{}`}}},
		{ToolCalls: []offline.ToolCall{{ID: "x1", Name: "fragile__exit", Arguments: `{}`}}},
		{ToolCalls: []offline.ToolCall{{ID: "p2", Name: "fragile__pid", Arguments: `{}`}}},
		{Text: "first turn done"},
		{ToolCalls: []offline.ToolCall{{ID: "y1", Name: "sturdy__exit", Arguments: `{}`}}},
		{Text: "second turn done"},
	}
	config := fmt.Sprintf(`
mcpServers:
  fragile: {command: %q, maxAttempts: 1}
  sturdy: {command: %q, env: {STDIOSERVER_ONCE: AGENTCHAT_TEST_STDIOSERVER_ONCE}, maxAttempts: 2}
agents:
  - {id: desk, name: Desk, model: offline, tools: [fragile/*, sturdy/exit], call: {initialInterval: 50ms, maxAttempts: 4}}
`, bin, bin)
	h := testenv.New(t, testenv.Options{Config: config, Model: offline.Options{Scripts: map[string][]offline.Reply{"desk": script}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"desk"}})
	require.NoError(t, err)

	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m1", Text: "go"})
	require.NoError(t, err)
	req, _ := h.Model.LastRequest("desk")
	p1, ok := toolMessage(req, "p1")
	require.True(t, ok)
	exited, ok := toolMessage(req, "x1")
	require.True(t, ok)
	assert.Contains(t, exited.Content, `MCP server "fragile" went away during the call of tool "exit"`)
	p2, ok := toolMessage(req, "p2")
	require.True(t, ok)
	assert.NotEqual(t, p1.Content, p2.Content, "the server was started again: a new process")
	assert.NotContains(t, p2.Content, "error")

	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m2", Text: "again"})
	require.NoError(t, err)
	req, _ = h.Model.LastRequest("desk")
	retried, ok := toolMessage(req, "y1")
	require.True(t, ok)
	assert.Contains(t, retried.Content, "survived", "the retry ran on a server started again")
}
