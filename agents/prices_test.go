package agents_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
)

const priced = `
prices:
  gpt-4o: {input: 2.5, output: 10, cachedInput: 1.25}
  gpt-4o-mini-2024-07-18: {input: 0.15, output: 0.6}
agents:
  - {id: a, model: gpt-4o}
`

// Prices are per million tokens; cached input at its own price (default the input's);
// the agent's model is looked up first, then the model that answered.
func TestPriceCost(t *testing.T) {
	cfg, err := agents.ParseConfig([]byte(priced))
	require.NoError(t, err)
	p, ok := cfg.PriceOf("gpt-4o", "gpt-4o-2024-08-06")
	require.True(t, ok)
	u := chat.Usage{InputTokens: 1_000_000, CachedTokens: 400_000, OutputTokens: 100_000}
	assert.InDelta(t, 0.6*2.5+0.4*1.25+0.1*10, p.Cost(u), 1e-9)

	p, ok = cfg.PriceOf("gpt-4o-mini", "gpt-4o-mini-2024-07-18")
	require.True(t, ok, "priced by the model that answered")
	assert.InDelta(t, 0.15+0.6, p.Cost(chat.Usage{InputTokens: 1_000_000, CachedTokens: 1_000_000, OutputTokens: 1_000_000}), 1e-9)

	_, ok = cfg.PriceOf("other", "")
	assert.False(t, ok)
}

func TestNegativePriceIsRefused(t *testing.T) {
	_, err := agents.ParseConfig([]byte("prices:\n  m: {input: -1, output: 1}\nagents:\n  - {id: a, model: m}\n"))
	require.Error(t, err)
	assert.True(t, errors.Is(err, agents.ErrInvalidConfig))
	assert.Contains(t, err.Error(), `prices of model "m": a price is negative`)
}
