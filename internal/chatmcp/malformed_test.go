package chatmcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/internal/chatmcp"
	"github.com/agentchat/agentchat/internal/syncbuf"
	"github.com/agentchat/agentchat/internal/testenv"
)

// badInput is one generated input that is not a call the server can serve, and what
// it must answer: a JSON-RPC error with code, for the input's id (idJSON, raw JSON;
// "null" when it has none). A notification (code 0) gets no answer at all.
type badInput struct {
	kind   string
	line   string
	code   int64
	idJSON string
}

const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// malformedInputs generates n inputs from r: text that is not JSON, JSON that is not
// a JSON-RPC message, unknown methods, params and tool names of the wrong type or
// value, notifications of unknown methods, responses nobody asked for. batches says
// whether a JSON array of valid messages is passed on (HTTP) or refused (stdio).
func malformedInputs(r *rand.Rand, n int, batches bool) []badInput {
	out := make([]badInput, 0, n)
	for len(out) < n {
		id := fmt.Sprint(1000 + len(out))
		if r.IntN(2) == 0 {
			id = fmt.Sprintf("%q", fmt.Sprintf("s-%d-%s", len(out), word(r)))
		}
		var in badInput
		switch r.IntN(8) {
		case 0:
			in = notJSON(r, id)
		case 1:
			in = notAMessage(r, id)
		case 2:
			in = badInput{"unknown method", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q}`, id, word(r)+"/"+word(r)),
				codeMethodNotFound, id}
		case 3:
			in = badParams(r, id)
		case 4: // no answer is due to a notification, known or not, nor to a response
			in = pick(r, []badInput{
				{kind: "unknown notification", line: fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/%s"}`, word(r))},
				{kind: "notification with bad params", line: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":` + wrongJSON(r) + `}`},
				{kind: "unasked response", line: fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id)},
				{kind: "unasked error", line: fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":1,"message":"x"}}`, id)},
			})
		case 5:
			in = badInput{"batch", fmt.Sprintf(`[{"jsonrpc":"2.0","id":%s,"method":"ping"}, %s]`, id, wrongJSON(r)), codeInvalidRequest, "null"}
			if batches && r.IntN(2) == 0 {
				in.line = fmt.Sprintf(`[{"jsonrpc":"2.0","id":%s,"method":"ping"}, 7]`, id)
			}
			if !batches && r.IntN(2) == 0 {
				in.line = fmt.Sprintf(`[{"jsonrpc":"2.0","id":%s,"method":"ping"}]`, id)
			}
		case 6:
			in = pick(r, []badInput{
				{"call without its params", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q}`, id,
					pick(r, []string{"tools/call", "initialize", "resources/read"})), codeInvalidRequest, id},
				{"notification sent with an id", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"notifications/initialized"}`, id),
					codeInvalidRequest, id},
			})
		default:
			in = badInput{"empty batch", `[]`, codeInvalidRequest, "null"}
		}
		out = append(out, in)
	}
	return out
}

// notJSON mutates a valid request into text that is not JSON (cut short, a byte
// replaced, garbage appended, a bare word).
func notJSON(r *rand.Rand, id string) badInput {
	valid := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/list"}`, id)
	for {
		var s string
		switch r.IntN(5) {
		case 0:
			s = valid[:1+r.IntN(len(valid)-1)]
		case 1:
			i := r.IntN(len(valid))
			s = valid[:i] + string("{}[]:,\"tfn\\x\x00 \x7f"[r.IntN(15)]) + valid[i+1:]
		case 2:
			s = valid + " " + pick(r, []string{"x", "{", valid, "]", `"`})
		case 3:
			s = pick(r, []string{"tru", "hello", "nul", "{", "}", `"open`, "01", "+1", "'x'", "NaN", "{'a':1}", "\x00"})
		default:
			b := make([]byte, 1+r.IntN(40))
			for i := range b {
				b[i] = byte(0x20 + r.IntN(0x5f))
			}
			s = string(b)
		}
		if strings.TrimSpace(s) != "" && !json.Valid([]byte(s)) {
			return badInput{"not JSON", s, codeParse, "null"}
		}
	}
}

