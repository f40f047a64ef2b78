package chatmcp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/internal/chatmcp"
)

const initializeLine = `{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`

// answerStep is one request and what it must answer: a result (code 0), or a
// JSON-RPC error with code whose message contains every word of says.
type answerStep struct {
	kind string
	line string // %s is the id
	code int64
	says []string
}

// sessionSteps walk a session's error paths from its start: requests before
// initialize, an initialize that fails, the session's initialize, a second one, then
// unknown methods, bad params and bad messages.
var sessionSteps = []answerStep{
	{kind: "ping before initialize", line: `{"jsonrpc":"2.0","id":%s,"method":"ping"}`},
	{"tools/list before initialize", `{"jsonrpc":"2.0","id":%s,"method":"tools/list"}`, codeInvalidRequest, []string{"tools/list", "initialize first"}},
	{"tools/call before initialize", `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"get_state","arguments":{"chatId":"c"}}}`,
		codeInvalidRequest, []string{"tools/call", "initialize first"}},
	{"unknown method before initialize", `{"jsonrpc":"2.0","id":%s,"method":"no/such"}`, codeMethodNotFound, nil},
	{"initialize with params of the wrong type", `{"jsonrpc":"2.0","id":%s,"method":"initialize","params":5}`, codeInvalidParams, []string{"initialize"}},
	{"initialize with a field of the wrong type", `{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":5}}`, codeInvalidParams, nil},
	{"tools/list after a failed initialize", `{"jsonrpc":"2.0","id":%s,"method":"tools/list"}`, codeInvalidRequest, []string{"initialize first"}},
	{kind: "initialize", line: initializeLine},
	{"initialize again", initializeLine, codeInvalidRequest, []string{"initialize", "already"}},
	{"unknown method", `{"jsonrpc":"2.0","id":%s,"method":"no/such"}`, codeMethodNotFound, nil},
	{"tools/list params", `{"jsonrpc":"2.0","id":%s,"method":"tools/list","params":5}`, codeInvalidParams, nil},
	{"tools/list cursor", `{"jsonrpc":"2.0","id":%s,"method":"tools/list","params":{"cursor":"garbage"}}`, codeInvalidParams, nil},
	{"unknown tool", `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`, codeInvalidParams, nil},
	{"tool arguments", `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"get_state","arguments":{"chatId":5}}}`, codeInvalidParams, nil},
	{"unknown prompt", `{"jsonrpc":"2.0","id":%s,"method":"prompts/get","params":{"name":"x"}}`, codeInvalidParams, nil},
	{"unknown resource", `{"jsonrpc":"2.0","id":%s,"method":"resources/read","params":{"uri":"x:y"}}`, codeInvalidParams, nil},
	{"call without its params", `{"jsonrpc":"2.0","id":%s,"method":"tools/call"}`, codeInvalidRequest, nil},
	{"no version", `{"id":%s,"method":"ping"}`, codeInvalidRequest, nil},
	{kind: "tools/list", line: `{"jsonrpc":"2.0","id":%s,"method":"tools/list"}`},
}

// checkStep asserts that got answers step, sent with id.
func checkStep(t *testing.T, step answerStep, id string, got rpcAnswer) {
	t.Helper()
	assert.JSONEq(t, id, string(got.ID), step.kind)
	if step.code == 0 {
		assert.Nil(t, got.Error, "%s: %+v", step.kind, got.Error)
		return
	}
	if !assert.NotNil(t, got.Error, "%s: no error", step.kind) {
		return
	}
	assert.NotZero(t, got.Error.Code, "%s: an error without a code: %s", step.kind, got.Error.Message)
	assert.Equal(t, step.code, got.Error.Code, "%s: %s", step.kind, got.Error.Message)
	for _, s := range step.says {
		assert.Contains(t, got.Error.Message, s, step.kind)
	}
}

// Over stdio, every error a session answers has a JSON-RPC 2.0 code: a request
// before initialize gets -32600 and is told to send initialize first, an initialize
// whose params do not decode -32602, a second initialize -32600.
func TestStdioErrorsHaveACode(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		_ = chatmcp.NewServer(nil, "test").Run(t.Context(), &chatmcp.LineTransport{In: inR, Out: outW})
	}()
	t.Cleanup(func() { _ = inW.Close() })
	c := newLineClient(t, inW, outR)
	for i, step := range sessionSteps {
		id := fmt.Sprint(i + 1)
		c.send(fmt.Sprintf(step.line, id))
		checkStep(t, step, id, c.next())
	}
}

// Over streamable HTTP, the same: a request in a new session (no Mcp-Session-Id) gets
// -32600, a failed initialize -32602, a second initialize -32600.
func TestStreamableHTTPErrorsHaveACode(t *testing.T) {
	addr, stop, err := chatmcp.Listen("127.0.0.1:0", chatmcp.NewServer(nil, "test"), chatmcp.ListenOptions{}, slog.Default())
	require.NoError(t, err)
	t.Cleanup(stop)
	url := "http://" + addr + chatmcp.Path
	sid := "" // until initialize succeeds, each request opens a new session
	for i, step := range sessionSteps {
		id := fmt.Sprint(i + 1)
		a, newSID := postSession(t, url, sid, fmt.Sprintf(step.line, id))
		require.NotNil(t, a, "%s: no JSON-RPC answer", step.kind)
		checkStep(t, step, id, *a)
		if step.kind == "initialize" {
			require.NotEmpty(t, newSID, "no Mcp-Session-Id")
			sid = newSID
		}
	}
}

// postSession posts body in session sid ("" for none) and returns the JSON-RPC
// answer and the session id the server named.
func postSession(t *testing.T, url, sid, body string) (*rpcAnswer, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	data := strings.TrimSpace(string(raw))
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		data = ""
		for _, line := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = d
			}
		}
	}
	if data == "" {
		return nil, res.Header.Get("Mcp-Session-Id")
	}
	var a rpcAnswer
	require.NoError(t, json.Unmarshal([]byte(data), &a), "status %d, not JSON-RPC: %s", res.StatusCode, raw)
	return &a, res.Header.Get("Mcp-Session-Id")
}
