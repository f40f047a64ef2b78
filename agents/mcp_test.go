package agents

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

const mcpConfig = `
endpoints: {local: {baseURL: "http://localhost:1/v1"}}
tools: {clock: {}}
mcpServers:
  files:   {command: npx, args: ["-y", "@modelcontextprotocol/server-filesystem", "${DOCS:-/srv/docs}"], env: {GITHUB_TOKEN: MY_GH_TOKEN}}
  tickets: {url: "https://tickets.example.com/mcp", headersEnv: {Authorization: TICKETS_TOKEN}, timeout: 1m, maxAttempts: 2}
  audit:   {url: "http://localhost:9/mcp", approval: true}
agents:
  - id: helper
    model: m
    endpoint: local
    tools: [files/*, tickets/create_ticket, tickets/list_tickets, audit/*, clock]
    approval: [tickets/create_ticket]
`

func TestParseConfigMCPServers(t *testing.T) {
	cfg, err := ParseConfig([]byte(mcpConfig))
	require.NoError(t, err)
	files := cfg.MCPServers["files"]
	assert.Equal(t, "npx", files.Command)
	assert.Equal(t, []string{"-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"}, files.Args, "${VAR:-fallback} expanded")
	assert.Equal(t, map[string]string{"GITHUB_TOKEN": "MY_GH_TOKEN"}, files.Env)
	assert.Equal(t, "https://tickets.example.com/mcp", cfg.MCPServers["tickets"].URL)

	r := NewRegistry(cfg)
	d, _ := r.Get("helper")
	assert.Equal(t, []string{"clock"}, d.GoTools())
	assert.Equal(t, []ToolRef{{"files", "*"}, {"tickets", "create_ticket"}, {"tickets", "list_tickets"}, {"audit", "*"}}, d.MCPRefs())

	create := r.MCPTool(d, "tickets", "create_ticket")
	assert.True(t, create.Approval, "named in the agent's approval")
	assert.Equal(t, wire.Duration(time.Minute), create.Timeout)
	assert.Equal(t, 2, create.MaxAttempts)
	assert.False(t, r.MCPTool(d, "tickets", "list_tickets").Approval)
	assert.True(t, r.MCPTool(d, "audit", "anything").Approval, "the server asks approval for all its tools")
	assert.False(t, r.MCPTool(d, "files", "read_file").Approval)

	ps, err := r.Resolve([]string{"helper"})
	require.NoError(t, err)
	require.Len(t, ps[0].Tools, 1, "the registry resolves Go tools; the worker adds MCP tools from the servers' lists")
	assert.Equal(t, "clock", ps[0].Tools[0].Name)
	assert.Equal(t, "tickets__create_ticket", MCPToolName("tickets", "create_ticket"))
}

func TestParseConfigRefusesBadMCPServers(t *testing.T) {
	cases := map[string]struct{ servers, tools, approval, want string }{
		"no transport":         {`{s: {}}`, `[s/*]`, `[]`, "give command"},
		"both transports":      {`{s: {command: x, url: "http://h/mcp"}}`, `[s/*]`, `[]`, "not both"},
		"args without command": {`{s: {url: "http://h/mcp", args: [a]}}`, `[s/*]`, `[]`, "args and env are for a command"},
		"headers on stdio":     {`{s: {command: x, headersEnv: {Authorization: TOKEN}}}`, `[s/*]`, `[]`, "headersEnv is for a url"},
		"not http":             {`{s: {url: "ftp://h/mcp"}}`, `[s/*]`, `[]`, "not an http or https URL"},
		"credentials in url":   {`{s: {url: "https://u:secret@h/mcp"}}`, `[s/*]`, `[]`, "must not hold credentials"},
		"secret as a value":    {`{s: {url: "https://h/mcp", headersEnv: {Authorization: "Bearer abc"}}}`, `[s/*]`, `[]`, "NAME of the worker's environment variable"},
		"env value":            {`{s: {command: x, env: {TOKEN: "abc-123"}}}`, `[s/*]`, `[]`, "NAME of the worker's environment variable"},
		"double underscore":    {`{a__b: {command: x}}`, `[a__b/*]`, `[]`, "server name"},
		"negative":             {`{s: {command: x, timeout: -1s}}`, `[s/*]`, `[]`, "must not be negative"},
		"unknown server":       {`{s: {command: x}}`, `[t/x]`, `[]`, `names MCP server "t"`},
		"no tool":              {`{s: {command: x}}`, `[s/]`, `[]`, "names no tool"},
		"name too long":        {`{s: {command: x}}`, `[s/` + strings.Repeat("x", 62) + `]`, `[]`, "not an OpenAI function name"},
		"bad tool chars":       {`{s: {command: x}}`, `[s/a.b]`, `[]`, "not an OpenAI function name"},
		"approval not used":    {`{s: {command: x}}`, `[s/a]`, `[s/b]`, "do not include"},
		"approval of Go tool":  {`{s: {command: x}}`, `[s/a]`, `[clock]`, "server/tool"},
		"unknown field":        {`{s: {command: x, headers: {A: b}}}`, `[s/*]`, `[]`, "unknown field"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			yaml := "mcpServers: " + c.servers + "\nagents: [{id: a, model: m, tools: " + c.tools + ", approval: " + c.approval + "}]\n"
			_, err := ParseConfig([]byte(yaml))
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrInvalidConfig), "%v", err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestParseConfigRefusesAGoToolThatClashesWithAnMCPServer(t *testing.T) {
	_, err := ParseConfig([]byte("tools: {files__read: {}}\nmcpServers: {files: {command: x}}\nagents: [{id: a, model: m, tools: [files__read]}]\n"))
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), "clash")
}

