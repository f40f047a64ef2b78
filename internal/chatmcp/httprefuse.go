package chatmcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// servedMethods are the MCP methods and notifications the SDK's server answers. They
// only choose the code of a request the SDK has already refused: -32601 (method not
// found) for a method not in this set, -32600 (invalid request) for one in it.
var servedMethods = map[string]bool{
	"initialize": true, "ping": true, "tools/list": true, "tools/call": true,
	"prompts/list": true, "prompts/get": true, "resources/list": true, "resources/read": true,
	"resources/templates/list": true, "resources/subscribe": true, "resources/unsubscribe": true,
	"completion/complete": true, "logging/setLevel": true, "server/discover": true,
	"subscriptions/listen": true, "notifications/initialized": true, "notifications/cancelled": true,
	"notifications/progress": true, "notifications/roots/list_changed": true,
}

// refuseMalformed answers every POST the SDK cannot serve with 400 and a JSON-RPC
// error object, where the SDK closes the session (stdio) or answers in plain text
// (HTTP):
//
//   - a body that is not JSON: -32700, id null; JSON that is not a message, or an
//     array with an item that is not one: -32600 (decodeLine's rules); these never
//     reach the SDK;
//   - a message the SDK refuses before any session sees it (an unknown method, a
//     notification method sent with an id, a call without its params, a batch
//     where the protocol version has none): -32601 for a method the server does not
//     serve, else -32600, with the message's id (null for a notification or a batch).
//
// Other answers, among them -32602 for params of the wrong shape, are the SDK's; one
// without a JSON-RPC code gets one (withCode: the session is s's session of the
// request's Mcp-Session-Id, or of the one the answer names).
func refuseMalformed(s *mcp.Server, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil {
			http.Error(w, "mcp: read the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if ref := checkBody(body); ref != nil {
			writeRefusal(w, ref)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rw := &refusalWriter{ResponseWriter: w, calls: callMethods(body)}
		if len(rw.calls) > 0 {
			rw.initialized = func() bool { return sessionInitialized(s, r.Header.Get(sessionHeader), w.Header().Get(sessionHeader)) }
			if r.Header.Get(sessionHeader) == "" {
				rw.hint = "; send the " + sessionHeader + " header that initialize's answer names with every later request"
			}
		}
		next.ServeHTTP(rw, r)
		if rw.held {
			writeRefusal(w, sdkRefusal(body, strings.TrimSpace(rw.text.String())))
		}
	})
}

// sdkRefusal is the JSON-RPC error for body (valid: checkBody passed it), which the
// SDK refused with text.
func sdkRefusal(body []byte, text string) *refusal {
	var one struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) || json.Unmarshal(body, &one) != nil {
		return refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: "+clip(text))
	}
	id := usableID(body)
	if one.Method != nil && !servedMethods[*one.Method] {
		return refuse(id, jsonrpc.CodeMethodNotFound, clip(fmt.Sprintf("method not found: %q", *one.Method)))
	}
	return refuse(id, jsonrpc.CodeInvalidRequest, "invalid request: "+clip(text))
}

func writeRefusal(w http.ResponseWriter, ref *refusal) {
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(append(ref.encode(), '\n'))
}

// sessionHeader is the streamable HTTP transport's header that names a session.
const sessionHeader = "Mcp-Session-Id"

// callMethods is the method of each request (with an id) in body, one message or a
// batch, by id.
func callMethods(body []byte) map[jsonrpc.ID]string {
	items := []json.RawMessage{body}
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		items = nil
		_ = json.Unmarshal(body, &items) // checkBody passed it
	}
	calls := map[jsonrpc.ID]string{}
	for _, item := range items {
		if msg, err := jsonrpc.DecodeMessage(item); err == nil {
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				calls[req.ID] = req.Method
			}
		}
	}
	return calls
}

// sessionInitialized reports whether s's session named by the first non-empty id
// exists and its initialize succeeded.
func sessionInitialized(s *mcp.Server, ids ...string) bool {
	for _, id := range ids {
		if id == "" {
			continue
		}
		for ss := range s.Sessions() {
			if ss.ID() == id {
				return ss.InitializeParams() != nil
			}
		}
		return false
	}
	return false
}

// refusalWriter holds back a plain-text 400 of the SDK (its http.Error) and passes
// every other answer, streamed or not, through, with a JSON-RPC code given to an
// answer to one of calls that has none (withCode).
type refusalWriter struct {
	http.ResponseWriter
	held bool
	text bytes.Buffer

	calls       map[jsonrpc.ID]string // the body's requests: method by id
	initialized func() bool           // whether the request's session is initialized
	hint        string                // ends a before-initialize message
}

func (w *refusalWriter) WriteHeader(code int) {
	if code == http.StatusBadRequest && !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		w.held = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *refusalWriter) Write(b []byte) (int, error) {
	if w.held {
		return w.text.Write(b)
	}
	if len(w.calls) > 0 && bytes.Contains(b, []byte(`"error"`)) {
		if _, err := w.ResponseWriter.Write(w.recode(b)); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// recode is b, one write of the SDK's answer (a server-sent event, a JSON-RPC message
// or an array of them), with a code given to each answer without one.
func (w *refusalWriter) recode(b []byte) []byte {
	if i := bytes.Index(b, []byte("data: ")); i >= 0 && (i == 0 || b[i-1] == '\n') {
		end := i + len("data: ")
		j := bytes.IndexByte(b[end:], '\n')
		if j < 0 {
			j = len(b) - end
		}
		data := w.recodeJSON(b[end : end+j])
		return append(append(append([]byte{}, b[:end]...), data...), b[end+j:]...)
	}
	return w.recodeJSON(b)
}

func (w *refusalWriter) recodeJSON(data []byte) []byte {
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("[")) {
		var items []json.RawMessage
		if json.Unmarshal(trimmed, &items) != nil {
			return data
		}
		for i, item := range items {
			items[i] = w.recodeJSON(item)
		}
		out, err := json.Marshal(items)
		if err != nil {
			return data
		}
		return out
	}
	msg, err := jsonrpc.DecodeMessage(trimmed)
	if err != nil {
		return data
	}
	res, ok := msg.(*jsonrpc.Response)
	if !ok || res.Error == nil {
		return data
	}
	recoded := coded(res, w.calls[res.ID], w.initialized(), w.hint)
	if recoded == res {
		return data
	}
	out, err := jsonrpc.EncodeMessage(recoded)
	if err != nil {
		return data
	}
	return out
}

// Flush passes a streamed answer's events on (http.Flusher).
func (w *refusalWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.held {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *refusalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
