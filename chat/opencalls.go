package chat

import (
	"fmt"
	"slices"
)

// OpenCallsAtEnd returns the functionCalls of the last assistant message of history
// that no later tool message answers, when only tool messages follow it (a turn that
// waits for its tools' results or approvals), and that message's agent id; nil and ""
// otherwise.
func OpenCallsAtEnd(history []Message) (calls []Content, agentID string) {
	answered := map[string]bool{}
	for i := len(history) - 1; i >= 0; i-- {
		m := history[i]
		switch m.Role {
		case RoleTool:
			for _, c := range m.Contents {
				answered[c.CallID] = true
			}
		case RoleAssistant:
			for _, c := range m.FunctionCalls() {
				if !answered[c.CallID] {
					calls = append(calls, c)
				}
			}
			return calls, m.AgentID
		default:
			return nil, ""
		}
	}
	return nil, ""
}

// CheckOpenCalls refuses a history (an imported document's) that ends with open calls
// of an agent not among participants (agent ids): those calls wait for results and
// approvals that only the calling agent's tools and reply can give, and another agent
// must not read them as its own. The error names the calls and the agent.
func CheckOpenCalls(history []Message, participants []string) error {
	calls, caller := OpenCallsAtEnd(history)
	if len(calls) == 0 || slices.Contains(participants, caller) {
		return nil
	}
	var ids []string
	for _, c := range calls {
		ids = append(ids, fmt.Sprintf("%q (%s)", c.CallID, c.Name))
	}
	return fmt.Errorf("the history ends with tool call(s) %v of agent %q, which is not a participant of this chat (participants %q): "+
		"they wait for that agent's tools, approvals and reply; import into a chat that has %q, or let the source chat finish them first",
		ids, caller, participants, caller)
}
