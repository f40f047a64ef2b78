package cli_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
)

// A decision on a call decided before: the same decision again is idempotent (exit 0,
// it says the call was decided already and prints what its turn did, running
// nothing), a different one fails with "already decided: <the earlier decision>" and
// changes nothing. Both whether the call's turn has ended or still waits for another
// call.
func TestADecidedCallKeepsItsDecision(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: toolsConfig, Model: offline.Options{Scripts: map[string][]offline.Reply{
		"clerk": {
			{ToolCalls: []offline.ToolCall{
				{ID: "call_a", Name: "refund", Arguments: `{"order":"1001"}`},
				{ID: "call_b", Name: "refund", Arguments: `{"order":"1003"}`},
			}},
			{Text: "Neither refunded."},
		},
	}}})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "clerk")
	ok(t, h, "send", "--chat", id, "--id", "m1", "Refund both")

	// call_a rejected while call_b still waits.
	first := ok(t, h, "approve", "--chat", id, "--call", "call_a", "--reject", "--reason", "too old", "--by", "Bob")
	line := fails(t, h, "approve", "--chat", id, "--call", "call_a")
	assert.Contains(t, line, `call "call_a" is already decided: rejected by Bob: too old`)
	r := ok(t, h, "approve", "--chat", id, "--call", "call_a", "--reject")
	assert.Equal(t, "call call_a was already rejected by Bob: too old; nothing changed", r.lines()[0])
	assert.Equal(t, first.lines(), r.lines()[1:], "the repeat prints what the first decision did")
	res := decode[agentchat.TurnResult](t, ok(t, h, "approve", "--chat", id, "--call", "call_a", "--reject", "--json"))
	if assert.NotNil(t, res.AlreadyDecided) {
		assert.False(t, res.AlreadyDecided.Approved)
		assert.Equal(t, "too old", res.AlreadyDecided.Reason)
	}
	assert.Equal(t, 1, h.Model.Requests("clerk"), "the turn still waits for call_b")

	// call_b rejected too: the turn ends; both paths once more, after it.
	ok(t, h, "approve", "--chat", id, "--call", "call_b", "--reject")
	assert.Equal(t, 2, h.Model.Requests("clerk"))
	for _, call := range []string{"call_a", "call_b"} {
		line = fails(t, h, "approve", "--chat", id, "--call", call)
		assert.Contains(t, line, `call "`+call+`" is already decided: rejected`)
		r = ok(t, h, "approve", "--chat", id, "--call", call, "--reject")
		assert.Contains(t, r.lines()[0], "call "+call+" was already rejected")
		assert.Contains(t, r.out, "Clerk: [offline] clerk: Not done: refund (call_a) failed: rejected by a person: too old; refund (call_b) failed: rejected by a person.",
			"the repeat prints the turn's end (the offline clerk answers from the rejections)")
	}
	assert.Equal(t, 2, h.Model.Requests("clerk"), "no decision again resumed anything")
	hist := decode[agentchat.HistoryResult](t, ok(t, h, "history", "--chat", id, "--json"))
	results := 0
	for _, m := range hist.Messages {
		for _, c := range m.Contents {
			if c.Type == "functionResult" {
				results++
				assert.Contains(t, c.Error, "rejected by a person", "a call ran: %s", c.CallID)
			}
		}
	}
	assert.Equal(t, 2, results, "one result a call")
}
