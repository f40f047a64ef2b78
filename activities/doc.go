// Package activities holds every piece of agentchat that does I/O: the model calls of
// each agent kind (through github.com/sashabaranov/go-openai) and the registry look-up
// that resolves a chat's participants, tool calls (Go functions and MCP servers), the
// message stores and history pages, and the transfer of chats (export, import,
// migration). Activities are methods of *Activities, built once per worker by New,
// which checks the configuration before the worker takes any task and builds one part
// per concern, each holding only what it needs: models (with one implementation per
// agent kind, agentKind: its channel and its model call), tools, stores, transfers,
// and unknowns (the answers for what this worker lacks). Activities.Register registers
// them all under their wire names (wire/names.go) on a worker or a test environment.
//
// Model calls never retry inside go-openai: each attempt is one activity attempt, and
// provider errors become Temporal application errors whose retryability follows the HTTP
// status (408, 409, 429 and 5xx retry, honouring Retry-After; other 4xx do not).
package activities
