package systest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// turnMsgs is a user message id and an agent's text answer to it.
func turnMsgs(id string) []chat.Message {
	return []chat.Message{chat.TextMessage(id, chat.RoleUser, "", "q"), chat.TextMessage(id+"/1", chat.RoleAssistant, "A", "a")}
}

func runOf(msgs ...*msgState) *chatRun {
	c := &chatRun{limit: 1000, msgs: map[string]*msgState{}}
	for _, m := range msgs {
		c.accept(m, -1)
	}
	return c
}

// The history checks pass a chat whose turns are all there once, in order, and find a
// lost turn, a repeated one, turns out of order, a refused one written, and a turn
// that ends without an agent's answer.
func TestCheckHistory(t *testing.T) {
	answered := func(id string) *msgState {
		return &msgState{id: id, outcome: outAnswered, replies: []string{id + "/1"}}
	}
	good := append(turnMsgs("t1"), turnMsgs("t2")...)
	assert.Empty(t, checkHistory(runOf(answered("t1"), answered("t2")), good))
	// A reply-like id refused (sent, or posted) because t1's reply has it.
	takenSent := &msgState{id: "t1/1", outcome: outRefused, taken: true}
	takenPosted := &msgState{id: "t1/1", outcome: outPosted, posted: true, size: 10}
	assert.Empty(t, checkHistory(runOf(answered("t1"), takenSent), turnMsgs("t1")))
	assert.Empty(t, checkHistory(runOf(answered("t1"), takenPosted), turnMsgs("t1")))

	for name, tc := range map[string]struct {
		run  *chatRun
		msgs []chat.Message
		want string
	}{
		"lost":      {runOf(answered("t1"), answered("t2")), turnMsgs("t1"), `"t2" was answered but is not in the history`},
		"repeated":  {runOf(answered("t1")), append(turnMsgs("t1"), turnMsgs("t1")...), "appears twice"},
		"reordered": {runOf(answered("t1"), answered("t2")), append(turnMsgs("t2"), turnMsgs("t1")...), "answered after a turn of group"},
		"refused":   {runOf(&msgState{id: "t1", outcome: outRefused}), turnMsgs("t1"), "was refused but is in the history"},
		"no answer": {runOf(answered("t1")), []chat.Message{chat.TextMessage("t1", chat.RoleUser, "", "q"),
			{MessageID: "t1/1", Role: chat.RoleTool, Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: "c", Result: "r"}}}},
			"not an agent's answer"},
		"stray":       {runOf(answered("t1")), append(turnMsgs("t1"), turnMsgs("t9")...), `"t9" was never sent`},
		"lost signal": {runOf(&msgState{id: "t1", outcome: outPosted, posted: true, size: 10}), nil, `posted turn "t1"`},
		"taken, but free": {runOf(answered("t1"), &msgState{id: "t1/2", outcome: outRefused, taken: true}), turnMsgs("t1"),
			`"t1/2" was refused as a taken id, but no message has it`},
	} {
		got := strings.Join(checkHistory(tc.run, tc.msgs), "\n")
		assert.Contains(t, got, tc.want, name)
	}
}

// checkState finds a State that disagrees with History, a chat that is not idle, and
// a lastError that the script did not cause.
func TestCheckState(t *testing.T) {
	msgs := turnMsgs("t1")
	last := msgs[1]
	st := stateOf(2, &last)
	assert.Empty(t, checkState(&chatRun{}, st, msgs))
	st.MessageCount = 3
	st.PendingTurns = []string{"t2"}
	got := strings.Join(checkState(&chatRun{}, st, msgs), "\n")
	assert.Contains(t, got, "State counts 3 messages")
	assert.Contains(t, got, "not idle")
}

// stateOf is an idle running chat's State with n messages, the last one last.
func stateOf(n int, last *chat.Message) agentchat.StateResult {
	return agentchat.StateResult{Status: wire.StatusRunning, MessageCount: n, LastMessage: last}
}

