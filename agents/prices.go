package agents

import (
	"fmt"
	"maps"
	"slices"

	"github.com/agentchat/agentchat/chat"
)

// Price is what a model costs, in a currency of the config's choosing (USD in the
// example) per million tokens, as a provider's price list gives it.
//
// YAML: {input: 2.5, output: 10, cachedInput: 1.25}. CachedInput is the price of input
// tokens read from the prompt cache; zero means Input.
type Price struct {
	Input       float64 `json:"input"`
	Output      float64 `json:"output"`
	CachedInput float64 `json:"cachedInput,omitempty"`
}

// Cost is the estimated cost of u at p: uncached input, cached input and output tokens,
// each at its price per million.
func (p Price) Cost(u chat.Usage) float64 {
	cached := min(max(u.CachedTokens, 0), max(u.InputTokens, 0))
	cachedPrice := p.CachedInput
	if cachedPrice == 0 {
		cachedPrice = p.Input
	}
	return (float64(max(u.InputTokens, 0)-cached)*p.Input + float64(cached)*cachedPrice +
		float64(max(u.OutputTokens, 0))*p.Output) / 1e6
}

// PriceOf returns the price of the model an agent named (model) or, failing that, of the
// model that answered (reported); false when the config prices neither.
func (c Config) PriceOf(model, reported string) (Price, bool) {
	if p, ok := c.Prices[model]; ok {
		return p, true
	}
	p, ok := c.Prices[reported]
	return p, ok && reported != ""
}

// checkPrices refuses a negative price, naming the model.
func checkPrices(prices map[string]Price) error {
	for _, model := range slices.Sorted(maps.Keys(prices)) {
		p := prices[model]
		if p.Input < 0 || p.Output < 0 || p.CachedInput < 0 {
			return fmt.Errorf("%w: prices of model %q: a price is negative", ErrInvalidConfig, model)
		}
	}
	return nil
}
