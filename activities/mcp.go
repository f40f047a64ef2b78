package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// MCPConnectTimeout bounds connecting to one MCP server and listing its tools: at
// worker start, and again when a call finds the server gone (a stdio server is then
// started again).
const MCPConnectTimeout = 30 * time.Second

// IdempotencyKeyMeta is the key of the idempotency key (IdempotencyKey) in the _meta of
// every MCP tools/call agentchat sends (wire.MCPIdempotencyKeyMeta): the same for every
// attempt of one call, so that a server with side effects can deduplicate.
const IdempotencyKeyMeta = wire.MCPIdempotencyKeyMeta

// mcpTool is one tool of an MCP server as the model sees it.
type mcpTool struct {
	server, name string // the server's name in the config; the tool's name on the server
	description  string
	parameters   json.RawMessage // the tool's inputSchema
}

// mcpServer is the worker's connection to one MCP server of the config. It reconnects
// (starting a stdio server again) when a call finds the session gone.
type mcpServer struct {
	name   string
	cfg    agents.MCPServer
	getenv func(string) string
	logger *slog.Logger

	// connecting is held while a session is made, so that calls that find the server
	// gone at once start one session, not one each.
	connecting sync.Mutex
	mu         sync.Mutex
	session    *mcp.ClientSession // nil when not connected
	tools      map[string]mcpTool // by the tool's name on the server
}

// mcpHub holds the worker's MCP servers, by name.
type mcpHub struct {
	servers map[string]*mcpServer
}

// connectMCP connects to every MCP server of cfg and lists its tools; explicitly named
// tools ("server/tool") that a server does not offer are an error.
func connectMCP(ctx context.Context, cfg agents.Config, getenv func(string) string, logger *slog.Logger) (*mcpHub, error) {
	h := &mcpHub{servers: map[string]*mcpServer{}}
	for _, server := range cfg.MCPServers { // secrets before any server can echo one
		for _, v := range server.Env {
			addSecret(getenv(v))
		}
		for _, v := range server.HeadersEnv {
			addSecret(getenv(v))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.MCPServers)) {
		s := &mcpServer{name: name, cfg: cfg.MCPServers[name], getenv: getenv, logger: logger}
		h.servers[name] = s
		if err := s.connect(ctx); err != nil {
			h.close()
			return nil, redactError(fmt.Errorf("activities: MCP server %q: %w", name, err))
		}
	}
	for _, d := range cfg.Agents {
		for _, ref := range d.MCPRefs() {
			if ref.All() {
				continue
			}
			if _, ok := h.servers[ref.Server].tool(ref.Tool); !ok {
				return nil, errors.Join(fmt.Errorf("activities: agent %q uses tool %q, which MCP server %q does not offer; it has %s",
					d.ID, ref, ref.Server, wire.QuotedList(h.servers[ref.Server].toolNames())), h.close())
			}
		}
	}
	return h, nil
}

// close ends every session (a stdio server's process with it).
func (h *mcpHub) close() error {
	var errs []error
	for _, s := range h.servers {
		s.mu.Lock()
		if s.session != nil {
			errs = append(errs, s.session.Close())
			s.session = nil
		}
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}

// transport returns a new transport to the server: a child process for a command, a
// streamable HTTP client with the headers of HeadersEnv for a URL.
func (s *mcpServer) transport() mcp.Transport {
	if s.cfg.Command != "" {
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Env = []string{}
		for _, v := range agents.MCPBaseEnv {
			if val, ok := os.LookupEnv(v); ok {
				cmd.Env = append(cmd.Env, v+"="+val)
			}
		}
		for child, v := range s.cfg.Env {
			cmd.Env = append(cmd.Env, child+"="+s.getenv(v))
		}
		cmd.Stderr = &logWriter{logger: s.logger, server: s.name}
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	headers := http.Header{}
	for h, v := range s.cfg.HeadersEnv {
		headers.Set(h, s.getenv(v))
	}
	return &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, MaxRetries: 1,
		HTTPClient: &http.Client{Transport: &headerTransport{headers: headers, next: http.DefaultTransport}}}
}

// connect starts a session and lists the tools.
func (s *mcpServer) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, MCPConnectTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "agentchat", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			go s.relist() // not on the session's own goroutine: the list is a request on it
		},
	})
	session, err := client.Connect(ctx, s.transport(), nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	tools, err := s.list(ctx, session)
	if err != nil {
		_ = session.Close()
		return err
	}
	s.mu.Lock()
	s.session, s.tools = session, tools
	s.mu.Unlock()
	go func() {
		err := session.Wait() // the process exited, or the connection broke
		s.mu.Lock()
		if s.session == session {
			s.session = nil
			s.logger.Warn("MCP server session ended; the next call connects again", "server", s.name, "error", redactError(err))
		}
		s.mu.Unlock()
	}()
	return nil
}

