package wire

import (
	"slices"
	"strings"

	"github.com/agentchat/agentchat/chat"
)

// RoundLimitPrefix begins the error result of a call not run for the tool-round limit.
const RoundLimitPrefix = "not run: the agent reached its limit of "

// FailedAfterTools reports whether last, the last message of a turn, ends it on tool
// results other than the round limit's: an answered turn ends on an agent's reply, or,
// past maxToolRounds, on the calls' round-limit errors (the workflow's runAgent); a resumed turn that
// failed keeps its tools' results and nothing after them (its resumeSuspended). A stub
// (body in the message store) is taken for answered.
func FailedAfterTools(last chat.Message) bool {
	if last.Role != chat.RoleTool || len(last.Contents) == 0 {
		return false
	}
	return slices.ContainsFunc(last.Contents, func(c chat.Content) bool {
		return c.Type != chat.ContentFunctionResult || !strings.HasPrefix(c.Error, RoundLimitPrefix)
	})
}
