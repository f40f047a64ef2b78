package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/telemetry"
	"github.com/agentchat/agentchat/wire"
)

// tools runs tool calls: the Go functions of Config.Functions.Tools and the tools of
// the agent config's MCP servers, and says which tools an agent is offered. It owns
// the functions by name and the sessions with the MCP servers (nil without any),
// reads the tools' definitions in the registry, records a span per call, and answers
// UnknownFunction through unknowns.
type tools struct {
	registry  *agents.Registry
	functions map[string]ToolFunc
	mcp       *mcpHub
	telemetry *telemetry.Recorder
	unknowns  *unknowns
}

// close ends the sessions with the MCP servers.
func (t *tools) close() error {
	if t.mcp == nil {
		return nil
	}
	return t.mcp.close()
}

// ToolFunc is a Go function behind a tool of the agent config. It receives the call's
// arguments (a JSON object, as the model wrote it) and returns the result text the
// model reads. An error goes back to the model as the call's error result; return a
// NonRetryable error (ToolError) for failures a retry cannot cure.
//
// A call may run more than once (Temporal runs activities at least once: a worker that
// dies after the side effect, before the completion is recorded, has the call retried).
// A tool with side effects deduplicates on the call's idempotency key, CallOf(ctx).
//
// ctx is cancelled when the attempt ends without the function: its timeout passed,
// Temporal gave the attempt up (the call is retried elsewhere), or the worker stops.
// A long tool should return when ctx is done. CallTool heartbeats while the function
// runs, so a worker that dies mid-call costs the tool's heartbeatTimeout, not its
// whole timeout.
type ToolFunc func(ctx context.Context, args json.RawMessage) (string, error)

// ToolError returns a tool failure that is not retried (bad arguments, a refusal).
func ToolError(format string, a ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, a...), wire.ErrTypeToolError, nil)
}

// CallTool implements Activities.CallTool.
func (t *tools) CallTool(ctx context.Context, in wire.CallToolInput) (wire.CallToolResult, error) {
	f, ok := t.functions[in.Name]
	if server, tool, isMCP := t.mcp.lookup(in.Name); isMCP {
		f, ok = func(ctx context.Context, _ json.RawMessage) (string, error) { return t.callMCP(ctx, server, tool, in) }, true
	}
	if !ok {
		return wire.CallToolResult{}, t.unknowns.here(ctx, wire.KindTool, []string{in.Name}, names(t.functions),
			fmt.Sprintf("tool %q has no function on this worker", in.Name))
	}
	ctx = WithToolCall(ctx, ToolCall{ChatID: in.ChatID, AgentID: in.AgentID, CallID: in.CallID, Name: in.Name})
	ctx, span := t.telemetry.StartToolCall(ctx, telemetry.ToolCall{Name: in.Name, CallID: in.CallID, AgentID: in.AgentID,
		ChatID: in.ChatID, TurnID: in.TurnID, Arguments: in.Arguments})
	res, err := t.runTool(ctx, f, in)
	span.End(res.Result, "", err)
	return res, err
}

// runTool runs f on in's arguments, heartbeating, and refuses a result over
// wire.ToolResultLimit.
func (t *tools) runTool(ctx context.Context, f ToolFunc, in wire.CallToolInput) (wire.CallToolResult, error) {
	stop := heartbeatWhileWaiting(ctx)
	res, err := f(ctx, json.RawMessage(in.Arguments))
	err = redactError(err)
	stop()
	if err != nil {
		return wire.CallToolResult{}, err
	}
	if n := wire.TextBytes(res); n > wire.ToolResultLimit {
		return wire.CallToolResult{}, ToolError("tool %q returned %d bytes encoded; a tool result may be at most %d (ToolResultLimit)",
			in.Name, n, wire.ToolResultLimit)
	}
	return wire.CallToolResult{Result: res}, nil
}

// checkTools makes sure every tool of the config has a function.
func checkTools(cfg agents.Config, funcs map[string]ToolFunc) error {
	var missing []string
	for name := range cfg.Tools {
		if funcs[name] == nil {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		return fmt.Errorf("activities: the agent config's tools %q have no Go function registered on this worker (activities.Config.Functions.Tools)", missing)
	}
	return nil
}

// offeredTools returns the function tools of an agent for a model request: those of
// its definition on this worker, and of them only the ones named in chatTools when it
// is not nil (InvokeInput.Tools: the tools the chat resolved, which it can run; a tool
// an MCP server added since is not offered to a chat that could not call it).
func (t *tools) offeredTools(d agents.Definition, chatTools []string) []openai.Tool {
	all := t.openAITools(d)
	if chatTools == nil {
		return all
	}
	out := all[:0:0]
	for _, tool := range all {
		if slices.Contains(chatTools, tool.Function.Name) {
			out = append(out, tool)
		}
	}
	return out
}

// openAITools returns the function tools of an agent's definition, for a model request.
func (t *tools) openAITools(d agents.Definition) []openai.Tool {
	var out []openai.Tool
	for _, name := range d.GoTools() {
		def := t.registry.Config().Tools[name]
		params := def.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: name, Description: def.Description, Parameters: params}})
	}
	return append(out, t.mcpOpenAITools(d)...)
}
