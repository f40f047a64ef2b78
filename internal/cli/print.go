package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
)

// printJSON writes v indented.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printMessage writes "Author: text", function calls and results on their own lines.
func printMessage(w io.Writer, m chat.Message) {
	who := author(m)
	for _, c := range m.Contents {
		switch c.Type {
		case chat.ContentText:
			fmt.Fprintf(w, "%s: %s\n", who, c.Text)
		case chat.ContentFunctionCall:
			fmt.Fprintf(w, "%s → %s(%s) [call %s]\n", who, c.Name, c.Arguments, c.CallID)
		case chat.ContentFunctionResult:
			res := c.Result
			if c.Error != "" {
				res = "error: " + c.Error
			}
			fmt.Fprintf(w, "tool ← [call %s] %s\n", c.CallID, res)
		case chat.ContentImage:
			fmt.Fprintf(w, "%s: [image %s%s]\n", who, c.URI, c.MediaType)
		default:
			fmt.Fprintf(w, "%s: [%s content]\n", who, c.Type)
		}
	}
}

// author is who wrote m for people: its author name, else its role ("user").
func author(m chat.Message) string {
	if m.AuthorName != "" {
		return m.AuthorName
	}
	return string(m.Role)
}

// printState writes the State summary for people.
func printState(w io.Writer, st agentchat.StateResult) {
	var ps []string
	for _, p := range st.Participants {
		ps = append(ps, fmt.Sprintf("%s (%s, %s)", p.ID, p.Name, p.Type))
	}
	row := func(k, format string, a ...any) {
		fmt.Fprintf(w, "%-14s "+format+"\n", append([]any{k + ":"}, a...)...)
	}
	row("chat", "%s", st.ChatID)
	status := st.Status
	if st.Temporary {
		status += " (temporary thread)"
	}
	row("status", "%s", status)
	row("participants", "%s", strings.Join(ps, ", "))
	row("messages", "%s in %s", plural(st.MessageCount, "message"), plural(st.TurnCount, "turn"))
	row("complete", "%s", yesNo(st.IsComplete))
	if st.ActiveTurn != "" {
		row("active turn", "%s", st.ActiveTurn)
	}
	pending := "none"
	if len(st.PendingTurns) > 0 {
		pending = strings.Join(st.PendingTurns, ", ")
	}
	row("pending turns", "%s", pending)
	row("selection", "%s %s", st.Selection.Type, compact(st.Selection.State))
	row("termination", "%s %s", st.Termination.Type, compact(st.Termination.State))
	if st.LastMessage != nil {
		row("last message", "%s: %s", author(*st.LastMessage), truncate(st.LastMessage.Text(), 120))
	}
	if st.LastError != nil {
		row("last error", "turn %s: %s", st.LastError.MessageID, st.LastError.Message)
	}
	if st.Failure != "" {
		row("failure", "%s", st.Failure)
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func truncate(s string, n int) string {
	r := []rune(strings.ReplaceAll(s, "\n", " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}

// plural writes "1 turn", "2 turns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
