package agents

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// MCPServer is one MCP server of the config (mcpServers: NAME: {...}): either a local
// program spoken to over stdio (Command, Args, Env) or a server at a streamable HTTP URL
// (URL, HeadersEnv). Its tools reach an agent that names them in its tools as
// "NAME/TOOL" or "NAME/*", and the model sees each as "NAME__TOOL" (MCPToolName). Secrets
// never stand in the config: Env and HeadersEnv name the worker's environment variables
// that hold them, read when the worker connects. JSON:
//
//	{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/srv/docs"]}
//	{"url":"https://tickets.example.com/mcp","headersEnv":{"Authorization":"TICKETS_TOKEN"},
//	 "approval":true,"timeout":"1m"}
type MCPServer struct {
	// Command and Args start the server as a child process spoken to over stdin and
	// stdout (MCP's stdio transport). ${VAR} and ${VAR:-fallback} are expanded in both.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env gives the child process variables: child variable → the name of the worker's
	// environment variable that holds its value. The child gets only these and
	// MCPBaseEnv, never the worker's whole environment (its model keys).
	Env map[string]string `json:"env,omitempty"`
	// URL is a streamable HTTP MCP endpoint (http or https); ${VAR} is expanded.
	URL string `json:"url,omitempty"`
	// HeadersEnv sets HTTP headers on every request to URL: header → the name of the
	// worker's environment variable that holds its value ({Authorization: TICKETS_TOKEN}
	// with TICKETS_TOKEN="Bearer ...").
	HeadersEnv map[string]string `json:"headersEnv,omitempty"`
	// Approval makes every call of this server's tools wait for a person's approval; an
	// agent's approval list can ask it for single tools instead.
	Approval bool `json:"approval,omitempty"`
	// Timeout, MaxAttempts and HeartbeatTimeout are each call's, as for a Go tool
	// (wire.Tool; defaults 30s, 3 and 5s).
	Timeout          wire.Duration `json:"timeout,omitempty"`
	MaxAttempts      int           `json:"maxAttempts,omitempty"`
	HeartbeatTimeout wire.Duration `json:"heartbeatTimeout,omitempty"`
}

// MCPBaseEnv are the worker's environment variables a stdio MCP server inherits (when
// set), besides the ones its Env names: what a program needs to run (npx needs PATH and
// HOME), the same set MCP desktop clients pass.
var MCPBaseEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG"}

// MCPToolSeparator joins an MCP server's name and a tool's name into the function name
// the model sees: OpenAI's function names allow no slash.
const MCPToolSeparator = "__"

// MCPToolName is the function name the model sees for tool of MCP server server:
// server + "__" + tool. It must match chat.FunctionNamePattern (at most 64 of
// [a-zA-Z0-9_-]) for the tool to be offered.
func MCPToolName(server, tool string) string { return server + MCPToolSeparator + tool }

// ToolRef is an agent's reference to MCP tools: "server/tool", or "server/*" for all of
// the server's tools (Tool is then "*").
type ToolRef struct {
	Server string
	Tool   string
}

// All reports whether r names every tool of its server ("server/*").
func (r ToolRef) All() bool { return r.Tool == "*" }

func (r ToolRef) String() string { return r.Server + "/" + r.Tool }

// ParseToolRef splits an agent's tool entry "server/tool" or "server/*"; ok is false for
// a name without a slash (a Go tool of the config's tools).
func ParseToolRef(s string) (ref ToolRef, ok bool) {
	server, tool, ok := strings.Cut(s, "/")
	return ToolRef{Server: server, Tool: tool}, ok
}

// MCPRefs returns the agent's references to MCP tools, in the order of its tools.
func (d Definition) MCPRefs() []ToolRef {
	var out []ToolRef
	for _, name := range d.Tools {
		if ref, ok := ParseToolRef(name); ok {
			out = append(out, ref)
		}
	}
	return out
}

// GoTools returns the agent's tools that are the config's Go tools (no slash).
func (d Definition) GoTools() []string {
	var out []string
	for _, name := range d.Tools {
		if _, ok := ParseToolRef(name); !ok {
			out = append(out, name)
		}
	}
	return out
}

// MCPTool returns the settings of a call of tool of MCP server ref.Server by agent d:
// the server's timeout, attempts and heartbeat, with approval when the server asks it
// for all its tools or d's approval list names "server/tool" or "server/*". Description
// and Parameters are the caller's (they come from the server's tool list).
func (r *Registry) MCPTool(d Definition, server, tool string) wire.Tool {
	s := r.cfg.MCPServers[server]
	return wire.Tool{Timeout: s.Timeout, MaxAttempts: s.MaxAttempts, HeartbeatTimeout: s.HeartbeatTimeout,
		Approval: s.Approval || slices.Contains(d.Approval, server+"/"+tool) || slices.Contains(d.Approval, server+"/*")}
}

var (
	// mcpServerNamePattern: a name that joins a tool's with "__" and can be split again.
	mcpServerNamePattern = regexp.MustCompile(`^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$`)
	envNamePattern       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerNamePattern    = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") // RFC 9110 token
)

