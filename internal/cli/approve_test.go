package cli_test

import (
	"regexp"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
)

// toolsConfig has a clerk whose refunds need approval, the group chat's writer and
// reviewer, and a selector and a judge for the llm strategies.
const toolsConfig = `
tools:
  refund: {approval: true}
  lookup_order: {}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [lookup_order, refund], call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: writer, name: Writer, model: offline, call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: reviewer, name: Reviewer, model: offline, call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: selector, name: Selector, model: offline, call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: judge, name: Judge, model: offline, call: {initialInterval: 50ms, maxAttempts: 4}}
`

const refundArgs = `{"order":"1002"}`

// clerkHarness starts a harness whose clerk first looks order 1002 up and asks to
// refund it (which waits for approval), then answers with done.
func clerkHarness(t *testing.T, done string) *testenv.Harness {
	return testenv.New(t, testenv.Options{Config: toolsConfig, Model: offline.Options{Scripts: map[string][]offline.Reply{
		"clerk": {
			{ToolCalls: []offline.ToolCall{{ID: "call_lookup", Name: "lookup_order", Arguments: refundArgs}}},
			{ToolCalls: []offline.ToolCall{{ID: "call_refund", Name: "refund", Arguments: refundArgs}}},
			{Text: done},
		},
	}}})
}

// waitingLine is the line send, chat and approve print for the refund call.
func waitingLine(chatID string) string {
	return `waiting for approval: call call_refund refund(` + refundArgs + `) by clerk — approve: go run ./starter approve --chat ` +
		chatID + ` --call call_refund [--reject --reason TEXT]`
}

// suspendedClerk starts a clerk chat and sends the turn that waits for the refund's
// approval, checking what send prints.
func suspendedClerk(t *testing.T, h *testenv.Harness) string {
	t.Helper()
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "clerk")
	r := ok(t, h, "send", "--chat", id, "--id", "m1", "Please refund order 1002")
	assert.Equal(t, []string{
		`Clerk → lookup_order(` + refundArgs + `) [call call_lookup]`,
		`tool ← [call call_lookup] order 1002: kettle, $89.00, in transit`,
		`Clerk → refund(` + refundArgs + `) [call call_refund]`,
		waitingLine(id),
	}, r.lines())
	return id
}

func TestApproveResumesTheTurn(t *testing.T) {
	h := clerkHarness(t, "The kettle of order 1002 is refunded.")
	id := suspendedClerk(t, h)

	st := decode[agentchat.StateResult](t, ok(t, h, "state", "--chat", id, "--json"))
	require.Len(t, st.PendingApprovals, 1)
	assert.Equal(t, "call_refund", st.PendingApprovals[0].CallID)
	assert.Equal(t, "m1", st.PendingApprovals[0].TurnID)
	r := ok(t, h, "state", "--chat", id)
	assert.Contains(t, r.out, "\npending approvals: call call_refund refund("+refundArgs+") by clerk (turn m1)\n")

	// Another turn is refused while the call waits, and says how to go on: the chat's
	// error in wire terms, the starter's hint with its command.
	line := fails(t, h, "send", "--chat", id, "Hello?")
	assert.Contains(t, line, "with the Approve update (callId, approved)")
	assert.True(t, strings.HasSuffix(line, "(run: go run ./starter approve --chat "+id+" --call ID [--reject --reason TEXT])"), line)

	line = fails(t, h, "approve", "--chat", id, "--call", "call_nope")
	assert.Contains(t, line, `waits for no approval of call "call_nope"`)
	assert.Contains(t, line, "call_refund", "the error names the call awaited")
	assert.Equal(t, 2, h.Model.Requests("clerk"), "a refused decision resumes nothing")

	r = ok(t, h, "approve", "--chat", id, "--call", "call_refund", "--by", "Bob")
	r0 := r
	assert.Equal(t, []string{
		"tool ← [call call_refund] refunded $89.00 for order 1002",
		"Clerk: [offline] clerk: The kettle of order 1002 is refunded.",
	}, r.lines())
	req, found := h.Model.LastRequest("clerk")
	require.True(t, found)
	last := req.Messages[len(req.Messages)-1]
	assert.Equal(t, openai.ChatMessageRoleTool, last.Role)
	assert.Equal(t, "call_refund", last.ToolCallID)
	assert.Equal(t, "refunded $89.00 for order 1002", last.Content, "the model read the refund's result")

	r = ok(t, h, "state", "--chat", id)
	assert.NotContains(t, r.out, "pending approvals")
	assert.Contains(t, r.out, "messages:      6 messages in 1 turn\n")

	again := ok(t, h, "approve", "--chat", id, "--call", "call_refund")
	assert.Equal(t, "call call_refund was already approved; nothing changed\n"+r0.out, again.out,
		"a retried approve says so, answers what the turn did, and runs nothing again")
	assert.Equal(t, 3, h.Model.Requests("clerk"))

	r = ok(t, h, "send", "--chat", id, "Thanks")
	assert.Contains(t, r.out, "Clerk: [offline] clerk received", "the chat takes turns again")
}

