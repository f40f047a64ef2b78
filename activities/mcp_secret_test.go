package activities_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
)

// The values of an MCP server's headersEnv are secrets as the endpoints' API keys are:
// a server that echoes them, in a failed tool's text, in a refused call or in its
// answer to the connection, has them redacted, also when it quotes a header's
// credential without its scheme ("Token <value>" echoed as "<value>").
func TestMCPServerErrorsEchoingItsTokenAreRedacted(t *testing.T) {
	const apiKey, credential = "mcp-apikey-DISTINCT-0042", "mcp-credential-DISTINCT-0043"
	s := mcp.NewServer(&mcp.Implementation{Name: "echoes", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "fails"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		h := req.Extra.Header
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: fmt.Sprintf("key %s is not allowed; credential %s", h.Get("X-Api-Key"), h.Get("Authorization")[len("Token "):])}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "refuses"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, fmt.Errorf("refused %s", req.Extra.Header.Get("X-Api-Key"))
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	env := map[string]string{"TICKETS_KEY": apiKey, "TICKETS_AUTH": "Token " + credential}
	cfg, err := agents.ParseConfig(fmt.Appendf(nil, `
endpoints: {local: {baseURL: "http://127.0.0.1:1/v1"}}
mcpServers: {echoes: {url: %q, headersEnv: {X-Api-Key: TICKETS_KEY, Authorization: TICKETS_AUTH}}}
agents: [{id: helper, model: m, endpoint: local, tools: [echoes/*]}]
`, srv.URL))
	require.NoError(t, err)
	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(cfg), Getenv: func(k string) string { return env[k] }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = acts.Close() })
	for _, tool := range []string{"echoes__fails", "echoes__refuses"} {
		_, err := callTool(t, acts, tool)
		require.Error(t, err, tool)
		assert.NotContains(t, err.Error(), apiKey, tool)
		assert.NotContains(t, err.Error(), credential, tool)
		assert.Contains(t, err.Error(), activities.Redacted, tool)
	}

	// A server that refuses the connection, quoting the key.
	deny := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unknown key "+r.Header.Get("X-Api-Key"), http.StatusUnauthorized)
	}))
	t.Cleanup(deny.Close)
	cfg, err = agents.ParseConfig(fmt.Appendf(nil, `
endpoints: {local: {baseURL: "http://127.0.0.1:1/v1"}}
mcpServers: {deny: {url: %q, headersEnv: {X-Api-Key: TICKETS_KEY}}}
agents: [{id: helper, model: m, endpoint: local, tools: [deny/*]}]
`, deny.URL))
	require.NoError(t, err)
	_, err = activities.New(activities.Config{Registry: agents.NewRegistry(cfg), Getenv: func(k string) string { return env[k] }})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), apiKey)
}
