package systest

import (
	"context"
	"fmt"
	"time"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
)

// Edits of an exported document before it is imported again: documents a client could
// send that no chat exported as they are.
const (
	// editSystem puts a system message first in the history.
	editSystem = "system"
	// editOpenCall ends the history with an agent's call of the plain recording tool
	// and no result: the importing chat runs it and lets the agent answer.
	editOpenCall = "open-call"
	// editWrongRole adds a user message that holds a functionCall: the import must be
	// refused, naming the field, and nothing created (issue 10, fault 7).
	editWrongRole = "wrong-role"
)

// importEdited exports chat c, edits the document and imports it into the new chat
// target, then records what the import did.
func (r *Runner) importEdited(ctx context.Context, c *chatRun, target int, edit string) string {
	cl := r.w.Client(c.loc.ns)
	doc, _, err := cl.Export(ctx, c.loc.id)
	if err != nil {
		r.violate("chat c%d: export failed: %v", c.idx, err)
		return "export error: " + err.Error()
	}
	d, _, err := chatstate.Decode(doc)
	if err != nil {
		r.violate("chat c%d: the exported document does not decode: %v", c.idx, err)
		return "decode error: " + err.Error()
	}
	id := r.chatID(target)
	now := time.Now().UTC().Truncate(time.Second)
	switch edit {
	case editSystem:
		d.History = append([]chat.Message{{MessageID: id + "-sys", Role: chat.RoleSystem, CreatedAt: now,
			Contents: []chat.Content{chat.Text("Answer briefly.")}}}, d.History...)
	case editOpenCall:
		if len(d.PendingTurns) > 0 || endsOpen(d.History) || lastUser(d.History) == "" {
			return "skipped: the document has no closed turn to end with a call"
		}
		agent := c.agents[0]
		d.History = append(d.History, chat.Message{MessageID: lastUser(d.History) + "/e1", Role: chat.RoleAssistant,
			AgentID: agent, AuthorName: agent, CreatedAt: now,
			Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: "call_" + id, Name: toolRecord, Arguments: `{"note":"edit"}`}}})
	case editWrongRole:
		d.History = append(d.History, chat.Message{MessageID: id + "-u", Role: chat.RoleUser, CreatedAt: now,
			Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: "call_" + id, Name: toolRecord, Arguments: `{}`}}})
	}
	b, _, err := chatstate.Encode(d)
	if err != nil {
		return fmt.Sprintf("edit %s: not encodable (%v)", edit, err)
	}
	nc := r.newChat(target, c.loc.ns, id, c.agents, c.maxBytes)
	for _, m := range d.History {
		nc.prefix = append(nc.prefix, m.MessageID)
	}
	nc.inherit(c, d.History)
	for _, m := range d.PendingTurns {
		nc.pending = append(nc.pending, m.MessageID)
	}
	opts, err := r.importOptions(b, id, c.maxBytes)
	if err != nil {
		return err.Error()
	}
	st, err := cl.Import(ctx, opts)
	if edit == editWrongRole {
		if err == nil {
			r.violate("chat c%d: a document with a functionCall in a user message was imported as c%d", c.idx, target)
			nc.started = true
			return "imported (should have been refused)"
		}
		if _, derr := r.w.Temporal(c.loc.ns).DescribeWorkflowExecution(ctx, id, ""); derr == nil {
			r.violate("chat c%d: a refused import left workflow %s behind", c.idx, id)
		}
		return "refused: " + firstLine(err.Error())
	}
	if err != nil {
		r.violate("chat c%d: import of the %s-edited document into c%d failed: %v", c.idx, edit, target, err)
		return "import error: " + err.Error()
	}
	nc.started = true
	return fmt.Sprintf("edited (%s) and imported as c%d: %s, %d messages", edit, target, st.Status, st.MessageCount)
}

// lastUser is the id of the history's last user message, "" when it has none.
func lastUser(h []chat.Message) string {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == chat.RoleUser {
			return h[i].MessageID
		}
	}
	return ""
}

// endsOpen reports whether the history ends with calls that have no result.
func endsOpen(h []chat.Message) bool {
	return len(h) > 0 && (h[len(h)-1].Role == chat.RoleTool || hasCall(h[len(h)-1]))
}

func hasCall(m chat.Message) bool {
	for _, c := range m.Contents {
		if c.Type == chat.ContentFunctionCall {
			return true
		}
	}
	return false
}
