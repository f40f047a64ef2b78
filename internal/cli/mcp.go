package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentchat/agentchat/internal/chatmcp"
)

// mcpCmd serves chats as an MCP server over stdio (package chatmcp), for an MCP client
// that starts it: its tools (chatmcp.ToolNames) drive the chats of the task queue.
func mcpCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve chats as an MCP server over stdio (tools " + strings.Join(chatmcp.ToolNames, ", ") + ")",
		Long: `Serve agentchat chats to an MCP client (an IDE, a desktop assistant, an agent) over
stdio: the client starts this command and calls its tools start_chat (chatId, agents),
send_message (chatId, text: the replies' text), get_state, get_history and export_chat
(chatId), approve_call (chatId, callId, approved, reason) and list_chats (status,
agent, pageToken). A worker must be running
on the task queue. Standard output carries the protocol only; it runs until the client
closes standard input. A line that is not a JSON-RPC message gets a JSON-RPC error
(-32700 parse error, -32600 invalid request; unknown methods -32601, params of the
wrong shape -32602) and the session goes on.`,
		Example: `  go run ./starter mcp --task-queue agentchat`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			return chatmcp.NewServer(c, "1").Run(cmd.Context(), chatmcp.Stdio())
		},
	}
}
