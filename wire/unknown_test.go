package wire

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A name one or two edits from a known one is suggested, whatever its case; one far
// from every known name, or already known, is not.
func TestDidYouMeanSuggestsTheClosestKnownName(t *testing.T) {
	known := []string{"clerk", "helper", "reviewer", "writer"}
	assert.Equal(t, ` (did you mean "helper"?)`, DidYouMean([]string{"helpr"}, known))
	assert.Equal(t, ` (did you mean "helper"?)`, DidYouMean([]string{"Helper"}, known))
	assert.Equal(t, ` (did you mean "writer" or "clerk"?)`, DidYouMean([]string{"writr", "clrk"}, known))
	assert.Equal(t, ` (did you mean "clerk"?)`, DidYouMean([]string{"celrk"}, known), "two letters swapped are one edit")
	assert.Equal(t, ` (did you mean "chat"?)`, DidYouMean([]string{"caht"}, []string{"chat", "json"}))
	assert.Empty(t, DidYouMean([]string{"storyteller"}, known))
	assert.Empty(t, DidYouMean([]string{"ab"}, []string{"xy"}))
	assert.Empty(t, DidYouMean([]string{"helpr"}, nil))
	msg := UnknownEverywhere(map[string]UnknownAgentDetails{"w1": {Worker: "w1", Unknown: []string{"helpr"}, Known: known}}, time.Second)
	assert.Contains(t, msg, `unknown agent id(s) "helpr" (did you mean "helper"?): no worker`)
}
