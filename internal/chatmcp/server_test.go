package chatmcp_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentchat/agentchat/internal/syncbuf"

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
		"export_chat": true, "approve_call": true, "list_chats": true}, tools)

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

	// list_chats finds it (visibility lags a moment behind).
	require.Eventually(t, func() bool {
		text, _ = call(t, s, chatmcp.ListChatsTool, map[string]any{"status": "running", "pageSize": 50})
		var page agentchat.ListResult
		require.NoError(t, json.Unmarshal([]byte(text), &page))
		for _, c := range page.Chats {
			if c.ChatID == id {
				return true
			}
		}
		return false
	}, 20*time.Second, 200*time.Millisecond, "list_chats: %s", text)

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

// The same tools over streamable HTTP, as worker --mcp-listen serves them (Listen),
// for a client that sends the bearer token.
func TestChatToolsOverStreamableHTTP(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: clerkConfig, Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": clerkScript}}})
	addr, stop, err := chatmcp.Listen("127.0.0.1:0", chatmcp.NewServer(h.Client, "test"), chatmcp.ListenOptions{Token: "t0ken"}, slog.Default())
	require.NoError(t, err)
	t.Cleanup(stop)
	driveChat(t, connectHTTP(t, addr, "t0ken"))
}

// connectHTTP connects an MCP client over streamable HTTP to addr, sending token as
// a bearer token ("" sends none).
func connectHTTP(t *testing.T, addr, token string) *mcp.ClientSession {
	t.Helper()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + addr + chatmcp.Path, HTTPClient: bearerClient(token)}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// bearerClient is an HTTP client that sends Authorization: Bearer token ("" sends none).
func bearerClient(token string) *http.Client {
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		if token != "" {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+token)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// With a token, a request without it, with another, or with the token in another
// scheme gets 401 and a Bearer challenge (RFC 6750), and reaches no tool; the MCP
// client's connect fails.
func TestStreamableHTTPRefusesRequestsWithoutTheToken(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: clerkConfig, Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": clerkScript}}})
	var logged syncbuf.Buffer
	addr, stop, err := chatmcp.Listen("127.0.0.1:0", chatmcp.NewServer(h.Client, "test"), chatmcp.ListenOptions{Token: "t0ken"},
		slog.New(slog.NewTextHandler(&logged, nil)))
	require.NoError(t, err)
	t.Cleanup(stop)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
	for name, auth := range map[string]string{"none": "", "another token": "Bearer t0kem", "a prefix": "Bearer t0ke",
		"a longer one": "Bearer t0ken2", "basic": "Basic t0ken", "no scheme": "t0ken", "empty bearer": "Bearer "} {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, "http://"+addr+chatmcp.Path, strings.NewReader(initialize))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "%s", body)
			challenge := res.Header.Get("WWW-Authenticate")
			assert.True(t, strings.HasPrefix(challenge, "Bearer "), "challenge %q", challenge)
			assert.Equal(t, strings.HasPrefix(strings.ToLower(auth), "bearer "), strings.Contains(challenge, `error="invalid_token"`),
				"a bearer token sent is invalid_token (RFC 6750 §3.1), none sent has no error code: %q", challenge)
			assert.NotContains(t, string(body), "t0ken", "the answer repeats the token")
		})
	}
	_, err = mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + addr + chatmcp.Path, HTTPClient: bearerClient("wrong")}, nil)
	require.Error(t, err, "a client with the wrong token connected")
	log := logged.String()
	assert.Contains(t, log, "MCP request refused")
	assert.Contains(t, log, "not the Bearer scheme")
	assert.NotContains(t, log, "t0ken", "a refusal's log line holds the token sent")

	// The scheme is case-insensitive (RFC 7235), and a configured token's white space
	// (a newline from a file) is trimmed.
	addr2, stop2, err := chatmcp.Listen("127.0.0.1:0", chatmcp.NewServer(h.Client, "test"), chatmcp.ListenOptions{Token: "t0ken\n"}, slog.Default())
	require.NoError(t, err)
	t.Cleanup(stop2)
	req, err := http.NewRequest(http.MethodPost, "http://"+addr2+chatmcp.Path, strings.NewReader(initialize))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "bearer t0ken")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
}

// Without a token, Listen serves loopback addresses only: an address other hosts can
// reach (all interfaces, a non-loopback IP, a host name other than localhost) is
// refused with an error that says how to set one.
func TestListenBeyondLoopbackNeedsAToken(t *testing.T) {
	s := chatmcp.NewServer(nil, "test")
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.1:0", "example.com:0"} {
		_, _, err := chatmcp.Listen(addr, s, chatmcp.ListenOptions{}, slog.Default())
		require.Error(t, err, addr)
		assert.Contains(t, err.Error(), chatmcp.TokenEnv, addr)
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		got, stop, err := chatmcp.Listen(addr, s, chatmcp.ListenOptions{}, slog.Default())
		require.NoError(t, err, addr)
		stop()
		host, _, err := net.SplitHostPort(got)
		require.NoError(t, err)
		assert.True(t, net.ParseIP(host).IsLoopback(), "%s listens on %s", addr, got)
	}
	_, _, err := chatmcp.Listen("not an address", s, chatmcp.ListenOptions{}, slog.Default())
	require.Error(t, err)
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

// The worker command with --mcp-listen serves the same tools over streamable HTTP,
// to clients with the token of $AGENTCHAT_MCP_TOKEN.
func TestWorkerMCPListen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	script, err := json.Marshal(map[string]any{"replies": clerkScript})
	require.NoError(t, err)
	tq := testenv.TaskQueue(t)
	testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq, Args: []string{"--offline", "--mcp-listen", addr},
		Env:    []string{chatmcp.TokenEnv + "=w0rker-token"},
		Config: strings.Replace(clerkConfig, "maxAttempts: 4}}", "maxAttempts: 4}, offline: "+string(script)+"}", 1)})
	require.Eventually(t, func() bool {
		res, err := http.Post("http://"+addr+chatmcp.Path, "application/json", strings.NewReader("{}"))
		if err != nil {
			return false
		}
		_ = res.Body.Close()
		return res.StatusCode == http.StatusUnauthorized
	}, time.Minute, 100*time.Millisecond, "the worker's MCP endpoint does not ask for the token")
	driveChat(t, connectHTTP(t, addr, "w0rker-token"))
}

// The worker refuses --mcp-listen on an address other hosts reach when
// $AGENTCHAT_MCP_TOKEN is not set, and says how to set it.
func TestWorkerMCPListenBeyondLoopbackNeedsAToken(t *testing.T) {
	cmd := exec.Command(testenv.Binary(t, "github.com/agentchat/agentchat/worker"), "--offline",
		"--address", testenv.Address(t), "--task-queue", testenv.TaskQueue(t), "--mcp-listen", "0.0.0.0:0")
	cmd.Env = append(os.Environ(), chatmcp.TokenEnv+"=")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), chatmcp.TokenEnv)
}
