package chat

// Usage is what one model call that produced an assistant message cost, as the provider
// reported it (chat-state-v1.md, the message's optional "usage").
//
// JSON: {"model"?,"inputTokens","outputTokens","cachedTokens"?}. Model is the model that
// answered (the response's "model"); InputTokens are the prompt's tokens (Chat
// Completions usage.prompt_tokens, Responses usage.input_tokens, an Assistants run's
// usage.prompt_tokens); OutputTokens the completion's (completion_tokens,
// output_tokens); CachedTokens those of the input the provider read from its prompt
// cache (prompt_tokens_details.cached_tokens, input_tokens_details.cached_tokens), part
// of InputTokens. Counts are never negative.
type Usage struct {
	Model        string `json:"model,omitempty"`
	InputTokens  int    `json:"inputTokens"`
	OutputTokens int    `json:"outputTokens"`
	CachedTokens int    `json:"cachedTokens,omitempty"`
}
