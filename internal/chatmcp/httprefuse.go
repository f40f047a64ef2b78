package chatmcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
// Other answers, among them -32602 for params of the wrong shape, are the SDK's.
func refuseMalformed(next http.Handler) http.Handler {
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
		rw := &refusalWriter{ResponseWriter: w}
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

// refusalWriter holds back a plain-text 400 of the SDK (its http.Error) and passes
// every other answer, streamed or not, straight through.
type refusalWriter struct {
	http.ResponseWriter
	held bool
	text bytes.Buffer
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
	return w.ResponseWriter.Write(b)
}

// Flush passes a streamed answer's events on (http.Flusher).
func (w *refusalWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.held {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *refusalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