func TestRejectGivesTheModelTheReason(t *testing.T) {
	h := clerkHarness(t, "I cannot refund it, sorry.")
	id := suspendedClerk(t, h)

	res := decode[agentchat.TurnResult](t, ok(t, h, "approve", "--chat", id, "--call", "call_refund",
		"--reject", "--reason", "refunds over $50 need a manager", "--by", "Bob", "--json"))
	assert.Equal(t, "m1", res.MessageID)
	assert.Empty(t, res.AwaitingApproval)
	require.Len(t, res.Messages, 2)
	assert.Equal(t, "rejected by a person: refunds over $50 need a manager", res.Messages[0].Contents[0].Error)
	assert.Equal(t, "[offline] clerk: Not done: refund (call_refund) failed: rejected by a person: refunds over $50 need a manager.",
		res.Messages[1].Text(), "the offline model answers from the result it gets, not from its script")

	req, found := h.Model.LastRequest("clerk")
	require.True(t, found)
	last := req.Messages[len(req.Messages)-1]
	assert.Equal(t, openai.ChatMessageRoleTool, last.Role)
	assert.Equal(t, "call_refund", last.ToolCallID)
	assert.Equal(t, "error: rejected by a person: refunds over $50 need a manager", last.Content)

	hist := decode[agentchat.HistoryResult](t, ok(t, h, "history", "--chat", id, "--json"))
	var results []string
	for _, m := range hist.Messages {
		for _, c := range m.Contents {
			if c.CallID == "call_refund" && c.Type == "functionResult" {
				results = append(results, c.Error)
			}
		}
	}
	assert.Equal(t, []string{"rejected by a person: refunds over $50 need a manager"}, results, "no refund ran")
}

// A reply with two calls that need approval resumes after the second decision.
func TestApproveSaysWhichCallsStillWait(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: toolsConfig, Model: offline.Options{Scripts: map[string][]offline.Reply{
		"clerk": {
			{ToolCalls: []offline.ToolCall{
				{ID: "call_a", Name: "refund", Arguments: `{"order":"1001"}`},
				{ID: "call_b", Name: "refund", Arguments: `{"order":"1003"}`},
			}},
			{Text: "One refunded, one not."},
		},
	}}})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "clerk")
	r := ok(t, h, "send", "--chat", id, "--id", "m1", "Refund both")
	lines := r.lines()
	require.Len(t, lines, 4, r.out)
	assert.Equal(t, `Clerk → refund({"order":"1001"}) [call call_a]`, lines[0])
	assert.Equal(t, `Clerk → refund({"order":"1003"}) [call call_b]`, lines[1])
	assert.True(t, strings.HasPrefix(lines[2], `waiting for approval: call call_a refund({"order":"1001"}) by clerk — approve: `), lines[2])
	assert.True(t, strings.HasPrefix(lines[3], `waiting for approval: call call_b refund({"order":"1003"}) by clerk — approve: `), lines[3])

	r = ok(t, h, "state", "--chat", id)
	assert.Contains(t, r.out, `pending approvals: call call_a refund({"order":"1001"}) by clerk (turn m1); call call_b refund({"order":"1003"}) by clerk (turn m1)`+"\n")

	// Each decision is applied when it is given: the approved call runs now, and the
	// turn waits for the other.
	r = ok(t, h, "approve", "--chat", id, "--call", "call_a")
	assert.Equal(t, []string{
		"tool ← [call call_a] refunded $42.50 for order 1001",
		`waiting for approval: call call_b refund({"order":"1003"}) by clerk — approve: go run ./starter approve --chat ` + id +
			` --call call_b [--reject --reason TEXT]`,
	}, r.lines())
	assert.Equal(t, 1, h.Model.Requests("clerk"), "the turn waits for the other call")

	r = ok(t, h, "approve", "--chat", id, "--call", "call_b", "--reject")
	assert.Equal(t, []string{
		"tool ← [call call_b] error: rejected by a person",
		"Clerk: [offline] clerk: Partly done: refund (call_a): refunded $42.50 for order 1001; refund (call_b) failed: rejected by a person.",
	}, r.lines())
}

