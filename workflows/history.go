package workflows

import (
	"iter"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// history is the chat's primary history (DESIGN.md: the workflow's history holds the
// primary chat), in order, oldest first. It owns the messages: no other code indexes,
// appends to or cuts them, so that the rules on them (a message changes only in its
// time or by losing its body to the message store; a failed turn is cut back whole)
// live here, and so that a history whose older messages live elsewhere
// (docs/design/paged-history.md) changes this file and not its callers.
//
// Indexes are absolute: a message's index is its index in the chat and in any document
// exported from it, and never changes. Base is the first index the workflow holds
// (0: it holds them all); Window returns the messages held.
//
// Slices it returns share its array: callers read them and must not change them or
// keep them across a change of the history (copy what they keep).
type history struct {
	msgs []chat.Message
	// stubs is wire.HistoryStubBytes(msgs) as a running total (StubBytes).
	stubs stubTotal
}

// newHistory returns the history of msgs (a carried or imported history), taking msgs
// over.
func newHistory(msgs []chat.Message) history { return history{msgs: msgs} }

// Len is the number of messages in the chat.
func (h *history) Len() int { return len(h.msgs) }

// Base is the index of the first message the workflow holds.
func (h *history) Base() int { return 0 }

// Window returns the messages the workflow holds, [Base(), Len()).
func (h *history) Window() []chat.Message { return h.msgs }

// At returns message i, false when i is not in [Base(), Len()).
func (h *history) At(i int) (chat.Message, bool) {
	if i < h.Base() || i >= len(h.msgs) {
		return chat.Message{}, false
	}
	return h.msgs[i], true
}

// Last returns the latest message, false for an empty history.
func (h *history) Last() (chat.Message, bool) { return h.At(len(h.msgs) - 1) }

// Slice returns messages [from, to), both clamped to [Base(), Len()].
func (h *history) Slice(from, to int) []chat.Message {
	to = min(max(to, h.Base()), len(h.msgs))
	from = min(max(from, h.Base()), to)
	return h.msgs[from:to]
}

// Since returns messages [from, Len()), from clamped as Slice clamps it.
func (h *history) Since(from int) []chat.Message { return h.Slice(from, len(h.msgs)) }

// IndexOf returns the index of the message with messageId id, or Len() when none has it.
// Message ids are unique in a chat (workflows/ids.go).
func (h *history) IndexOf(id string) int {
	for i := len(h.msgs) - 1; i >= 0; i-- {
		if h.msgs[i].MessageID == id {
			return i
		}
	}
	return len(h.msgs)
}

// LastOf returns the index of the latest message of role, or -1.
func (h *history) LastOf(role chat.Role) int {
	for i := len(h.msgs) - 1; i >= 0; i-- {
		if h.msgs[i].Role == role {
			return i
		}
	}
	return -1
}

// TurnAround returns the span of the turn that holds message i: the index of its user
// message (-1 when none precedes i) and one past its last reply, where the next user
// message begins (or Len()).
func (h *history) TurnAround(i int) (user, end int) {
	user, end = -1, i
	for end < len(h.msgs) && h.msgs[end].Role != chat.RoleUser {
		end++
	}
	for j := min(i, len(h.msgs)-1); j >= 0; j-- {
		if h.msgs[j].Role == chat.RoleUser {
			return j, end
		}
	}
	return user, end
}

// Turns yields the span of each user turn held, oldest first: the index of its user
// message and one past its last reply (where the next user message begins, or Len()).
func (h *history) Turns() iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for i := h.Base(); i < len(h.msgs); i++ {
			if h.msgs[i].Role != chat.RoleUser {
				continue
			}
			if _, end := h.TurnAround(i + 1); !yield(i, end) {
				return
			}
		}
	}
}

// AnsweredCall returns the index of the tool message that answers callID, or -1.
func (h *history) AnsweredCall(callID string) int {
	for i := len(h.msgs) - 1; i >= 0; i-- {
		if h.msgs[i].Role != chat.RoleTool {
			continue
		}
		for _, c := range h.msgs[i].Contents {
			if c.CallID == callID {
				return i
			}
		}
	}
	return -1
}

// OpenCalls returns the functionCalls at the end of the history that have no result
// yet (chat.OpenCallsAtEnd).
func (h *history) OpenCalls() []chat.Content {
	calls, _ := chat.OpenCallsAtEnd(h.msgs)
	return calls
}

