// Command stdioserver is an MCP server over stdio, built with the Go SDK, for the tests
// of MCP servers that die: tool pid answers the process id; tool exit makes the
// process exit in the middle of the call, unless the file named by
// $STDIOSERVER_ONCE exists (it is then created first, so that only the first call of
// a test dies).
package main

import (
	"context"
	"errors"
	"log"
	"os"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "stdioserver", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "The server's process id"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(strconv.Itoa(os.Getpid())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "exit", Description: "Exit during the call"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			if once := os.Getenv("STDIOSERVER_ONCE"); once != "" {
				if _, err := os.Stat(once); err == nil {
					return text("survived " + strconv.Itoa(os.Getpid())), nil, nil
				} else if !errors.Is(err, os.ErrNotExist) {
					return nil, nil, err
				}
				if err := os.WriteFile(once, nil, 0o600); err != nil {
					return nil, nil, err
				}
			}
			os.Exit(3)
			return nil, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
