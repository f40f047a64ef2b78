// Package chatmcp serves agentchat chats as an MCP server (Model Context Protocol,
// through the official Go SDK), so that MCP clients (IDEs, desktop assistants, agents)
// drive durable chats: the tools start_chat, send_message, get_state, get_history,
// export_chat, approve_call and list_chats, each over the module root's agentchat.Client.
// `starter mcp` serves them over stdio, `worker --mcp-listen HOST:PORT` over
// streamable HTTP (Handler).
package chatmcp

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentchat/agentchat"
)

// Tool names, as MCP clients call them.
const (
	StartChatTool   = "start_chat"
	SendMessageTool = "send_message"
	GetStateTool    = "get_state"
	GetHistoryTool  = "get_history"
	ExportChatTool  = "export_chat"
	ApproveCallTool = "approve_call"
	ListChatsTool   = "list_chats"
)

// ToolNames are every tool the server serves, for help texts and tests.
var ToolNames = []string{StartChatTool, SendMessageTool, GetStateTool, GetHistoryTool, ExportChatTool, ApproveCallTool, ListChatsTool}

// ListChatsInput is list_chats' arguments: {"status":"running","agent":"helper"}.
type ListChatsInput struct {
	Status    string `json:"status,omitempty" jsonschema:"only chats of this status: running, completed, failed, migrating, migrated, starting, terminated, timedOut, canceled"`
	Agent     string `json:"agent,omitempty" jsonschema:"only chats with this participant (agent id)"`
	PageSize  int    `json:"pageSize,omitempty" jsonschema:"at most this many chats; default 100, at most 1000"`
	PageToken []byte `json:"pageToken,omitempty" jsonschema:"the nextPageToken of the previous page, to go on"`
}

// StartChatInput is start_chat's arguments: {"chatId":"support-42","agents":["helper"]}.
type StartChatInput struct {
	ChatID string   `json:"chatId,omitempty" jsonschema:"id of the new chat; empty means a new chat-<uuid>"`
	Agents []string `json:"agents" jsonschema:"agent ids of the worker's registry, in speaking order"`
}

// ChatInput names a chat: get_state's and export_chat's arguments.
type ChatInput struct {
	ChatID string `json:"chatId" jsonschema:"the chat's id"`
}

// SendMessageInput is send_message's arguments.
type SendMessageInput struct {
	ChatID    string `json:"chatId" jsonschema:"the chat's id"`
	Text      string `json:"text" jsonschema:"the user's message"`
	MessageID string `json:"messageId,omitempty" jsonschema:"client-chosen id that makes a retried send answer once; empty means a new one"`
}

// GetHistoryInput is get_history's arguments.
type GetHistoryInput struct {
	ChatID string `json:"chatId" jsonschema:"the chat's id"`
	Offset int    `json:"offset,omitempty" jsonschema:"index of the first message; default 0"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many messages; 0 means all from offset"`
}

// ApproveCallInput is approve_call's arguments.
type ApproveCallInput struct {
	ChatID   string `json:"chatId" jsonschema:"the chat's id"`
	CallID   string `json:"callId" jsonschema:"the tool call the chat waits for (send_message lists them)"`
	Approved bool   `json:"approved" jsonschema:"true runs the call; false rejects it"`
	Reason   string `json:"reason,omitempty" jsonschema:"why, for the record and for the model on a rejection"`
}

