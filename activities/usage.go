package activities

import (
	openai "github.com/sashabaranov/go-openai"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// chatUsage is a Chat Completions or Assistants run usage as a message records it
// (prompt_tokens, completion_tokens, prompt_tokens_details.cached_tokens).
func chatUsage(model string, u openai.Usage) *chat.Usage {
	out := &chat.Usage{Model: model, InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	return out
}

// responseUsage is a Responses usage as a message records it (input_tokens,
// output_tokens, input_tokens_details.cached_tokens); nil when there is none.
func responseUsage(model string, u *openai.ResponseUsage) *chat.Usage {
	if u == nil {
		return nil
	}
	out := &chat.Usage{Model: model, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	if u.InputTokensDetails != nil {
		out.CachedTokens = u.InputTokensDetails.CachedTokens
	}
	return out
}

// withUsage sets res's Usage to u, the legacy counts beside it, and Cost at the config's
// price of the agent's model (or of the model that answered).
func withUsage(res wire.InvokeResult, cfg agents.Config, def agents.Definition, u *chat.Usage) wire.InvokeResult {
	if u == nil {
		return res
	}
	res.Usage, res.PromptTokens, res.CompletionTokens = u, u.InputTokens, u.OutputTokens
	if p, ok := cfg.PriceOf(def.Model, u.Model); ok {
		res.Cost = p.Cost(*u)
	}
	return res
}