// OpenCallsFrom returns the index of the assistant message whose tool calls are open
// at the end of the history, or Len() when none is open.
func (h *history) OpenCallsFrom() int {
	if len(h.OpenCalls()) == 0 {
		return len(h.msgs)
	}
	i := len(h.msgs) - 1
	for i > 0 && h.msgs[i].Role == chat.RoleTool {
		i--
	}
	return i
}

// Append adds msgs at the end.
func (h *history) Append(msgs ...chat.Message) { h.msgs = append(h.msgs, msgs...) }

// Update changes message i in place with f; false when i is not held. f may change
// the message's time or drop its body (a stub), never its id or role.
func (h *history) Update(i int, f func(*chat.Message)) bool {
	if i < h.Base() || i >= len(h.msgs) {
		return false
	}
	h.stubs.cut(h.msgs, i) // its reference may change
	f(&h.msgs[i])
	return true
}

// TruncateTo takes the history back to its first mark messages (a failed turn's
// mark) and returns the messages it took out, which the caller may still read. A mark
// at or past Len() changes nothing.
func (h *history) TruncateTo(mark int) []chat.Message {
	mark = max(mark, h.Base())
	if mark >= len(h.msgs) {
		return nil
	}
	h.stubs.cut(h.msgs, mark)
	cut := h.msgs[mark:]
	h.msgs = h.msgs[:mark:mark] // appends after a cut never write over what was cut
	return cut
}

// Replace puts msgs in place of the whole history (an import's), taking msgs over.
func (h *history) Replace(msgs []chat.Message) { *h = newHistory(msgs) }

// StubBytes is wire.HistoryStubBytes of the history: what the workflow keeps of its
// messages at the least, counted as messages are added.
func (h *history) StubBytes() int { return h.stubs.of(h.msgs) }

// Spillable returns the messages whose bodies may move to the message store, oldest
// first: older (all but the latest) and tail (the latest keep messages, within
// tailBytes encoded). Stubs and the messages of open tool calls are in neither. The
// caller may drop the bodies of these messages (their stubs, and so StubBytes, stay
// the same), and nothing else of them.
func (h *history) Spillable(keep, tailBytes int) (older, tail []*chat.Message) {
	end := h.OpenCallsFrom()
	first, kept := end, 0
	for first > 0 && end-first < keep {
		if kept += wire.MessageBytes(h.msgs[first-1]); kept > tailBytes {
			break
		}
		first--
	}
	for i := 0; i < end; i++ {
		if h.msgs[i].Contents == nil {
			continue
		}
		if i < first {
			older = append(older, &h.msgs[i])
		} else {
			tail = append(tail, &h.msgs[i])
		}
	}
	return older, tail
}

// Page answers the History query's in: from in.Offset, at most in.Limit messages (0:
// to the end) and at most HistoryPageBytes encoded (or in.MaxBytes, when smaller),
// and always at least one message when any is left. The messages are a copy.
func (h *history) Page(in wire.HistoryInput) wire.HistoryResult {
	total := len(h.msgs)
	from := min(max(in.Offset, 0), total)
	to := total
	if in.Limit > 0 {
		to = min(from+in.Limit, total)
	}
	maxBytes := wire.HistoryPageBytes
	if in.MaxBytes > 0 {
		maxBytes = min(in.MaxBytes, wire.HistoryPageBytes)
	}
	size := 0
	for i := from; i < to; i++ {
		if size += wire.MessageBytes(h.msgs[i]) + 1; size > maxBytes && i > from {
			to = i
			break
		}
	}
	return wire.HistoryResult{Messages: append([]chat.Message{}, h.msgs[from:to]...), Offset: from, Total: total}
}

// Carry returns the history as continue-as-new carries it (wire.Carried.History).
func (h *history) Carry() []chat.Message { return h.msgs }

// stubTotal is HistoryStubBytes of the history's first n messages, kept so that the
// chat's length, checked for every message admitted, does not rescan the history. The
// history grows at its end (counted by the next of), and is cut back or changed in a
// message's reference only by history's methods, which call cut first.
type stubTotal struct{ n, bytes int }

// of returns HistoryStubBytes(history), counting the messages added since the last call.
func (st *stubTotal) of(history []chat.Message) int {
	if st.n > len(history) { // cut back without cut: count again
		*st = stubTotal{}
	}
	for ; st.n < len(history); st.n++ {
		st.bytes += wire.StubBytes(history[st.n])
	}
	return st.bytes
}

// cut takes history[i:] out of the total; call it before those messages change or go.
func (st *stubTotal) cut(history []chat.Message, i int) {
	for ; st.n > i; st.n-- {
		st.bytes -= wire.StubBytes(history[st.n-1])
	}
}
