package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/wire"
)

// lookup returns the server and tool behind a function name "server__tool"; ok is
// false for a name of no configured server (a Go tool).
func (h *mcpHub) lookup(name string) (s *mcpServer, tool string, ok bool) {
	if h == nil {
		return nil, "", false
	}
	server, tool, found := strings.Cut(name, agents.MCPToolSeparator)
	if s, ok = h.servers[server]; !found || !ok {
		return nil, "", false
	}
	return s, tool, true
}

// agentTools returns the MCP tools agent d may call, as listed now: its "server/*"
// entries expand to every listed tool of the server (sorted), its "server/tool" entries
// to that tool while the server lists it.
func (h *mcpHub) agentTools(d agents.Definition) []mcpTool {
	if h == nil {
		return nil
	}
	var out []mcpTool
	seen := map[string]bool{}
	for _, ref := range d.MCPRefs() {
		s := h.servers[ref.Server]
		names := []string{ref.Tool}
		if ref.All() {
			names = s.toolNames()
		}
		for _, n := range names {
			if t, ok := s.tool(n); ok && !seen[agents.MCPToolName(t.server, t.name)] {
				seen[agents.MCPToolName(t.server, t.name)] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// mcpSpecs returns the participant's ToolSpecs of agent d's MCP tools: name
// "server__tool", the server's description and input schema, and the call settings of
// the config (Registry.MCPTool).
func (t *tools) mcpSpecs(d agents.Definition) []wire.ToolSpec {
	var out []wire.ToolSpec
	for _, mt := range t.mcp.agentTools(d) {
		tool := t.registry.MCPTool(d, mt.server, mt.name)
		tool.Description, tool.Parameters = mt.description, mt.parameters
		out = append(out, wire.ToolSpec{Name: agents.MCPToolName(mt.server, mt.name), Tool: tool.WithDefaults()})
	}
	return out
}

// mcpOpenAITools returns agent d's MCP tools for a model request.
func (t *tools) mcpOpenAITools(d agents.Definition) []openai.Tool {
	var out []openai.Tool
	for _, mt := range t.mcp.agentTools(d) {
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: agents.MCPToolName(mt.server, mt.name), Description: mt.description, Parameters: mt.parameters}})
	}
	return out
}

// callMCP runs one call of tool of MCP server s (tools/call), with the call's
// idempotency key in _meta (IdempotencyKeyMeta). Errors: a ToolError, which the model
// reads, for an error result (isError) or the server's refusal of the request (a
// JSON-RPC error: an unknown tool, bad arguments); a retryable ToolUnavailable error
// when the server cannot be reached or goes away mid-call (it is connected to, or
// started, again on the next attempt).
func (t *tools) callMCP(ctx context.Context, s *mcpServer, tool string, in wire.CallToolInput) (string, error) {
	session, err := s.live(ctx)
	if err != nil {
		return "", temporal.NewApplicationError(fmt.Sprintf("MCP server %q cannot be reached: %v", s.name, err), wire.ErrTypeToolUnavailable)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(in.Arguments), &args); err != nil {
		return "", ToolError("the arguments of %q are not a JSON object: %v", in.Name, err)
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args,
		Meta: mcp.Meta{IdempotencyKeyMeta: IdempotencyKey(in.ChatID, in.CallID)}})
	var rpcErr *jsonrpc.Error
	switch {
	case err != nil && ctx.Err() != nil:
		return "", err // the attempt's timeout, or the worker stops: Temporal retries
	case err != nil && !transportFailure(err) && errors.As(err, &rpcErr):
		return "", ToolError("MCP server %q refused the call of tool %q: %s", s.name, tool, rpcErr.Message)
	case err != nil:
		s.drop(session)
		return "", temporal.NewApplicationError(fmt.Sprintf(
			"MCP server %q went away during the call of tool %q (%v); it is connected to again on the next call", s.name, tool, err),
			wire.ErrTypeToolUnavailable)
	}
	text := resultText(res)
	if res.IsError {
		return "", ToolError("MCP tool %q of server %q failed: %s", tool, s.name, text)
	}
	return text, nil
}

// The JSON-RPC codes the Go SDK gives a request that never got the server's answer
// (internal/jsonrpc2: ErrRejected, ErrClientClosing, ErrServerClosing).
var transportCodes = []int64{-32005, -32003, -32004}

// transportFailure reports whether err of a call says the server was not reached or
// went away, rather than that it answered with an error.
func transportFailure(err error) bool {
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) {
		return true
	}
	for _, code := range transportCodes {
		if errors.Is(err, &jsonrpc.Error{Code: code}) {
			return true
		}
	}
	var rpcErr *jsonrpc.Error
	return !errors.As(err, &rpcErr)
}

// resultText is the text the model reads of an MCP tool result: its text contents, one
// per line; other contents are named (an image by its MIME type and size, a resource
// by its URI, its text when it has one); a result with only structured content is that
// content's JSON.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]", c.Resource.URI))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	return strings.Join(slices.Clip(parts), "\n")
}