// The example config's commented MCP example, uncommented, is a valid config.
func TestExampleConfigMCPExampleParses(t *testing.T) {
	clearOpenAIEnv(t)
	var out []string
	block := ""
	for _, line := range strings.Split(string(ExampleConfig), "\n") {
		switch {
		case line == "# mcpServers:":
			block = "servers"
		case strings.HasPrefix(line, "  # - id: librarian"):
			block = "agent"
		case strings.TrimSpace(line) == "":
			block = ""
		}
		switch block {
		case "servers":
			line = strings.TrimPrefix(line, "# ")
		case "agent":
			line = "  " + strings.TrimPrefix(line, "  # ")
		}
		out = append(out, line)
	}
	cfg, err := ParseConfig([]byte(strings.Join(out, "\n")))
	require.NoError(t, err)
	require.Len(t, cfg.MCPServers, 2)
	assert.Equal(t, map[string]string{"Authorization": "TICKETS_TOKEN"}, cfg.MCPServers["tickets"].HeadersEnv)
	d, ok := NewRegistry(cfg).Get("librarian")
	require.True(t, ok)
	assert.Equal(t, []string{"files/*", "tickets/create_ticket", "clock"}, d.Tools)
	assert.True(t, NewRegistry(cfg).MCPTool(d, "tickets", "create_ticket").Approval)
}

// Any config text gives a config or an error, never a panic; an accepted one has one
// transport per MCP server and only explicit MCP tools whose function name OpenAI takes.
func FuzzParseConfigMCPServers(f *testing.F) {
	f.Add(mcpConfig)
	f.Add("mcpServers: {s: {url: \"http://h/mcp\", headersEnv: {A: B}}}\nagents: [{id: a, model: m, tools: [s/x], approval: [s/x]}]")
	f.Add("mcpServers: {s: {command: x, env: {A: B}}}\nagents: [{id: a, model: m, tools: [s/*], approval: [s/*]}]")
	f.Fuzz(func(t *testing.T, text string) {
		cfg, err := ParseConfig([]byte(text))
		if err != nil {
			return
		}
		for name, s := range cfg.MCPServers {
			if (s.Command == "") == (s.URL == "") {
				t.Fatalf("server %q: command %q, url %q: want exactly one", name, s.Command, s.URL)
			}
			if strings.Contains(name, MCPToolSeparator) {
				t.Fatalf("server name %q holds %q", name, MCPToolSeparator)
			}
		}
		for _, d := range cfg.Agents {
			for _, ref := range d.MCPRefs() {
				if _, ok := cfg.MCPServers[ref.Server]; !ok {
					t.Fatalf("agent %q: %s names no server", d.ID, ref)
				}
				if !ref.All() && !chat.FunctionNamePattern.MatchString(MCPToolName(ref.Server, ref.Tool)) {
					t.Fatalf("agent %q: %s is not a function name", d.ID, ref)
				}
			}
		}
	})
}
