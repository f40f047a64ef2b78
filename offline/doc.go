// Package offline is a deterministic, OpenAI-compatible chat-completions server.
//
// It stands in for a real LLM endpoint in the demo, in the worker's --offline mode and
// in tests. It never contacts any real model and needs no network beyond the loopback
// listener it opens: every answer is computed from the request it receives (or from a
// script), so the same conversation always gets the same text. Every reply says it is
// offline: text replies start with "[offline]".
//
// The server is reached through the real go-openai client over real HTTP, so the
// whole client path (request encoding, error decoding, Server-Sent Events streaming,
// tool-call reassembly) is exercised unchanged:
//
//	s, err := offline.Start(offline.Options{})
//	if err != nil { ... }
//	defer s.Close()
//	cfg := openai.DefaultConfig("any-key") // the key is never checked
//	cfg.BaseURL = s.URL()                  // "http://127.0.0.1:<port>/v1"
//	client := openai.NewClientWithConfig(cfg)
//
// Endpoints (shapes follow OpenAI's API reference, https://platform.openai.com/docs/api-reference):
//
//   - POST /v1/chat/completions: an openai.ChatCompletionResponse, or with
//     "stream": true a text/event-stream of openai.ChatCompletionStreamResponse chunks
//     ending in "data: [DONE]".
//   - POST /v1/responses, GET /v1/responses/{id}: the Responses API; with
//     previous_response_id the server rebuilds the whole conversation from the chain,
//     so a reply's message count shows what the service has seen (ResponsesAgent).
//   - /v1/assistants, /v1/threads, /v1/threads/{id}/messages, /v1/threads/{id}/runs:
//     Assistants threads and runs; a run's reply is computed from the whole thread
//     (OpenAIAssistantAgent).
//   - GET /v1/models and GET /v1/models/offline: the single model "offline".
//   - anything else: 404 (unknown path) or 405 (known path, wrong method) with an
//     OpenAI-style error body {"error":{"message","type","param","code"}}.
//
// The calling agent is named by the AgentHeader request header. Unscripted requests get
// the default reply (see DefaultText), which quotes the conversation it received so a
// reader can see which context reached the model. Options.Scripts and SetScript give an
// agent a list of scripted replies (text, tool calls, HTTP errors, delays); an agent's
// own call gets the one at its place in the conversation (the number of its replies
// the request holds), so a script goes on where it was after a worker restart.
//
// The server is as strict as OpenAI: a request that breaks one of OpenAI's request
// rules (Validate; for Responses, call pairing, names, roles, an unknown
// previous_response_id) is refused as OpenAI refuses it, 400 (404) with an
// invalid_request_error naming the param, and recorded (Server.Violations), so that a
// test sees every request the project built that a real provider would refuse.
package offline
