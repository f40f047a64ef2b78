package chatmcp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/chatmcp"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const clerkConfig = `
tools:
  refund: {approval: true}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [refund], call: {initialInterval: 50ms, maxAttempts: 4}}
`

var clerkScript = []offline.Reply{
	{Text: "How can I help?"},
	{ToolCalls: []offline.ToolCall{{ID: "r1", Name: "refund", Arguments: `{"order":"1001"}`}}},
	{Text: "Refunded."},
}

// call calls tool with args and returns its text; an error result fails the test.
func call(t *testing.T, s *mcp.ClientSession, tool string, args any) (string, *mcp.CallToolResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	require.False(t, res.IsError, "%s: %s", tool, strings.Join(text, "\n"))
	return strings.Join(text, "\n"), res
}

// driveChat runs a chat through every tool of the server: start, two turns (the second
// waits for an approval), state, approve_call, history, export.
func driveChat(t *testing.T, s *mcp.ClientSession) {
	tools := map[string]bool{}
	for tool, err := range s.Tools(context.Background(), nil) {
		require.NoError(t, err)
		tools[tool.Name] = true
	}
	assert.Equal(t, map[string]bool{"start_chat": true, "send_message": true, "get_state": true, "get_history": true,
		"export_chat": true, "approve_call": true}, tools)

	id := testenv.ChatID(t)
	text, _ := call(t, s, chatmcp.StartChatTool, map[string]any{"chatId": id, "agents": []string{"clerk"}})
	var st agentchat.StateResult
	require.NoError(t, json.Unmarshal([]byte(text), &st))
	assert.Equal(t, id, st.ChatID)

	text, _ = call(t, s, chatmcp.SendMessageTool, map[string]any{"chatId": id, "text": "hello"})
	assert.Equal(t, "Clerk: [offline] clerk: How can I help?", text)
	text, _ = call(t, s, chatmcp.SendMessageTool, map[string]any{"chatId": id, "text": "refund order 1001"})
	assert.Equal(t, `awaiting approval: call r1: refund({"order":"1001"})`, text)

	text, _ = call(t, s, chatmcp.GetStateTool, map[string]any{"chatId": id})
	require.NoError(t, json.Unmarshal([]byte(text), &st))
	require.Len(t, st.PendingApprovals, 1)
	assert.Equal(t, "r1", st.PendingApprovals[0].CallID)

	text, res := call(t, s, chatmcp.ApproveCallTool, map[string]any{"chatId": id, "callId": "r1", "approved": true, "reason": "ok"})
	assert.Equal(t, "Clerk: [offline] clerk: Refunded.", text)
	assert.NotNil(t, res.StructuredContent, "the whole turn result as structured content")

	text, _ = call(t, s, chatmcp.GetHistoryTool, map[string]any{"chatId": id})
	var hist agentchat.HistoryResult
	require.NoError(t, json.Unmarshal([]byte(text), &hist))
	require.Equal(t, 6, hist.Total, "two user turns, a reply, the call, its result, the last reply")
	assert.Equal(t, "hello", hist.Messages[0].Text())
	assert.Equal(t, "[offline] clerk: Refunded.", hist.Messages[5].Text())

	text, res = call(t, s, chatmcp.ExportChatTool, map[string]any{"chatId": id})
	doc, _, err := chatstate.Decode([]byte(text))
	require.NoError(t, err, "export_chat returns a valid chat-state document")
	assert.Len(t, doc.History, 6)
	assert.NotEmpty(t, res.Meta["digest"])

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bad, err := s.CallTool(ctx, &mcp.CallToolParams{Name: chatmcp.GetStateTool, Arguments: map[string]any{"chatId": "no-such-chat-" + id}})
	require.NoError(t, err)
	assert.True(t, bad.IsError, "an unknown chat is an error result")
}

// The chat tools over the server code `starter mcp` runs, driven by the Go SDK's
// client over an in-memory transport.
func TestChatToolsOverMCP(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: clerkConfig, Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": clerkScript}}})
	serverT, clientT := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = chatmcp.NewServer(h.Client, "test").Run(ctx, serverT) }()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, clientT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	driveChat(t, s)
}

// The same tools over streamable HTTP, as worker --mcp-listen serves them (Listen).
func TestChatToolsOverStreamableHTTP(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: clerkConfig, Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": clerkScript}}})
	addr, stop, err := chatmcp.Listen("127.0.0.1:0", chatmcp.NewServer(h.Client, "test"), slog.Default())
	require.NoError(t, err)
	t.Cleanup(stop)
	s, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + addr + chatmcp.Path}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	driveChat(t, s)
}

// The starter's own command, `starter mcp`, started by the Go SDK's client over stdio
// (its command transport), as an MCP client such as a desktop assistant starts it.
func TestStarterMCPCommand(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: clerkConfig, Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": clerkScript}}})
	cmd := exec.Command(testenv.Binary(t, "github.com/agentchat/agentchat/starter"), "mcp",
		"--address", testenv.Address(t), "--task-queue", h.TaskQueue)
	s, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	driveChat(t, s)
}

// The worker command with --mcp-listen serves the same tools over streamable HTTP.
func TestWorkerMCPListen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	script, err := json.Marshal(map[string]any{"replies": clerkScript})
	require.NoError(t, err)
	tq := testenv.TaskQueue(t)
	testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq, Args: []string{"--offline", "--mcp-listen", addr},
		Config: strings.Replace(clerkConfig, "maxAttempts: 4}}", "maxAttempts: 4}, offline: "+string(script)+"}", 1)})
	s, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + addr + chatmcp.Path}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	driveChat(t, s)
}
