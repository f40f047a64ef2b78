package systest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// checkHistory checks that no turn is lost or repeated: message ids are unique, each
// turn's replies follow it as "<turn>/<n>" and end with an agent's answer, every
// accepted messageId is answered once, none refused or failed is there, and the order
// of the turns is the order they were accepted.
func checkHistory(c *chatRun, msgs []chat.Message) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m.MessageID] {
			out = append(out, fmt.Sprintf("message id %q appears twice", m.MessageID))
		}
		seen[m.MessageID] = true
	}
	turns := splitTurns(msgs)
	for _, t := range turns {
		for _, m := range t.replies {
			if !strings.HasPrefix(m.MessageID, t.user.MessageID+"/") {
				out = append(out, fmt.Sprintf("message %q (%s) inside turn %q", m.MessageID, m.Role, t.user.MessageID))
			}
		}
		if len(t.replies) == 0 {
			out = append(out, fmt.Sprintf("turn %q has no reply", t.user.MessageID))
			continue
		}
		if m := c.msgs[t.user.MessageID]; m != nil && keptFailed(m) {
			continue // a failed resumed turn may keep what its approved calls did
		}
		if last := t.replies[len(t.replies)-1]; t.index < len(c.prefix) && last.Role == chat.RoleTool &&
			(!slices.Contains(c.prefix, last.MessageID) || c.resumedEnds[last.MessageID]) {
			// A turn of the imported document, resumed here (its open calls ran), or in a
			// chat whose document this one's came from, whose agent then failed: the
			// calls' results stay, as README's Human approval says.
			continue
		}
		if last := t.replies[len(t.replies)-1]; last.Role != chat.RoleAssistant || last.Text() == "" {
			out = append(out, fmt.Sprintf("turn %q ends with %s message %q, not an agent's answer", t.user.MessageID, last.Role, last.MessageID))
		}
	}
	if len(msgs) < len(c.prefix) || !equal(ids(msgs[:len(c.prefix)]), c.prefix) {
		out = append(out, fmt.Sprintf("the history does not start with the %d messages of the imported document", len(c.prefix)))
		return out
	}
	count := map[string]int{}
	group := 0
	for _, t := range turns {
		id := t.user.MessageID
		if t.index < len(c.prefix) {
			continue
		}
		count[id]++
		m, ok := c.msgs[id]
		switch {
		case ok:
			if m.group < group {
				out = append(out, fmt.Sprintf("turn %q (accepted in step group %d) answered after a turn of group %d", id, m.group, group))
			}
			group = max(group, m.group)
			if m.outcome == outAnswered && !m.posted && !m.suspended && len(m.replies) > 0 && !equal(ids(t.replies), m.replies) {
				out = append(out, fmt.Sprintf("turn %q holds replies %v; Send returned %v", id, ids(t.replies), m.replies))
			}
		case slices.Contains(c.pending, id):
		default:
			out = append(out, fmt.Sprintf("turn %q was never sent", id))
		}
	}
	for _, id := range c.order {
		m, n := c.msgs[id], count[id]
		switch {
		case n > 1:
			out = append(out, fmt.Sprintf("turn %q (%s) is in the history %d times", id, m.outcome, n))
		case (m.outcome == outAnswered || m.outcome == outSuspended) && n == 0:
			out = append(out, fmt.Sprintf("turn %q was %s but is not in the history (lost)", id, m.outcome))
		case (m.outcome == outRefused || m.outcome == outFailed && !keptFailed(m)) && n > 0:
			out = append(out, fmt.Sprintf("turn %q was %s but is in the history", id, m.outcome))
		case m.taken && !seen[id] && !c.hasFailing() && !c.refuses:
			out = append(out, fmt.Sprintf("turn %q was refused as a taken id, but no message has it", id))
		case m.outcome == outPosted && n == 0 && (seen[id] || c.stalled):
			// refused in the chat: its id is another message's, or the chat stalled
		case m.outcome == outPosted && n == 0 && c.refuses:
			// The store refuses part of the writes: the turn may have failed for it
			// (or for the model: a failed turn is taken out of the history whatever
			// failed it), and only the stream tells (a turnFailed event; lastError is
			// cleared by the next answered turn). A turn the stream no longer shows
			// (its log was trimmed at a continue-as-new, or it was refused at the
			// door) is unknown.
			if st, ok := c.streamed[id]; ok && st.accepted && !st.takenOut() {
				out = append(out, fmt.Sprintf("posted turn %q was accepted and ended %s, but is not in the history (lost)", id, st.ending()))
			}
		case m.outcome == outPosted && n == 0 && m.size <= c.limit && !c.hasFailing():
			out = append(out, fmt.Sprintf("posted turn %q (%d bytes, limit %d) is not in the history (lost)", id, m.size, c.limit))
		case m.outcome == outPosted && n == 1 && m.size > c.limit:
			out = append(out, fmt.Sprintf("posted turn %q of %d bytes is in the history; the limit is %d", id, m.size, c.limit))
		}
	}
	for _, id := range c.pending {
		if count[id] == 0 && !c.hasFailing() {
			out = append(out, fmt.Sprintf("the document's pending turn %q was never answered", id))
		}
	}
	return out
}