// notAMessage is valid JSON that is no JSON-RPC 2.0 request, notification or response.
func notAMessage(r *rand.Rand, id string) badInput {
	with := func(kind, line string) badInput { return badInput{kind, line, codeInvalidRequest, id} }
	without := func(kind, line string) badInput { return badInput{kind, line, codeInvalidRequest, "null"} }
	switch r.IntN(9) {
	case 7:
		return without("request with a null id", fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"method":%q}`,
			pick(r, []string{"ping", "tools/list", "tools/call", word(r)})))
	case 8:
		n := pick(r, []string{"1.5", "-0.5", "1e3", "2.0", "1E2", "99999999999999999999"})
		return badInput{"id that is no integer", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"ping"}`, n), codeInvalidRequest, n}
	case 0:
		return without("a scalar", pick(r, []string{"42", "-1.5", `"text"`, "null", "true", "false", `""`}))
	case 1:
		return without("no jsonrpc", fmt.Sprintf(`{%q:%s}`, word(r), wrongJSON(r)))
	case 2:
		return with("wrong version", fmt.Sprintf(`{"jsonrpc":%s,"id":%s,"method":"ping"}`, pick(r, []string{`"1.0"`, `"2"`, "2", "null", `""`}), id))
	case 3:
		return with("no version", fmt.Sprintf(`{"id":%s,"method":"ping"}`, id))
	case 4:
		return without("id of a wrong type", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"ping"}`, pick(r, []string{"{}", "[]", "true", `{"a":1}`, "[1]"})))
	case 5:
		return with("method of a wrong type", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%s}`, id, pick(r, []string{"5", "{}", "[]", "true", `["ping"]`})))
	default:
		return without("response without id", pick(r, []string{`{"jsonrpc":"2.0","result":{}}`, `{"jsonrpc":"2.0","error":{"code":1,"message":"x"}}`}))
	}
}

// badParams calls known methods with params of the wrong type or an unknown tool.
func badParams(r *rand.Rand, id string) badInput {
	var params string
	switch r.IntN(5) {
	case 4: // arguments that do not match the tool's input schema
		args := pick(r, []string{
			`{"chatId":` + pick(r, []string{"5", "true", "[]", "{}", "null"}) + `}`,
			`{"chatId":"c","agents":` + pick(r, []string{`"helper"`, "5", `[5]`, `{"a":1}`}) + `}`,
			`{}`, `{"chatId":"c","` + word(r) + `":1}`, pick(r, []string{"5", `"x"`, "[1]", "true"}),
			`{"chatId":"c","callId":"x","approved":"yes"}`, `{"chatId":"c","offset":"1"}`,
		})
		tool := map[string]string{"{\"chatId\":\"c\",\"agents\"": chatmcp.StartChatTool, `{"chatId":"c","callId"`: chatmcp.ApproveCallTool,
			`{"chatId":"c","offset"`: chatmcp.GetHistoryTool}
		name := pick(r, []string{chatmcp.GetStateTool, chatmcp.SendMessageTool, chatmcp.ExportChatTool})
		for prefix, t := range tool {
			if strings.HasPrefix(args, prefix) {
				name = t
			}
		}
		if args == `{}` {
			name = pick(r, []string{chatmcp.GetStateTool, chatmcp.SendMessageTool, chatmcp.ApproveCallTool, chatmcp.StartChatTool})
		}
		return badInput{"tool arguments against the schema", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s}}`,
			id, name, args), codeInvalidParams, id}
	case 0:
		params = `{"name":` + pick(r, []string{"5", "{}", "[]", "true", "null"}) + `}`
	case 1:
		params = fmt.Sprintf(`{"name":%q,"arguments":{}}`, "no_such_tool_"+word(r))
	case 2:
		params = pick(r, []string{"5", `"x"`, "[1]", "true", `["get_state"]`})
	default:
		return badInput{"tools/list params", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/list","params":%s}`, id,
			pick(r, []string{"5", `"x"`, "[1]", "true"})), codeInvalidParams, id}
	}
	return badInput{"tools/call params", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":%s}`, id, params),
		codeInvalidParams, id}
}

