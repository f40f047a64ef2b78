package chatstate

import (
	"strconv"

	"github.com/agentchat/agentchat/chat"
)

// roleProblem applies the rule of chat-state-v1.md about which contents each role
// holds, so that an imported history never becomes a model request the provider
// refuses or reads wrongly:
//
//   - a functionCall is only in an assistant message, and its name is a function name
//     (chat.FunctionNamePattern: the model is sent it back);
//   - a functionResult is only in a tool message;
//   - a text is not in a tool message (the model reads a tool message's results only);
//   - an image is only in a user message (the only role models take images from);
//   - an assistant message has a text or a functionCall: something a model can read.
//
// It returns the index of the offending content (-1 for the message as a whole), the
// member it concerns ("" for the content itself) and the problem; "" when m keeps the
// rule. Unknown content types are allowed in every role.
func roleProblem(m chat.Message) (j int, name, problem string) {
	readable := false
	for j, c := range m.Contents {
		switch c.Type {
		case chat.ContentFunctionCall:
			if m.Role != chat.RoleAssistant {
				return j, "", "is a functionCall in " + a(m.Role) + " message; a functionCall is only in an assistant message"
			}
			if !chat.FunctionNamePattern.MatchString(c.Name) {
				return j, "name", strconv.Quote(c.Name) + " is not a function name a model takes (" + chat.FunctionNamePattern.String() + ")"
			}
			readable = true
		case chat.ContentFunctionResult:
			if m.Role != chat.RoleTool {
				return j, "", "is a functionResult in " + a(m.Role) + " message; a functionResult is only in a tool message"
			}
		case chat.ContentText:
			if m.Role == chat.RoleTool {
				return j, "", "is a text in a tool message; a tool message holds functionResults, a model would never read this text"
			}
			readable = true
		case chat.ContentImage:
			if m.Role != chat.RoleUser {
				return j, "", "is an image in " + a(m.Role) + " message; an image is only in a user message"
			}
		}
	}
	if m.Role == chat.RoleAssistant && !readable {
		return -1, "", "an assistant message needs a text or a functionCall; a model can read nothing else of it"
	}
	return 0, "", ""
}

// a is role with its indefinite article: "a user", "an assistant".
func a(role chat.Role) string {
	if role == chat.RoleAssistant {
		return "an " + string(role)
	}
	return "a " + string(role)
}