// list returns the server's tools whose function name (MCPToolName) OpenAI takes; the
// others are left out with a warning (a "server/tool" entry naming one is refused by
// the config already).
func (s *mcpServer) list(ctx context.Context, session *mcp.ClientSession) (map[string]mcpTool, error) {
	tools := map[string]mcpTool{}
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		if name := agents.MCPToolName(s.name, t.Name); !chat.FunctionNamePattern.MatchString(name) {
			s.logger.Warn("MCP tool left out: its function name is not one OpenAI takes", "server", s.name,
				"tool", t.Name, "name", name, "pattern", chat.FunctionNamePattern.String())
			continue
		}
		params, err := json.Marshal(t.InputSchema)
		if err != nil || string(params) == "null" {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		tools[t.Name] = mcpTool{server: s.name, name: t.Name, description: t.Description, parameters: params}
	}
	return tools, nil
}

// relist lists the tools again after notifications/tools/list_changed.
func (s *mcpServer) relist() {
	s.mu.Lock()
	session := s.session
	s.mu.Unlock()
	if session == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), MCPConnectTimeout)
	defer cancel()
	tools, err := s.list(ctx, session)
	if err != nil {
		s.logger.Warn("MCP server changed its tools but listing them failed; keeping the old list", "server", s.name, "error", err)
		return
	}
	s.mu.Lock()
	if s.session == session {
		s.tools = tools
	}
	s.mu.Unlock()
}

// tool returns one of the server's listed tools.
func (s *mcpServer) tool(name string) (mcpTool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tools[name]
	return t, ok
}

// toolNames returns the names of the server's listed tools, sorted.
func (s *mcpServer) toolNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.tools))
}

// live returns the session, connecting again (starting a stdio server again) when the
// last one ended.
func (s *mcpServer) live(ctx context.Context) (*mcp.ClientSession, error) {
	current := func() *mcp.ClientSession {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.session
	}
	if session := current(); session != nil {
		return session, nil
	}
	s.connecting.Lock()
	defer s.connecting.Unlock()
	if session := current(); session != nil {
		return session, nil // another call connected meanwhile
	}
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	if session := current(); session != nil {
		return session, nil
	}
	return nil, errors.New("the session ended as it started")
}

// drop ends session after a transport failure, so that the next call connects again.
func (s *mcpServer) drop(session *mcp.ClientSession) {
	s.mu.Lock()
	if s.session == session {
		s.session = nil
	}
	s.mu.Unlock()
	_ = session.Close()
}

// headerTransport sets fixed headers on every request (an MCP server's HeadersEnv).
type headerTransport struct {
	headers http.Header
	next    http.RoundTripper
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header[k] = v
	}
	return t.next.RoundTrip(r)
}

// logWriter passes a stdio server's standard error to the worker's log, line by line,
// redacted (redactSecrets: the server may print the variables its env gave it).
type logWriter struct {
	logger *slog.Logger
	server string
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.logger.Debug("MCP server stderr", "server", w.server, "text", redactSecrets(string(p)))
	return len(p), nil
}