func wrongJSON(r *rand.Rand) string {
	return pick(r, []string{"1", `"x"`, "null", "[]", "{}", "true", `{"requestId":{}}`})
}

func word(r *rand.Rand) string {
	b := make([]byte, 3+r.IntN(8))
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// seeded returns a generator and logs its seed, so that a failure can be replayed.
func seeded(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed>>1))
}

// rpcAnswer is a JSON-RPC response as the tests read it.
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// checkRefusal asserts that got answers in with its error code and id.
func checkRefusal(t *testing.T, in badInput, got rpcAnswer) {
	t.Helper()
	msg := fmt.Sprintf("%s: %q", in.kind, in.line)
	assert.Equal(t, "2.0", got.JSONRPC, msg)
	if assert.NotNil(t, got.Error, "%s: no error in the answer", msg) {
		assert.Equal(t, in.code, got.Error.Code, "%s: %s", msg, got.Error.Message)
		assert.NotEmpty(t, got.Error.Message, msg)
	}
	assert.JSONEq(t, in.idJSON, string(got.ID), msg)
}

// lineClient talks to a stdio MCP server line by line.
type lineClient struct {
	t     *testing.T
	in    io.Writer
	lines chan string
}

func newLineClient(t *testing.T, in io.Writer, out io.Reader) *lineClient {
	c := &lineClient{t: t, in: in, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c
}

func (c *lineClient) send(line string) {
	c.t.Helper()
	_, err := io.WriteString(c.in, line+"\n")
	require.NoError(c.t, err, "the server stopped reading")
}

// next is the server's next line, decoded; it fails the test when none comes in 20 s
// or the server closed its output.
func (c *lineClient) next() rpcAnswer {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		require.True(c.t, ok, "the server ended its output")
		var a rpcAnswer
		require.NoError(c.t, json.Unmarshal([]byte(line), &a), "not JSON-RPC: %s", line)
		return a
	case <-time.After(20 * time.Second):
		require.FailNow(c.t, "no answer from the server in 20 s")
		return rpcAnswer{}
	}
}

// initialize opens the MCP session.
func (c *lineClient) initialize() {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`)
	a := c.next()
	require.Nil(c.t, a.Error)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// survives sends every input, checks each answer (none to a notification or a
// response), and after each a ping that must answer: the session goes on.
func (c *lineClient) survives(inputs []badInput) {
	c.t.Helper()
	for i, in := range inputs {
		c.send(in.line)
		if in.code != 0 {
			checkRefusal(c.t, in, c.next())
		}
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"ping-%d","method":"ping"}`, i))
		a := c.next()
		require.JSONEq(c.t, fmt.Sprintf(`"ping-%d"`, i), string(a.ID), "after %s %q: the answer to the ping", in.kind, in.line)
		require.Nil(c.t, a.Error, "after %s %q", in.kind, in.line)
	}
	c.send(`{"jsonrpc":"2.0","id":"last","method":"tools/list"}`)
	a := c.next()
	require.Nil(c.t, a.Error)
	assert.Contains(c.t, string(a.Result), chatmcp.ApproveCallTool, "tools/list after the bad input lists the tools")
}