// keptFailed reports whether m's turn failed after it waited for an approval: such a
// turn may stay in the history with the results of the calls that ran (a call that ran
// is never taken back, so it never runs twice), or be taken out whole.
func keptFailed(m *msgState) bool { return m.outcome == outFailed && m.suspended }

// turnOf is a user message and the messages after it up to the next user message.
type turnOf struct {
	index   int // of the user message in the history
	user    chat.Message
	replies []chat.Message
}

func splitTurns(msgs []chat.Message) []turnOf {
	var out []turnOf
	for i, m := range msgs {
		switch {
		case m.Role == chat.RoleUser:
			out = append(out, turnOf{index: i, user: m})
		case len(out) > 0:
			out[len(out)-1].replies = append(out[len(out)-1].replies, m)
		}
	}
	return out
}

func ids(msgs []chat.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.MessageID
	}
	return out
}

// checkState checks that State agrees with History and that the settled chat is idle
// and well.
func checkState(c *chatRun, st agentchat.StateResult, msgs []chat.Message) []string {
	var out []string
	if st.MessageCount != len(msgs) {
		out = append(out, fmt.Sprintf("State counts %d messages, History has %d", st.MessageCount, len(msgs)))
	}
	if len(msgs) > 0 && (st.LastMessage == nil || st.LastMessage.MessageID != msgs[len(msgs)-1].MessageID) {
		out = append(out, fmt.Sprintf("State's last message is not History's last (%q)", msgs[len(msgs)-1].MessageID))
	}
	if st.Status != wire.StatusRunning {
		out = append(out, fmt.Sprintf("status %q, want %q", st.Status, wire.StatusRunning))
	}
	if st.ActiveTurn != "" || (len(st.PendingTurns) > 0 && !c.stalled) || len(st.PendingApprovals) > 0 {
		out = append(out, fmt.Sprintf("not idle after settling: active %q, pending %v, approvals %v", st.ActiveTurn, st.PendingTurns, st.PendingApprovals))
	}
	storeRefused := func(e *wire.TurnError) bool {
		return c.refuses && (e.Type == wire.ErrTypeStoreRefused || strings.Contains(e.Message, StoreRefusal))
	}
	if e := st.LastError; e != nil && e.Type != wire.ErrTypeInvalidMessage && !strings.Contains(e.Message, Refusal) && !storeRefused(e) {
		out = append(out, fmt.Sprintf("lastError %s on %q is not the script's refusal: %s", e.Type, e.MessageID, firstLine(e.Message)))
	}
	return out
}

// checkToolResults checks that every recording tool's result in the history comes from
// exactly one real execution.
func checkToolResults(c *chatRun, msgs []chat.Message, perCall map[string]int) []string {
	var out []string
	for _, m := range msgs {
		for _, ct := range m.Contents {
			if ct.Type != chat.ContentFunctionResult || !strings.HasPrefix(ct.Result, "recorded ") {
				continue
			}
			if n := perCall[fmt.Sprintf("c%d/%s", c.idx, ct.CallID)]; n != 1 && !slices.Contains(c.prefix, m.MessageID) {
				out = append(out, fmt.Sprintf("tool result of call %s in %q, but the tool ran %d times", ct.CallID, m.MessageID, n))
			}
		}
	}
	return out
}

// streamedTurn is what a chat's stream shows of one turn: accepted (turnAccepted), and
// how it ended (the type of its turnDone, turnFailed or turnCancelled event, "" when
// none) with the error of a turnFailed.
type streamedTurn struct {
	accepted bool
	end      string
	err      *wire.TurnError
}

// failedByStore reports whether the turn failed because the message store refused a
// write (the refusingStore's refusal, in a TurnFailed, StoreRefused or
// StoreUnavailable error).
func (t streamedTurn) failedByStore() bool {
	return t.end == wire.EventTurnFailed && t.err != nil &&
		(t.err.Type == wire.ErrTypeStoreRefused || strings.Contains(t.err.Message, StoreRefusal))
}

// takenOut reports whether the turn ended so that the chat takes it out of the
// history: failed (for any reason) or cancelled.
func (t streamedTurn) takenOut() bool {
	return t.end == wire.EventTurnFailed || t.end == wire.EventTurnCancelled
}

// ending says how the turn ended: the event type, with the error of a turnFailed, or
// "never".
func (t streamedTurn) ending() string {
	switch {
	case t.end == "":
		return "never"
	case t.err != nil:
		return fmt.Sprintf("%s (%s: %s)", t.end, t.err.Type, firstLine(t.err.Message))
	}
	return t.end
}
