package workflows

import (
	"github.com/agentchat/agentchat/wire"
)

// addUsage adds the usage of one agent reply (res) to the agent's running total in the
// carried state. A reply without usage adds nothing. It emits no command: replay of a
// history recorded before usage existed sees no usage and adds nothing.
func (s *chatState) addUsage(agentID string, res wire.InvokeResult) {
	if res.Usage == nil {
		return
	}
	for i := range s.Usage {
		if s.Usage[i].AgentID == agentID {
			s.Usage[i] = s.Usage[i].Add(*res.Usage, res.Cost)
			return
		}
	}
	s.Usage = append(s.Usage, wire.UsageTotal{AgentID: agentID}.Add(*res.Usage, res.Cost))
}

// usageState fills r's Usage (the chat's total) and UsageByAgent from the running totals.
func (s *chatState) usageState(r *wire.StateResult) {
	if len(s.Usage) == 0 {
		return
	}
	var total wire.UsageTotal
	for _, u := range s.Usage {
		total = total.Plus(u)
	}
	total.AgentID = ""
	r.Usage, r.UsageByAgent = &total, append([]wire.UsageTotal(nil), s.Usage...)
}