// NewServer returns an MCP server whose tools drive chats through c. A tool's failure
// (an unknown chat, a refused message, a chat that waits for an approval) is an error
// result with the client's message; nothing of a chat is lost. Arguments that do not
// match a tool's input schema get the JSON-RPC error -32602 and call no tool.
func NewServer(c *agentchat.Client, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "agentchat", Title: "agentchat chats", Version: version}, nil)
	schemas := toolSchemas{}
	s.AddReceivingMiddleware(refuseInvalidArguments(schemas))
	addTool(s, schemas, &mcp.Tool{Name: StartChatTool, Description: "Start a durable chat with agents of the worker's registry. " +
		"Returns the chat's state (its id, participants)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in StartChatInput) (*mcp.CallToolResult, any, error) {
			st, err := c.Start(ctx, agentchat.StartOptions{ChatID: in.ChatID, Participants: in.Agents})
			return jsonResult(st, err)
		})
	addTool(s, schemas, &mcp.Tool{Name: SendMessageTool, Description: "Send a user message to a chat and wait for its turn: " +
		"returns the agents' replies as text, and the tool calls that wait for approval (approve_call)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in SendMessageInput) (*mcp.CallToolResult, any, error) {
			res, err := c.Send(ctx, in.ChatID, agentchat.SendMessageInput{MessageID: in.MessageID, Text: in.Text})
			return turnResult(res, err)
		})
	addTool(s, schemas, &mcp.Tool{Name: GetStateTool, Description: "A chat's state: status, participants, counts, " +
		"last message, pending approvals (JSON, the State query)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in ChatInput) (*mcp.CallToolResult, any, error) {
			st, err := c.State(ctx, in.ChatID)
			return jsonResult(st, err)
		})
	addTool(s, schemas, &mcp.Tool{Name: GetHistoryTool, Description: "A chat's messages, oldest first (JSON, the History query)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in GetHistoryInput) (*mcp.CallToolResult, any, error) {
			h, err := c.History(ctx, in.ChatID, agentchat.HistoryInput{Offset: in.Offset, Limit: in.Limit})
			return jsonResult(h, err)
		})
	addTool(s, schemas, &mcp.Tool{Name: ExportChatTool, Description: "Export a chat as a chat-state document " +
		"(chat-state-v1 JSON, which import restores elsewhere); the digest is in _meta."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in ChatInput) (*mcp.CallToolResult, any, error) {
			doc, digest, err := c.Export(ctx, in.ChatID)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Meta: mcp.Meta{"digest": digest},
				Content: []mcp.Content{&mcp.TextContent{Text: string(doc)}}}, nil, nil
		})
	addTool(s, schemas, &mcp.Tool{Name: ApproveCallTool, Description: "Approve or reject a tool call the chat waits for; " +
		"returns what the resumed turn produced, as send_message does."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in ApproveCallInput) (*mcp.CallToolResult, any, error) {
			res, err := c.Approve(ctx, in.ChatID, agentchat.ApproveInput{CallID: in.CallID, Approved: in.Approved,
				Reason: in.Reason, By: "mcp"})
			return turnResult(res, err)
		})
	mcp.AddTool(s, &mcp.Tool{Name: ListChatsTool, Description: "List the chats of the worker's task queue, " +
		"open chats first, newest first: id, status, agents, turns, last activity (JSON); nextPageToken goes on."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in ListChatsInput) (*mcp.CallToolResult, any, error) {
			res, err := c.List(ctx, agentchat.ListOptions{Status: in.Status, Agent: in.Agent,
				PageSize: in.PageSize, PageToken: in.PageToken})
			return jsonResult(res, err)
		})
	return s
}

// Handler serves s over MCP's streamable HTTP transport (worker --mcp-listen). A POST
// that is not a call the server can serve gets 400 with a JSON-RPC error object
// (refuseMalformed) and reaches no session, which goes on serving its client; an
// answer without a JSON-RPC code gets one (withCode).
func Handler(s *mcp.Server) http.Handler {
	return refuseMalformed(s, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
}

// jsonResult is v as indented JSON text.
func jsonResult(v any, err error) (*mcp.CallToolResult, any, error) {
	if err != nil {
		return nil, nil, err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("encode the result: %w", err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
}

// turnResult is the text of a turn's replies ("Author: text", one a line), then one
// line per tool call that waits for approval; its structured content is the whole
// TurnResult.
func turnResult(res agentchat.TurnResult, err error) (*mcp.CallToolResult, any, error) {
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: TurnText(res)}},
		StructuredContent: res}, nil, nil
}

