// Package agents holds agent definitions and their registry, loaded from a YAML or JSON
// config file (LoadConfig, ParseConfig, NewRegistry), and the agent kinds and their
// channels. The config also declares MCP servers (MCPServer) whose tools agents name as
// "server/tool" or "server/*"; the worker connects to them (package activities).
//
// Definitions are stateless and live on the worker: a chat names its participants by
// agent id and never carries instructions, endpoints or keys (DESIGN.md). The
// selection and termination strategies and the reducers are in package strategies; the
// payloads a chat and its activities exchange are in package wire.
package agents