// The stdio transport answers every input that is not a call it can serve with a
// JSON-RPC error (parse error, invalid request, method not found, invalid params),
// answers no notification or unasked response, and the session goes on to answer
// the next request.
func TestStdioSessionSurvivesMalformedInput(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- chatmcp.NewServer(nil, "test").Run(t.Context(), &chatmcp.LineTransport{In: inR, Out: outW})
	}()
	c := newLineClient(t, inW, outR)
	c.initialize()
	c.survives(malformedInputs(seeded(t), 300, false))

	require.NoError(t, inW.Close())
	select {
	case err := <-done:
		assert.NoError(t, err, "the end of the input ends the session cleanly")
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not end with its input")
	}
}

// postRPC posts body to the MCP endpoint in session sid and returns the status and
// the JSON-RPC answer (read from JSON or from an event stream; nil when the body has
// none).
func postRPC(t *testing.T, url, sid, version, body string) (int, *rpcAnswer, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", version)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	data := bytes.TrimSpace(raw)
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		data = nil
		for _, line := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = []byte(d)
			}
		}
	}
	if len(data) == 0 {
		return res.StatusCode, nil, string(raw)
	}
	var a rpcAnswer
	require.NoError(t, json.Unmarshal(data, &a), "status %d, not JSON-RPC: %s", res.StatusCode, raw)
	return res.StatusCode, &a, string(raw)
}

// The streamable HTTP server answers the same inputs in a live session with JSON-RPC
// errors (400 for a body that is no message), and the session's client goes on.
func TestStreamableHTTPSessionSurvivesMalformedInput(t *testing.T) {
	addr, stop, err := chatmcp.Listen("127.0.0.1:0", chatmcp.NewServer(nil, "test"), chatmcp.ListenOptions{}, slog.Default())
	require.NoError(t, err)
	t.Cleanup(stop)
	s := connectHTTP(t, addr, "")
	url, version := "http://"+addr+chatmcp.Path, s.InitializeResult().ProtocolVersion
	for i, in := range malformedInputs(seeded(t), 200, true) {
		status, a, raw := postRPC(t, url, s.ID(), version, in.line)
		if in.kind == "unknown notification" { // HTTP must refuse what it cannot accept (MCP's transports)
			in.code, in.idJSON = codeMethodNotFound, "null"
		}
		switch {
		case in.code == 0:
			assert.Equal(t, http.StatusAccepted, status, "%s %q: %s", in.kind, in.line, raw)
		case in.code == codeParse || in.code == codeInvalidRequest || in.code == codeMethodNotFound:
			assert.Equal(t, http.StatusBadRequest, status, "%s %q: %s", in.kind, in.line, raw)
			fallthrough
		default:
			if assert.NotNil(t, a, "%s %q: no JSON-RPC answer: status %d %s", in.kind, in.line, status, raw) {
				checkRefusal(t, in, *a)
			}
		}
		if i%20 == 0 {
			_, err := s.ListTools(t.Context(), nil)
			require.NoError(t, err, "after %s %q the session's client fails", in.kind, in.line)
		}
	}
	res, err := s.ListTools(t.Context(), nil)
	require.NoError(t, err, "the session's client fails after the bad input")
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	assert.ElementsMatch(t, chatmcp.ToolNames, names, "every tool is still served")
}

// `starter mcp` itself answers bad lines with JSON-RPC errors and keeps the client's
// session: the next valid request is answered.
func TestStarterMCPCommandSurvivesMalformedLines(t *testing.T) {
	cmd := exec.Command(testenv.Binary(t, "github.com/agentchat/agentchat/starter"), "mcp",
		"--address", testenv.Address(t), "--task-queue", testenv.TaskQueue(t))
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := newLineClient(t, in, out)
	c.send("this is not JSON") // before the session opens, too
	checkRefusal(t, badInput{"not JSON", "this is not JSON", codeParse, "null"}, c.next())
	c.initialize()
	c.survives(malformedInputs(seeded(t), 100, false))
	require.NoError(t, in.Close())
	require.NoError(t, cmd.Wait(), "starter mcp ends cleanly with its input: %s", stderr.String())
}
