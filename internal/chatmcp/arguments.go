package chatmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolSchemas are the tools' input schemas, resolved, by tool name.
type toolSchemas map[string]*jsonschema.Resolved

// addTool adds a tool as mcp.AddTool does and records its input schema (the one the
// SDK infers from In: fields without omitempty required, no other fields).
func addTool[In any](s *mcp.Server, schemas toolSchemas, t *mcp.Tool, h mcp.ToolHandlerFor[In, any]) {
	mcp.AddTool(s, t, h)
	sc, err := jsonschema.For[In](nil)
	if err != nil {
		return // mcp.AddTool panics on such a schema first
	}
	if r, err := sc.Resolve(nil); err == nil {
		schemas[t.Name] = r
	}
}

// refuseInvalidArguments answers a tools/call whose arguments do not match the tool's
// input schema (not an object, a field of the wrong type, a required one missing, an
// unknown one) with the JSON-RPC error -32602 (invalid params), as for params of the
// wrong shape, and calls no tool.
func refuseInvalidArguments(schemas toolSchemas) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil {
				if sc := schemas[call.Params.Name]; sc != nil {
					if err := validArguments(sc, call.Params.Arguments); err != nil {
						return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
							Message: fmt.Sprintf("invalid params: the arguments of tool %q: %s", call.Params.Name, clip(err.Error()))}
					}
				}
			}
			return next(ctx, method, req)
		}
	}
}

// validArguments checks raw (absent or null: no arguments, {}) against sc.
func validArguments(sc *jsonschema.Resolved, raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("not a JSON object: %s", raw)
	}
	return sc.Validate(v)
}
