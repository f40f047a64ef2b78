package wire

import "github.com/agentchat/agentchat/chat"

// UsageTotal is the usage a chat's agent replies have cost so far: the sum of their
// model calls' usage (InvokeResult.Usage), answered turns and failed ones alike, as the
// provider reported it. Selectors', judges' and summaries' calls are not in it.
//
// JSON: {"agentId"?,"calls","inputTokens","outputTokens","cachedTokens"?,"cost"?}.
// AgentID is empty in a chat's total. Calls counts the model calls that reported usage;
// CachedTokens are part of InputTokens; Cost is the estimate at the worker's prices
// (agents.Price), zero when none of the calls' models had one.
type UsageTotal struct {
	AgentID      string  `json:"agentId,omitempty"`
	Calls        int     `json:"calls"`
	InputTokens  int     `json:"inputTokens"`
	OutputTokens int     `json:"outputTokens"`
	CachedTokens int     `json:"cachedTokens,omitempty"`
	Cost         float64 `json:"cost,omitempty"`
}

// Add returns t with one call's usage u, of estimated cost cost, added.
func (t UsageTotal) Add(u chat.Usage, cost float64) UsageTotal {
	t.Calls++
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
	t.CachedTokens += u.CachedTokens
	t.Cost += cost
	return t
}

// Plus returns t with o's counts added (its AgentID kept).
func (t UsageTotal) Plus(o UsageTotal) UsageTotal {
	t.Calls += o.Calls
	t.InputTokens += o.InputTokens
	t.OutputTokens += o.OutputTokens
	t.CachedTokens += o.CachedTokens
	t.Cost += o.Cost
	return t
}