// The interactive chat prints the approval line and goes on reading.
func TestChatShowsTheCallThatWaits(t *testing.T) {
	h := clerkHarness(t, "Refunded.")
	id := testenv.ChatID(t)
	r := starter(t, h, "Refund order 1002\nAnd now?\n/approve call_refund\n/approve call_refund\n", "chat", "--chat", id, "--agents", "clerk")
	require.Equal(t, 0, r.code, "%v", r)
	assert.Contains(t, r.lines(), `waiting for approval: call call_refund refund(`+refundArgs+`) by clerk — decide it: /approve call_refund, or /reject call_refund [REASON]`,
		"in the session, the session's commands")
	assert.Contains(t, r.err, "error: ", "the next turn is refused while the call waits")
	assert.Contains(t, r.err, "(decide it here: /approve CALL, or /reject CALL [REASON]; calls waiting: call_refund (refund))",
		"in the session, the session's commands and the call that waits")
	assert.NotContains(t, r.err, "go run ./starter approve")
	assert.Equal(t, 1, strings.Count(r.out, "call call_refund was already approved; nothing changed"), "the repeat says so:\n%s", r.out)
}

// A temporary thread that waits for approval stays open until the call is decided.
func TestTemporaryThreadWaitsForApproval(t *testing.T) {
	h := clerkHarness(t, "Refunded.")
	r := ok(t, h, "send", "--agents", "clerk", "Refund order 1002")
	m := regexp.MustCompile(`(?m)^waiting for approval: call call_refund refund\(.*\) by clerk — approve: go run ./starter approve --chat (run-[0-9a-f-]{36}) --call call_refund`).
		FindStringSubmatch(r.out)
	require.NotNil(t, m, r.out)
	runID := m[1]
	assert.Equal(t, "(temporary thread "+runID+"; its workflow completes once the turn is answered)", r.lines()[len(r.lines())-1])

	r = ok(t, h, "approve", "--chat", runID, "--call", "call_refund")
	assert.Equal(t, "Clerk: [offline] clerk: Refunded.", r.lines()[len(r.lines())-1])
	st := decode[agentchat.StateResult](t, ok(t, h, "state", "--chat", runID, "--json"))
	assert.Equal(t, "completed", st.Status)
}

func TestApproveErrors(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	ok(t, h, "start", "--chat", id, "--agents", "helper")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"a chat that waits for nothing", []string{"approve", "--chat", id, "--call", "call_1"}, []string{`waits for no approval`}},
		{"a missing chat", []string{"approve", "--chat", "missing-" + id, "--call", "call_1"}, []string{"not found"}},
		{"no --call", []string{"approve", "--chat", id}, []string{`required flag(s) "call" not set`}},
		{"no --chat", []string{"approve", "--call", "call_1"}, []string{`required flag(s) "chat" not set`}},
		{"empty --call", []string{"approve", "--chat", id, "--call", ""}, []string{"--call is empty, and it is required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := fails(t, h, tc.args...)
			for _, w := range tc.want {
				assert.Contains(t, line, w)
			}
		})
	}
}

func TestApproveHelp(t *testing.T) {
	r := execute(t, "", "approve", "--help")
	require.Equal(t, 0, r.code, "%v", r)
	for _, want := range []string{
		"Usage:\n  starter approve --chat ID --call CALLID [--reject] [--reason TEXT] [--by NAME]",
		"Examples:\n",
		"starter approve --chat support-42 --call call_refund\n",
		`--reject --reason "refunds over $50 need a manager" --by Bob`,
		"--reject ", "--reason string", "--by string", "--json",
	} {
		assert.Contains(t, r.out, want)
	}
	r = execute(t, "", "send", "--help")
	assert.Contains(t, r.out, "approval")
}
