package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// printJSON writes v indented.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// storedBodyNote is what printHistory writes for a stub: a long chat's older message
// whose body History left in the chat's message store (HistoryResult.Store).
const storedBodyNote = "[the body is in the chat's message store: starter export reads it]"

// printHistory writes a History page's messages (printMessage), a stub as
// storedBodyNote.
func printHistory(w io.Writer, h agentchat.HistoryResult) {
	for _, m := range h.Messages {
		if h.Store != "" && m.Contents == nil {
			fmt.Fprintf(w, "%s: %s\n", author(m), storedBodyNote)
			continue
		}
		printMessage(w, m)
	}
}

// printMessage writes "Author: text", function calls and results on their own lines.
func printMessage(w io.Writer, m chat.Message) {
	who := author(m)
	for _, c := range m.Contents {
		switch c.Type {
		case chat.ContentText:
			if m.Incomplete {
				fmt.Fprintf(w, "%s: %s [incomplete: the turn was stopped]\n", who, c.Text)
				continue
			}
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

// What printTurn writes after a turn that completed the chat: after send and approve,
// and (shorter) in the interactive chat.
const (
	completeNote      = "(the chat is complete: its termination strategy ended it)"
	completeNoteShort = "(the chat is complete)"
)

// printTurn writes a turn's messages, then complete when the turn completed the chat,
// and a line for each tool call it waits for.
func printTurn(w io.Writer, chatID string, res agentchat.TurnResult, complete string) {
	for _, m := range res.Messages {
		printMessage(w, m)
	}
	if res.IsComplete {
		fmt.Fprintln(w, complete)
	}
	printAwaiting(w, chatID, res.AwaitingApproval)
	if res.Replayed {
		fmt.Fprintln(w, replayedNote(res.MessageID))
	}
}

// replayedNote says that turn id's answer is the one it had: its messageId was answered
// before, and no model was called again.
func replayedNote(id string) string {
	return fmt.Sprintf("(turn %s was answered before: this is that answer; no model was called again)", id)
}

// sessionChat is the chat id the interactive chat prints its turns under: calls that
// wait are decided with the session's /approve and /reject, not a starter command.
const sessionChat = ""

// argumentsShown is how much of a tool call's arguments a line shows, in runes.
const argumentsShown = 200

// printAwaiting writes one line per tool call waiting for approval, with the command
// that decides it (in the interactive chat, chatID "" there: the session's commands).
func printAwaiting(w io.Writer, chatID string, ps []wire.PendingApproval) {
	for _, p := range ps {
		if chatID == sessionChat {
			fmt.Fprintf(w, "waiting for approval: %s — decide it: /approve %s, or /reject %s [REASON]\n", describeCall(p), p.CallID, p.CallID)
			continue
		}
		fmt.Fprintf(w, "waiting for approval: %s — approve: go run ./starter approve --chat %s --call %s [--reject --reason TEXT]\n",
			describeCall(p), shellQuote(chatID), shellQuote(p.CallID))
	}
}

// describeCall writes "call <id> <tool>(<arguments>) by <agent>".
func describeCall(p wire.PendingApproval) string {
	return fmt.Sprintf("call %s %s(%s) by %s", p.CallID, p.Tool, truncate(p.Arguments, argumentsShown), p.AgentID)
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
		if p.Name == "" && p.Type == "" { // a chat that failed at start never resolved it
			ps = append(ps, p.ID)
			continue
		}
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
	if to := st.MigratedTo; to != nil {
		row("migrated to", "%s as chat %s (run %s); read it there: go run ./starter%s state --chat %s",
			describePlace(*to), to.ChatID, cmpOr(to.RunID, "unknown"), placeFlags(*to), shellQuote(to.ChatID))
	}
	row("participants", "%s", strings.Join(ps, ", "))
	// A turn that waits for approval is not counted yet, nor active: say it waits.
	waiting := ""
	if len(st.PendingApprovals) > 0 && st.ActiveTurn == "" {
		waiting = st.PendingApprovals[0].TurnID
	}
	turns := plural(st.TurnCount, "turn")
	if waiting != "" {
		turns += ", and turn " + waiting + " waiting for approval"
	}
	row("messages", "%s in %s", plural(st.MessageCount, "message"), turns)
	if st.PagedMessages > 0 {
		row("paged", "the oldest %s are in pages of message store %q (the workflow keeps the latest %d)",
			plural(st.PagedMessages, "message"), st.Store, st.MessageCount-st.PagedMessages)
	} else if st.History != nil {
		row("paged", "none yet (older messages go to pages when the chat continues as new holding more than its window)")
	}
	if h := st.History; h != nil {
		row("history", "window of %s at least, %s a page, index fanout %d",
			plural(h.WindowMessages, "message"), plural(h.PageMessages, "message"), h.IndexFanout)
	}
	if b := st.HistoryBudget; b != nil {
		row("run budget", "continues as new after %s or %s of history a run", plural(b.MaxEvents, "event"), sizeText(b.MaxBytes))
	}
	row("complete", "%s", yesNo(st.IsComplete))
	switch {
	case st.ActiveTurn != "":
		row("active turn", "%s", st.ActiveTurn)
	case waiting != "":
		row("active turn", "%s (waits for approval: go run ./starter approve --chat %s --call %s [--reject])",
			waiting, shellQuote(st.ChatID), shellQuote(st.PendingApprovals[0].CallID))
	}
	if len(st.PendingTurns) > 0 || waiting == "" {
		pending := "none"
		if len(st.PendingTurns) > 0 {
			pending = strings.Join(st.PendingTurns, ", ")
		}
		row("pending turns", "%s", pending)
	}
	if len(st.PendingApprovals) > 0 {
		var calls []string
		for _, p := range st.PendingApprovals {
			calls = append(calls, describeCall(p)+" (turn "+p.TurnID+")")
		}
		row("pending approvals", "%s", strings.Join(calls, "; "))
	}
	row("selection", "%s %s", st.Selection.Type, compact(st.Selection.State))
	row("termination", "%s %s", st.Termination.Type, compact(st.Termination.State))
	if st.Usage != nil {
		row("usage", "%s", describeUsage(*st.Usage))
		for _, u := range st.UsageByAgent {
			row("  "+u.AgentID, "%s", describeUsage(u))
		}
	}
	if st.LastMessage != nil {
		row("last message", "%s: %s", author(*st.LastMessage), truncate(summary(*st.LastMessage), 120))
	}
	if st.LastError != nil {
		row("last error", "turn %s: %s", st.LastError.MessageID, st.LastError.Message)
	}
	if st.Failure != "" {
		row("failure", "%s", st.Failure)
	}
}

// sizeText is n bytes for people: "4 MiB" when n is whole mebibytes, "1536 KiB" when
// whole kibibytes, else "1234 bytes".
func sizeText(n int) string {
	switch {
	case n > 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n > 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return plural(n, "byte")
}

// describeUsage is a usage total for people: "3 calls, 120 input tokens (64 cached), 30
// output tokens, cost 0.0012".
func describeUsage(u agentchat.UsageTotal) string {
	s := fmt.Sprintf("%s, %s", plural(u.Calls, "call"), plural(u.InputTokens, "input token"))
	if u.CachedTokens > 0 {
		s += fmt.Sprintf(" (%d cached)", u.CachedTokens)
	}
	s += ", " + plural(u.OutputTokens, "output token")
	if u.Cost > 0 {
		s += fmt.Sprintf(", cost %.6g", u.Cost)
	}
	return s
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

// summary is a message's text, or for a message without text what it holds (tool
// calls, results, a stored body).
func summary(m chat.Message) string {
	if t := m.Text(); t != "" {
		return t
	}
	var parts []string
	for _, c := range m.Contents {
		switch c.Type {
		case chat.ContentFunctionCall:
			parts = append(parts, fmt.Sprintf("→ %s(%s)", c.Name, c.Arguments))
		case chat.ContentFunctionResult:
			parts = append(parts, "← result of "+c.CallID)
		default:
			parts = append(parts, "["+c.Type+"]")
		}
	}
	if len(parts) == 0 {
		return "[body in the message store]"
	}
	return strings.Join(parts, " ")
}
