package workflows

import (
	"slices"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// maxToolRuns bounds the runs kept for taken-back turns; the oldest go first.
const maxToolRuns = 64

// recordRun keeps the result of call c, which has just run, within maxToolRuns and
// ToolRunsLimit (encoded bytes, so that the runs carried across continue-as-new stay
// under a payload), the oldest dropped first. A dropped run's call runs again if its
// turn is sent again.
func (s *chatState) recordRun(c chat.Content, result chat.Content) {
	s.ToolRuns = slices.DeleteFunc(s.ToolRuns, func(r wire.ToolRun) bool { return r.CallID == c.CallID })
	if len(s.ToolRuns) >= maxToolRuns {
		s.ToolRuns = s.ToolRuns[len(s.ToolRuns)-maxToolRuns+1:]
	}
	s.ToolRuns = append(s.ToolRuns, wire.ToolRun{CallID: c.CallID, Name: c.Name, Arguments: c.Arguments, Result: result})
	total := toolRunsBytes(s.ToolRuns)
	if total <= wire.ToolRunsLimit {
		return
	}
	drop := 0
	for drop < len(s.ToolRuns) && total > wire.ToolRunsLimit {
		total -= toolRunBytes(s.ToolRuns[drop]) + 1 // and its comma
		drop++
	}
	s.ToolRuns = slices.Clone(s.ToolRuns[drop:])
}

// toolRunsBytes is the length of runs as a JSON list (measured, not encoded).
func toolRunsBytes(runs []wire.ToolRun) int {
	n := len(`[]`) + max(len(runs)-1, 0)
	for _, r := range runs {
		n += toolRunBytes(r)
	}
	return n
}

// toolRunBytes is the length of r's JSON.
func toolRunBytes(r wire.ToolRun) int {
	return len(`{"callId":"","name":"","arguments":"","result":}`) + wire.TextBytes(r.CallID) +
		wire.TextBytes(r.Name) + wire.TextBytes(r.Arguments) + wire.ContentBytes(r.Result)
}

// ranBefore reports whether call c (its id, name and arguments) has run already.
func (s *chatState) ranBefore(c chat.Content) bool {
	return slices.ContainsFunc(s.ToolRuns, func(r wire.ToolRun) bool { return r.Same(c) })
}

// ranResult is the result call c got when it ran.
func (s *chatState) ranResult(c chat.Content) chat.Content {
	for _, r := range s.ToolRuns {
		if r.Same(c) {
			return r.Result
		}
	}
	return chat.Content{}
}

// ranOther reports whether another call (other name or arguments) ran under c's id: c
// must then get an id of its own, or it would share the other's idempotency key.
func (s *chatState) ranOther(c chat.Content) bool {
	return slices.ContainsFunc(s.ToolRuns, func(r wire.ToolRun) bool { return r.CallID == c.CallID && !r.Same(c) })
}

// forgetAnswered drops the runs whose results msgs (a finished turn's messages) hold:
// the history keeps them now.
func (s *chatState) forgetAnswered(msgs []chat.Message) {
	if len(s.ToolRuns) == 0 {
		return
	}
	answered := map[string]bool{}
	for _, m := range msgs {
		if m.Role == chat.RoleTool {
			for _, c := range m.Contents {
				answered[c.CallID] = true
			}
		}
	}
	s.ToolRuns = slices.DeleteFunc(s.ToolRuns, func(r wire.ToolRun) bool { return answered[r.CallID] })
}