// validateMCP checks the config's MCP servers (expanding ${VAR} in commands, arguments
// and URLs) and the agents' references to them.
func validateMCP(cfg *Config) error {
	for _, name := range slices.Sorted(maps.Keys(cfg.MCPServers)) {
		s := cfg.MCPServers[name]
		if err := s.validate(name); err != nil {
			return fmt.Errorf("%w: mcpServers %q: %w", ErrInvalidConfig, name, err)
		}
		s.Command, s.URL = Expand(s.Command), Expand(s.URL)
		for i, a := range s.Args {
			s.Args[i] = Expand(a)
		}
		cfg.MCPServers[name] = s
	}
	for tool := range cfg.Tools {
		if server, _, ok := strings.Cut(tool, MCPToolSeparator); ok {
			if _, clash := cfg.MCPServers[server]; clash {
				return fmt.Errorf("%w: tool %q would clash with the tools of MCP server %q (the model sees those as %s)",
					ErrInvalidConfig, tool, server, MCPToolName(server, "TOOL"))
			}
		}
	}
	for _, d := range cfg.Agents {
		if err := d.validateMCPRefs(cfg.MCPServers); err != nil {
			return fmt.Errorf("%w: agent %q: %w", ErrInvalidConfig, d.ID, err)
		}
	}
	return nil
}

func (s MCPServer) validate(name string) error {
	if !mcpServerNamePattern.MatchString(name) || len(name) > chat.MaxFunctionNameLen-len(MCPToolSeparator)-1 {
		return fmt.Errorf("a server name must be [A-Za-z0-9_-] without a double or trailing underscore, at most %d long "+
			"(the model sees its tools as NAME%sTOOL, at most %d characters)",
			chat.MaxFunctionNameLen-len(MCPToolSeparator)-1, MCPToolSeparator, chat.MaxFunctionNameLen)
	}
	switch {
	case s.Command == "" && s.URL == "":
		return errors.New("give command (a program spoken to over stdio) or url (a streamable HTTP endpoint)")
	case s.Command != "" && s.URL != "":
		return errors.New("give command or url, not both")
	case s.Command == "" && (len(s.Args) > 0 || len(s.Env) > 0):
		return errors.New("args and env are for a command; this server has a url")
	case s.URL == "" && len(s.HeadersEnv) > 0:
		return errors.New("headersEnv is for a url; this server has a command")
	}
	if s.URL != "" {
		u, err := url.Parse(Expand(s.URL))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("url %q is not an http or https URL", s.URL)
		}
		if u.User != nil {
			return errors.New("url must not hold credentials; put them in an environment variable named in headersEnv")
		}
	}
	for child, v := range s.Env {
		if !envNamePattern.MatchString(child) || !envNamePattern.MatchString(v) {
			return fmt.Errorf("env %s: %s: env maps the program's variable to the NAME of the worker's environment "+
				"variable that holds the value (values never stand in the config)", child, v)
		}
	}
	for h, v := range s.HeadersEnv {
		if !headerNamePattern.MatchString(h) || !envNamePattern.MatchString(v) {
			return fmt.Errorf("headersEnv %s: %s: headersEnv maps an HTTP header to the NAME of the worker's environment "+
				"variable that holds its value (values never stand in the config)", h, v)
		}
	}
	if s.MaxAttempts < 0 || s.Timeout < 0 || s.HeartbeatTimeout < 0 {
		return errors.New("timeout, heartbeatTimeout and maxAttempts must not be negative")
	}
	return nil
}

// validateMCPRefs checks d's "server/tool" tools and its approval list.
func (d Definition) validateMCPRefs(servers map[string]MCPServer) error {
	refs := map[string]bool{}
	for _, ref := range d.MCPRefs() {
		if _, ok := servers[ref.Server]; !ok {
			return fmt.Errorf("tool %q names MCP server %q, which mcpServers does not define", ref, ref.Server)
		}
		if ref.Tool == "" {
			return fmt.Errorf("tool %q names no tool: write %s/TOOL, or %s/* for all of its tools", ref, ref.Server, ref.Server)
		}
		if name := MCPToolName(ref.Server, ref.Tool); !ref.All() && !chat.FunctionNamePattern.MatchString(name) {
			return fmt.Errorf("tool %q: the model would see it as %q, which is not an OpenAI function name (%s)",
				ref, name, chat.FunctionNamePattern)
		}
		refs[ref.String()] = true
	}
	for _, a := range d.Approval {
		ref, ok := ParseToolRef(a)
		switch {
		case !ok:
			return fmt.Errorf("approval %q: name MCP tools as server/tool or server/* (a Go tool takes approval: true in tools)", a)
		case !refs[a] && !refs[ref.Server+"/*"] && !(ref.All() && slices.ContainsFunc(d.MCPRefs(), func(r ToolRef) bool { return r.Server == ref.Server })):
			return fmt.Errorf("approval %q names a tool the agent's tools do not include", a)
		}
	}
	return nil
}