// A posted turn of a chat whose store refuses may fail (the store refused its reply's
// body): the check reads what became of it from the chat's stream. It passes a turn
// whose turnFailed carries the store's refusal, and one the stream no longer shows; it
// finds one the stream shows accepted and then answered, or failed for another cause,
// while the history does not hold it.
func TestCheckHistoryReadsPostedTurnsFromTheStream(t *testing.T) {
	posted := func() *chatRun {
		c := runOf(&msgState{id: "t1", outcome: outPosted, posted: true, size: 10})
		c.refuses = true
		return c
	}
	storeFailure := &wire.TurnError{MessageID: "t1", Type: wire.ErrTypeTurnFailed, Message: "the reply's body: " + StoreRefusal}
	for name, tc := range map[string]struct {
		streamed map[string]streamedTurn
		want     string // "" when no violation
	}{
		"failed by the store": {map[string]streamedTurn{"t1": {accepted: true, end: wire.EventTurnFailed, err: storeFailure}}, ""},
		"trimmed from stream": {nil, ""},
		"answered, then lost": {map[string]streamedTurn{"t1": {accepted: true, end: wire.EventTurnDone}},
			`posted turn "t1" was accepted and ended turnDone, but is not in the history (lost)`},
		"accepted, no end": {map[string]streamedTurn{"t1": {accepted: true}},
			`posted turn "t1" was accepted and ended never, but is not in the history (lost)`},
		"failed otherwise": {map[string]streamedTurn{"t1": {accepted: true, end: wire.EventTurnFailed,
			err: &wire.TurnError{Type: wire.ErrTypeModelRejected, Message: "model refused"}}}, ""},
		"cancelled": {map[string]streamedTurn{"t1": {accepted: true, end: wire.EventTurnCancelled}}, ""},
	} {
		c := posted()
		c.streamed = tc.streamed
		got := strings.Join(checkHistory(c, nil), "\n")
		if tc.want == "" {
			assert.Empty(t, got, name)
		} else {
			assert.Contains(t, got, tc.want, name)
		}
	}
}

// A turn of an imported document that the importing chat resumed (its open call ran)
// and whose agent then failed ends on the call's result; a chat imported from that
// chat's document inherits the exemption for the same turn, and only for it: a turn
// of the document that ended on a tool message already in the first document is
// still found.
func TestATurnResumedAndFailedEndsOnItsToolResultDownTheLineage(t *testing.T) {
	user := chat.TextMessage("t1", chat.RoleUser, "", "q")
	call := chat.Message{MessageID: "t1/1", Role: chat.RoleAssistant, AgentID: "a",
		Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: "c1", Name: "record", Arguments: "{}"}}}
	result := chat.Message{MessageID: "t1/2", Role: chat.RoleTool, AgentID: "a",
		Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: "c1", Result: "ok"}}}
	resumed := []chat.Message{user, call, result}

	first := runOf() // imported the document [user, call]: the open call ran here
	first.prefix = ids(resumed[:2])
	assert.Empty(t, checkHistory(first, resumed))

	second := runOf() // imported first's document
	second.prefix = ids(resumed)
	assert.NotEmpty(t, checkHistory(second, resumed), "without the lineage, the turn ends on a tool message")
	second.inherit(first, resumed)
	assert.Empty(t, checkHistory(second, resumed))

	third := runOf() // imported second's document: the exemption goes on down
	third.prefix = ids(resumed)
	third.inherit(second, resumed)
	assert.Empty(t, checkHistory(third, resumed))

	other := runOf() // a chat whose document already ended the turn on the result
	other.prefix = ids(resumed)
	imported := runOf()
	imported.prefix = ids(resumed)
	imported.inherit(other, resumed)
	assert.Contains(t, strings.Join(checkHistory(imported, resumed), "\n"), `turn "t1" ends with tool message "t1/2"`)
}