// TurnText is what send_message and approve_call answer: "(the call was already
// DECISION; nothing changed)" for an approval that repeated its call's decision, each
// reply's text as "Author: text", a line per tool call awaiting approval ("awaiting approval: call
// CALLID: TOOL(ARGUMENTS)"), and "(the chat is complete)" when it is.
func TurnText(res agentchat.TurnResult) string {
	var lines []string
	if res.AlreadyDecided != nil {
		lines = append(lines, fmt.Sprintf("(the call was already %s; nothing changed)", res.AlreadyDecided))
	}
	for _, m := range res.Messages {
		if text := m.Text(); text != "" {
			author := m.AuthorName
			if author == "" {
				author = string(m.Role)
			}
			lines = append(lines, author+": "+text)
		}
	}
	for _, p := range res.AwaitingApproval {
		lines = append(lines, fmt.Sprintf("awaiting approval: call %s: %s(%s)", p.CallID, p.Tool, p.Arguments))
	}
	if res.IsComplete {
		lines = append(lines, "(the chat is complete)")
	}
	return strings.Join(lines, "\n")
}

// Path is where Listen serves the MCP endpoint.
const Path = "/mcp"

// TokenEnv names the environment variable with the bearer token that worker
// --mcp-listen requires of MCP clients.
const TokenEnv = "AGENTCHAT_MCP_TOKEN"

// ListenOptions configure Listen.
type ListenOptions struct {
	// Token is the bearer token every request must carry (Authorization: Bearer
	// <token>, RFC 6750 and MCP's authorization rules; the scheme in any case, the
	// token compared in constant time, white space around it trimmed).
	// A request without it, or with another, gets 401 with a Bearer challenge and
	// reaches no tool. Required unless addr is a loopback address.
	Token string
}

// Listen serves s over streamable HTTP at addr (HOST:PORT; port 0 picks a free one)
// under Path, and returns the address it listens on and a function that stops it.
// The SDK's DNS-rebinding protection stays on: a request to a loopback address
// naming another Host gets 403.
// Errors: no opts.Token while HOST is not a loopback address (empty, 0.0.0.0, an
// interface's IP, a host name other than localhost), since every chat would be open
// to whoever reaches the port; the address cannot be listened on.
func Listen(addr string, s *mcp.Server, opts ListenOptions, logger *slog.Logger) (string, func(), error) {
	if err := CheckListen(addr, opts); err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("mcp-listen %s: %w", addr, err)
	}
	var h http.Handler = Handler(s)
	if token := strings.TrimSpace(opts.Token); token != "" { // as read from a file: a trailing newline
		h = requireBearer(token, h, logger)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("MCP server stopped", "error", err)
		}
	}()
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// CheckListen returns the error Listen would return for addr and opts before it
// listens: addr is not HOST:PORT, or opts has no Token while HOST is not a loopback
// address. The worker calls it before it connects to Temporal.
func CheckListen(addr string, opts ListenOptions) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("mcp-listen %s: %w", addr, err)
	}
	if strings.TrimSpace(opts.Token) == "" && !loopback(host) {
		return fmt.Errorf("mcp-listen %s: other hosts could reach every chat there without authentication: "+
			"set %s to a bearer token that clients then send (Authorization: Bearer <token>), or listen on 127.0.0.1", addr, TokenEnv)
	}
	return nil
}

// loopback reports whether host (of HOST:PORT) is localhost or a loopback IP.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// requireBearer lets through requests whose Authorization header is "Bearer token"
// (the scheme in any case, the token compared in constant time), as the codec server
// checks its token. Others get 401 with WWW-Authenticate: Bearer, and error=
// "invalid_token" when a bearer token was sent (RFC 6750 §3, §3.1); each refusal is
// logged with its reason, and the token is never echoed nor logged.
func requireBearer(token string, next http.Handler, logger *slog.Logger) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header := r.Header.Get("Authorization")
		scheme, got, _ := strings.Cut(header, " ")
		if strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(got), want) == 1 {
			next.ServeHTTP(w, r)
			return
		}
		challenge, reason := `Bearer realm="agentchat mcp"`, "no Authorization header"
		switch {
		case strings.EqualFold(scheme, "Bearer"):
			challenge, reason = challenge+`, error="invalid_token"`, "not the token of "+TokenEnv
		case header != "":
			reason = "not the Bearer scheme"
		}
		logger.Warn("MCP request refused", "reason", reason, "remote", r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", challenge)
		http.Error(w, "mcp: unauthorized: send Authorization: Bearer <token> (the worker's "+TokenEnv+")", http.StatusUnauthorized)
	})
}
