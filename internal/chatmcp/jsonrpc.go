package chatmcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Input that is not a JSON-RPC 2.0 message never reaches the MCP SDK, whose
// connection ends on it (and with it the client's session). Both transports answer
// it with a JSON-RPC error object instead and go on reading:
//
//   - text that is not JSON: -32700 (parse error), id null;
//   - JSON that is not a request, notification or response (not an object, no
//     "jsonrpc":"2.0", an id that is not a string or an integer, a request whose id
//     is null, a method that is not a string, a response without an id): -32600
//     (invalid request), with the message's id when it has a usable one, else null;
//   - a batch (a JSON array) on stdio: -32600, since MCP 2025-06-18 removed batching.
//
// Everything else goes to the SDK, which answers an unknown method with -32601 and
// params of the wrong shape (or an unknown tool) with -32602; a tool's arguments that
// do not match its input schema get -32602 too (refuseInvalidArguments).

// refusal is the JSON-RPC error response for one input that is not a message: its
// id is raw JSON (null when the input had no usable id).
type refusal struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   jsonrpc.Error   `json:"error"`
}

// maxDetail bounds the decoder's detail quoted in a refusal's message.
const maxDetail = 200

// decodeLine decodes one line of the stdio transport: one JSON-RPC 2.0 message, or
// the refusal to answer with.
func decodeLine(data []byte) (jsonrpc.Message, *refusal) {
	data = bytes.TrimSpace(data)
	if !json.Valid(data) {
		return nil, parseRefusal(data)
	}
	if data[0] == '[' {
		return nil, refuse(nil, jsonrpc.CodeInvalidRequest,
			"invalid request: JSON-RPC batches (arrays) are not supported; send one message a line")
	}
	return decodeOne(data)
}

// checkBody checks one HTTP request body: one JSON-RPC 2.0 message or an array of
// them (the SDK answers a batch itself, by the protocol version). It returns nil
// when the SDK can decode it all, else the refusal to answer with.
func checkBody(data []byte) *refusal {
	data = bytes.TrimSpace(data)
	if !json.Valid(data) {
		return parseRefusal(data)
	}
	if data[0] != '[' {
		_, r := decodeOne(data)
		return r
	}
	var items []json.RawMessage
	_ = json.Unmarshal(data, &items) // valid JSON that starts with '['
	if len(items) == 0 {
		return refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: empty batch")
	}
	for i, item := range items {
		if _, r := decodeOne(item); r != nil {
			r.ID = json.RawMessage("null")
			r.Error.Message = fmt.Sprintf("%s (batch item %d)", r.Error.Message, i)
			return r
		}
	}
	return nil
}

// decodeOne decodes one message (valid JSON).
func decodeOne(data []byte) (jsonrpc.Message, *refusal) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, refuse(usableID(data), jsonrpc.CodeInvalidRequest,
			"invalid request: not a JSON-RPC 2.0 message: "+clip(err.Error()))
	}
	if r := checkID(data); r != nil {
		return nil, r
	}
	return msg, nil
}

// checkID refuses a request whose id is null, which the SDK would take for a
// notification and never answer, and an id that is a number but not an integer, which
// it would answer under another id (MCP: "a string or integer", never null).
func checkID(data []byte) *refusal {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal(data, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	id := bytes.TrimSpace(m.ID)
	switch {
	case bytes.Equal(id, []byte("null")) && len(m.Method) > 0:
		return refuse(nil, jsonrpc.CodeInvalidRequest,
			"invalid request: a request's id must be a string or an integer, not null; a notification has no id")
	case len(id) > 0 && id[0] != '"' && !bytes.Equal(id, []byte("null")):
		if _, err := strconv.ParseInt(string(id), 10, 64); err != nil {
			return refuse(id, jsonrpc.CodeInvalidRequest, "invalid request: the id "+clip(string(id))+
				" must be a string or an integer (of at most 64 bits)")
		}
	}
	return nil
}

func parseRefusal(data []byte) *refusal {
	return refuse(nil, jsonrpc.CodeParseError, "parse error: not JSON: "+jsonDetail(data))
}

// usableID returns the id of a JSON object when it is a string or a number, else nil.
func usableID(data []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return m.ID
	}
	return nil
}

func refuse(id json.RawMessage, code int64, msg string) *refusal {
	if id == nil {
		id = json.RawMessage("null")
	}
	return &refusal{JSONRPC: "2.0", ID: id, Error: jsonrpc.Error{Code: code, Message: msg}}
}

// jsonDetail is the decoder's complaint about data (known not to be valid JSON).
func jsonDetail(data []byte) string {
	var v any
	err := json.Unmarshal(data, &v)
	if err == nil || len(data) == 0 {
		return "empty input"
	}
	return clip(err.Error())
}

func clip(s string) string {
	if len(s) > maxDetail {
		s = strings.ToValidUTF8(s[:maxDetail], "") + "…"
	}
	return s
}

// encode is r as one line of JSON, without the newline.
func (r *refusal) encode() []byte {
	b, err := json.Marshal(r)
	if err != nil { // the id was checked to be valid JSON: not expected
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`)
	}
	return b
}

// The SDK answers a few requests with an error that has no JSON-RPC code (0, which
// JSON-RPC 2.0 does not define): a request before initialize, an initialize whose
// params do not decode, a second initialize. Both transports give such an answer its
// code as they write it (withCode), by the request's method and whether the session's
// initialize succeeded:
//
//   - initialize in a session already initialized: -32600 (invalid request);
//   - initialize otherwise (its params do not decode): -32602 (invalid params);
//   - a method the server does not serve: -32601 (method not found);
//   - any other request before initialize: -32600, with a message that says to send
//     initialize first (MCP defines no code of its own for it; -32002, LSP's "server
//     not initialized", is resource not found in earlier MCP specifications);
//   - anything else: -32603 (internal error), with the SDK's message.
//
// No answer of either transport has code 0.

// withCode is the error to answer in place of err, the error of a request for method,
// by the rules above, or nil when err has a JSON-RPC code; initialized says whether
// the session's initialize succeeded, hint ends a before-initialize message.
func withCode(err error, method string, initialized bool, hint string) *jsonrpc.Error {
	var coded *jsonrpc.Error
	if errors.As(err, &coded) && coded.Code != 0 {
		return nil
	}
	detail := clip(err.Error())
	switch {
	case method == "initialize" && initialized:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "invalid request: the session is already initialized: send initialize once"}
	case method == "initialize":
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + detail}
	case method != "" && !servedMethods[method]:
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: clip(fmt.Sprintf("method not found: %q", method))}
	case method != "" && !initialized:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: clip(fmt.Sprintf(
			"invalid request: %q before initialize: send initialize first, then notifications/initialized", method)) + hint}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: " + detail}
}

// coded is res with its error's code (withCode), or res itself when it has one.
func coded(res *jsonrpc.Response, method string, initialized bool, hint string) *jsonrpc.Response {
	if res.Error == nil {
		return res
	}
	e := withCode(res.Error, method, initialized, hint)
	if e == nil {
		return res
	}
	return &jsonrpc.Response{ID: res.ID, Error: e, Extra: res.Extra}
}
