package cli

import (
	"fmt"
	"strings"
)

// slashCommand is one command of the interactive chat: a line that starts with its
// name runs it instead of being sent as a turn.
type slashCommand struct {
	name string // "/approve"
	args string // what follows the name, "CALL"; "" when it takes nothing
	help string // what it does, one line
}

// slashCommands are the interactive chat's commands, in the order the chat, its
// --help and the README list them. Every place that names them reads this table.
var slashCommands = []slashCommand{
	{"/state", "", "print the chat's state (the State query)"},
	{"/history", "", "print the chat's messages (the History query)"},
	{"/approve", "CALL", "approve tool call CALL that waits for a person"},
	{"/reject", "CALL [REASON]", "reject tool call CALL, with an optional reason"},
	{"/help", "", "list these commands"},
	{"/quit", "", "end the session (also /exit, Ctrl-C at the prompt, end of input)"},
}

// usage is a command with its arguments: "/reject CALL [REASON]".
func (c slashCommand) usage() string {
	return strings.TrimSpace(c.name + " " + c.args)
}

// slashUsage is the usage of command name ("/approve"), or name itself when unknown.
func slashUsage(name string) string {
	for _, c := range slashCommands {
		if c.name == name {
			return c.usage()
		}
	}
	return name
}

// slashList is every command on one line: "/state, /history, /approve CALL, ...".
func slashList() string {
	us := make([]string, len(slashCommands))
	for i, c := range slashCommands {
		us[i] = c.usage()
	}
	return strings.Join(us, ", ")
}

// slashTable is every command on a line of its own with what it does, indented by
// indent: chat's --help and /help.
func slashTable(indent string) string {
	var b strings.Builder
	for _, c := range slashCommands {
		fmt.Fprintf(&b, "%s%-22s %s\n", indent, c.usage(), c.help)
	}
	return b.String()
}

// slashSendNote says how a line that starts with a slash is sent as text.
const slashSendNote = "start a message with // to send a line that begins with a slash"
