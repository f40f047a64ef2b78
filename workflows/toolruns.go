package workflows

import (
	"slices"

	"github.com/agentchat/agentchat/chat"
)

// ToolRun is a tool call that ran, with its result, kept while the result is not in
// the history (its turn failed and was taken back): when the turn is sent again and the
// model asks for the same call (same callId, name and arguments), the result is reused,
// never run again. A call id is therefore run at most once, whatever is retried or
// rolled back. It is carried across continue-as-new.
type ToolRun struct {
	CallID    string       `json:"callId"`
	Name      string       `json:"name"`
	Arguments string       `json:"arguments"`
	Result    chat.Content `json:"result"`
}

// maxToolRuns bounds the runs kept for taken-back turns; the oldest go first.
const maxToolRuns = 64

// recordRun keeps the result of call c, which has just run.
func (s *chatState) recordRun(c chat.Content, result chat.Content) {
	s.toolRuns = slices.DeleteFunc(s.toolRuns, func(r ToolRun) bool { return r.CallID == c.CallID })
	if len(s.toolRuns) >= maxToolRuns {
		s.toolRuns = s.toolRuns[len(s.toolRuns)-maxToolRuns+1:]
	}
	s.toolRuns = append(s.toolRuns, ToolRun{CallID: c.CallID, Name: c.Name, Arguments: c.Arguments, Result: result})
}

// ranBefore reports whether call c (its id, name and arguments) has run already.
func (s *chatState) ranBefore(c chat.Content) bool {
	return slices.ContainsFunc(s.toolRuns, func(r ToolRun) bool { return r.same(c) })
}

// ranResult is the result call c got when it ran.
func (s *chatState) ranResult(c chat.Content) chat.Content {
	for _, r := range s.toolRuns {
		if r.same(c) {
			return r.Result
		}
	}
	return chat.Content{}
}

// ranOther reports whether another call (other name or arguments) ran under c's id: c
// must then get an id of its own, or it would share the other's idempotency key.
func (s *chatState) ranOther(c chat.Content) bool {
	return slices.ContainsFunc(s.toolRuns, func(r ToolRun) bool { return r.CallID == c.CallID && !r.same(c) })
}

func (r ToolRun) same(c chat.Content) bool {
	return r.CallID == c.CallID && r.Name == c.Name && r.Arguments == c.Arguments
}

// forgetAnswered drops the runs whose results msgs (a finished turn's messages) hold:
// the history keeps them now.
func (s *chatState) forgetAnswered(msgs []chat.Message) {
	if len(s.toolRuns) == 0 {
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
	s.toolRuns = slices.DeleteFunc(s.toolRuns, func(r ToolRun) bool { return answered[r.CallID] })
}
