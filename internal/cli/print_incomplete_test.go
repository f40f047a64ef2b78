package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// /history and history mark a stopped turn's partial reply, which the History JSON
// marks "incomplete": true.
func TestPrintMessageMarksAnIncompleteReply(t *testing.T) {
	var b strings.Builder
	m := chat.TextMessage("r1", chat.RoleAssistant, "Helper", "Long ago, in a city")
	printMessage(&b, m)
	m.Incomplete = true
	printMessage(&b, m)
	assert.Equal(t, "Helper: Long ago, in a city\nHelper: Long ago, in a city [incomplete: the turn was stopped]\n", b.String())
}

// In a History page, a stub (a long chat's older message, whose body is in the message store) is a line
// that says so, not nothing: history used to leave such messages out silently.
func TestPrintHistoryNamesAStoredBody(t *testing.T) {
	var b strings.Builder
	printHistory(&b, agentchat.HistoryResult{Store: "sqlite", Messages: []chat.Message{
		{MessageID: "m1", Role: chat.RoleUser, AuthorName: "Alice"},
		chat.TextMessage("m2", chat.RoleUser, "Alice", "Hello"),
	}})
	assert.Equal(t, "Alice: "+storedBodyNote+"\nAlice: Hello\n", b.String())
}

// A participant the chat never resolved (it failed at start: an unknown agent) is
// printed by its id, without an empty "(, )" for its name and kind.
func TestStateOfAChatThatFailedAtStartNamesItsParticipantsPlainly(t *testing.T) {
	var b strings.Builder
	printState(&b, agentchat.StateResult{ChatID: "c", Status: "failed",
		Participants: []wire.ParticipantInfo{{ID: "helpr"}, {ID: "helper", Name: "Helper", Type: "chat_completion"}},
		Failure:      `unknown agent id(s) "helpr"`})
	assert.Contains(t, b.String(), "participants:  helpr, helper (Helper, chat_completion)\n")
	assert.NotContains(t, b.String(), "(, )")
}

// A turn that waits for a person's approval is shown as the turn under way, with the
// command that decides it; the turn count says one waits, not a bare "0 turns".
func TestStateOfAChatWaitingForApprovalShowsTheWaitingTurn(t *testing.T) {
	var b strings.Builder
	printState(&b, agentchat.StateResult{ChatID: "desk", Status: "running", MessageCount: 2, TurnCount: 0,
		PendingApprovals: []wire.PendingApproval{{CallID: "c1", Tool: "deploy", Arguments: `{"env":"prod"}`, AgentID: "ops", TurnID: "t1"}}})
	out := b.String()
	assert.Contains(t, out, "messages:      2 messages in 0 turns, and turn t1 waiting for approval\n")
	assert.Contains(t, out, "active turn:   t1 (waits for approval: go run ./starter approve --chat desk --call c1 [--reject])\n")
	assert.NotContains(t, out, "pending turns: none", "nothing is queued: the row is left out")
}

// follow prints a turn's done event, then that it completed the chat: the event first,
// then what it means.
func TestFollowPrintsTheTurnDoneBeforeTheCompleteNote(t *testing.T) {
	var b strings.Builder
	p := &streamPrinter{w: &b, chatID: "c", complete: completeNote, events: true}
	p.take(agentchat.Event{Offset: 13, StreamEvent: wire.StreamEvent{Type: wire.EventTurnDone, TurnID: "t1", IsComplete: true}})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	assert.Equal(t, []string{"[13] turn t1 done", completeNote}, lines)
}
