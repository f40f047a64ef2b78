package strategies

import "github.com/agentchat/agentchat/chat"

// DefaultContextTokens is the context budget of an agent that sets none (the agent
// config's contextTokens): 100,000 estimated tokens, under the 128,000-token context
// window of the OpenAI models agentchat is tried with, leaving room for the reply.
const DefaultContextTokens = 100_000

// MinContextTokens is the smallest context budget an agent may set: room for a system
// message and a turn.
const MinContextTokens = 1_000

// EstimateTokens is the tokens a message of n encoded bytes is counted as against a
// context budget: n/4 (OpenAI's rule of thumb of about 4 bytes of English a token,
// generous for JSON) plus 8 for the message's framing.
func EstimateTokens(n int) int { return n/4 + 8 }

// Budget returns the messages of view to send to a model whose context budget is
// tokens, each message counted as EstimateTokens(bytesOf(m)): the whole view when it
// fits; else every system message, then the latest other messages that fit, never a
// tool result cut off from its call nor a call from its results (the truncate
// reducer's rule, callBoundary). The latest message is always kept, with its call's
// round when it is a tool result, even when it alone passes the budget: the provider
// then answers context_length_exceeded. tokens <= 0 means DefaultContextTokens. The
// input is not modified. bytesOf is the message's encoded size (wire.MessageBytes).
func Budget(view []chat.Message, tokens int, bytesOf func(chat.Message) int) []chat.Message {
	if tokens <= 0 {
		tokens = DefaultContextTokens
	}
	cost := make([]int, len(view))
	total := 0
	for i, m := range view {
		cost[i] = EstimateTokens(bytesOf(m))
		total += cost[i]
	}
	if total <= tokens {
		return view
	}
	var system, rest []chat.Message
	var restCost []int
	left := tokens
	for i, m := range view {
		if m.Role == chat.RoleSystem {
			system = append(system, m)
			left -= cost[i]
		} else {
			rest, restCost = append(rest, m), append(restCost, cost[i])
		}
	}
	if len(rest) == 0 {
		return view
	}
	start := len(rest) - 1 // the latest message always goes
	left -= restCost[start]
	for start > 0 && restCost[start-1] <= left {
		start--
		left -= restCost[start]
	}
	start = callBoundary(rest, start)
	return append(system, rest[start:]...)
}
