package systest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentchat/agentchat/offline"
)

// An agent of the system test is a behaviour, made by the model's script for it (the
// offline model answers agent a's i-th request in a chat with Scripts[a][i]; past the
// end, its default text). Every script ends in text, so each behaviour also holds if
// the model counts positions per turn instead of per chat.
type agentSpec struct {
	ID string
	// YAML is the rest of the agent's config entry, after id and name.
	YAML string
	// Script is the model's scripted replies for it.
	Script []offline.Reply
	// Approvals: it calls a tool that needs a person's approval.
	Approvals bool
	// Fails: a turn it takes may fail (TurnFailed) by design of its script.
	Fails bool
	// Big: its replies are large, so a chat that has it is a big chat.
	Big bool
	// Faults are the knownFaults this behaviour runs into; it is left out while any is listed.
	Faults []string
}

// Refusal is the message of the model's scripted non-retryable error (403); any other
// refused request is a fault.
const Refusal = "systest: scripted refusal"

// callSettings are every agent's model-call settings: fast retries, and a heartbeat
// timeout short enough that a killed worker costs seconds. Not shorter: the SDK sends
// an activity's heartbeats at most every 0.8 of its heartbeat timeout, so the slack
// left for two heartbeat round trips on a loaded 2-core machine under -race is a fifth
// of it (0.6 s at 3 s, which such a machine could miss).
const callSettings = `call: {timeout: 30s, heartbeatTimeout: 5s, initialInterval: 50ms, maxInterval: 200ms, maxAttempts: 4}`

func calls(names ...string) offline.Reply {
	r := offline.Reply{}
	for i, n := range names {
		args := fmt.Sprintf(`{"note":"n%d"}`, i)
		switch n {
		case toolRefund:
			args = `{"order":"1002"}`
		case "badargs":
			n, args = toolRecord, `{"note":`
		}
		r.ToolCalls = append(r.ToolCalls, offline.ToolCall{Name: n, Arguments: args})
	}
	return r
}

func text(s string) offline.Reply { return offline.Reply{Text: s} }

// bigText is n bytes of text.
func bigText(n int) string { return strings.Repeat("lorem ipsum ", n/12+1)[:n] }

// agentSpecs are every behaviour the generator may put in a chat.
var agentSpecs = []agentSpec{
	{ID: "helper", YAML: `instructions: "You are a helpful assistant."`},
	{ID: "thinker", YAML: `kind: responses`},
	{ID: "tooler", YAML: `tools: [record]`,
		Script: []offline.Reply{calls(toolRecord, toolRecord), text("noted"), calls(toolRecord, "nosuch"),
			calls("badargs"), text("done")}},
	{ID: "clerk", YAML: `tools: [refund_rec, record]`, Approvals: true,
		Script: []offline.Reply{calls(toolRefund), text("refund handled"), calls(toolRefund, toolRecord), text("both handled")}},
	{ID: "flaky", Fails: true,
		Script: []offline.Reply{{Status: 500}, text("recovered"), {Status: 403, Message: Refusal}, text("fine again")}},
	{ID: "big", Big: true,
		Script: []offline.Reply{text(bigText(300_000)), text(bigText(1_200_000)), text("small again")}},
	// Over 2 MB: stored, but its import fails (issue 10, fault 4).
	{ID: "huge", Big: true, Faults: []string{"10.4", "M1"},
		Script: []offline.Reply{text(bigText(2_300_000))}},
	// Three rounds of calls with a limit of two (issue 10, fault 11).
	{ID: "looper", YAML: "tools: [record]\n    maxToolRounds: 2", Faults: []string{"10.11"},
		Script: []offline.Reply{calls(toolRecord), calls(toolRecord), calls(toolRecord), text("finally")}},
	// An approved refund, then a refused model call: the refund runs again after the
	// rollback (issue 10, fault 10).
	{ID: "clerkfail", YAML: `tools: [refund_rec]`, Approvals: true, Fails: true, Faults: []string{"10.10"},
		Script: []offline.Reply{calls(toolRefund), {Status: 403, Message: Refusal}, text("ok")}},
	// An approval call and a plain call in one reply, with a truncating reducer (issue
	// 10, fault 6).
	{ID: "trimmer", YAML: "tools: [refund_rec, record]\n    reducer: {type: truncate, maxMessages: 3}", Approvals: true,
		Faults: []string{"10.6"},
		Script: []offline.Reply{calls(toolRefund, toolRecord), text("trimmed")}},
}

// specOf returns the behaviour with id.
func specOf(id string) agentSpec {
	i := slices.IndexFunc(agentSpecs, func(s agentSpec) bool { return s.ID == id })
	return agentSpecs[i]
}

// scripts are the model's scripts for every behaviour.
func scripts() map[string][]offline.Reply {
	out := map[string][]offline.Reply{}
	for _, s := range agentSpecs {
		if len(s.Script) > 0 {
			out[s.ID] = s.Script
		}
	}
	return out
}

// Config variants a worker may run. "a" is the base; "b" changes every agent's
// instructions and streaming (a rolling deploy of a new config); "c" lacks the agent
// "tooler" (a deploy that removes an agent, issue 16 item 1).
const (
	variantA = "a"
	variantB = "b"
	variantC = "c"
)

// agentConfig is the YAML agent config of a variant.
func agentConfig(variant string) string {
	var b strings.Builder
	b.WriteString(`endpoints:
  default: {baseURL: "http://model.invalid/v1", stream: false}
  streamed: {baseURL: "http://model.invalid/v1", stream: true}
tools:
  record: {description: "Record a note", parameters: {type: object, properties: {note: {type: string}}}, timeout: 5s, maxAttempts: 3}
  refund_rec: {description: "Refund an order", parameters: {type: object, properties: {order: {type: string}}}, timeout: 5s, approval: true}
agents:
`)
	for _, s := range agentSpecs {
		if variant == variantC && s.ID == "tooler" {
			continue
		}
		endpoint, instructions := "default", ""
		if variant == variantB {
			endpoint, instructions = "streamed", `instructions: "You are version b of `+s.ID+`."`
		}
		fmt.Fprintf(&b, "  - id: %s\n    name: %s\n    model: offline\n    endpoint: %s\n    %s\n", s.ID, strings.ToUpper(s.ID[:1])+s.ID[1:], endpoint, callSettings)
		extra := s.YAML
		if instructions != "" && !strings.Contains(extra, "instructions:") {
			extra = strings.TrimSpace(extra + "\n    " + instructions)
		}
		if extra != "" {
			fmt.Fprintf(&b, "    %s\n", extra)
		}
	}
	return b.String()
}

// offlineOptions are the model's options: the scripts of every behaviour.
func offlineOptions() offline.Options { return offline.Options{Scripts: scripts()} }
