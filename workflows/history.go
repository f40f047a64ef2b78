package workflows

import (
	"iter"
	"slices"

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
	// msgs are the messages held, [Base(), Len()).
	msgs []chat.Message
	// paged indexes the messages [0, Base()) in pages of the message store; nil until
	// the first page is written.
	paged *wire.PagedHistory
	// stubs is wire.HistoryStubBytes(msgs) as a running total (StubBytes).
	stubs stubTotal
}

// newHistory returns the history of a carried or imported history: the messages held
// (from paged.Base on) and the index of the older ones' pages (nil: none), taking both
// over.
func newHistory(msgs []chat.Message, paged *wire.PagedHistory) history {
	return history{msgs: msgs, paged: paged}
}

// Len is the number of messages in the chat.
func (h *history) Len() int { return h.Base() + len(h.msgs) }

// Base is the index of the first message the workflow holds; older ones are in pages.
func (h *history) Base() int {
	if h.paged == nil {
		return 0
	}
	return h.paged.Base
}

// Window returns the messages the workflow holds, [Base(), Len()).
func (h *history) Window() []chat.Message { return h.msgs }

// at is the window's message of absolute index i, which must be held.
func (h *history) at(i int) *chat.Message { return &h.msgs[i-h.Base()] }

// holds reports whether message i is held.
func (h *history) holds(i int) bool { return i >= h.Base() && i < h.Len() }

// At returns message i, false when i is not in [Base(), Len()).
func (h *history) At(i int) (chat.Message, bool) {
	if !h.holds(i) {
		return chat.Message{}, false
	}
	return *h.at(i), true
}

// Last returns the latest message, false for an empty history.
func (h *history) Last() (chat.Message, bool) { return h.At(h.Len() - 1) }

// Slice returns messages [from, to), both clamped to [Base(), Len()].
func (h *history) Slice(from, to int) []chat.Message {
	base := h.Base()
	to = min(max(to, base), h.Len())
	from = min(max(from, base), to)
	return h.msgs[from-base : to-base]
}

// Since returns messages [from, Len()), from clamped as Slice clamps it.
func (h *history) Since(from int) []chat.Message { return h.Slice(from, h.Len()) }

// IndexOf returns the index of the held message with messageId id, or Len() when none
// has it. Message ids are unique in a chat (workflows/ids.go); one in a page is not
// looked for (MayHavePaged).
func (h *history) IndexOf(id string) int {
	for i := len(h.msgs) - 1; i >= 0; i-- {
		if h.msgs[i].MessageID == id {
			return h.Base() + i
		}
	}
	return h.Len()
}

// MayHavePaged reports whether a paged message may have messageId id: false means
// none has it (a filter; true may be wrong, which only costs a look in the store).
func (h *history) MayHavePaged(id string) bool {
	return h.paged != nil && h.paged.IDs.MayHave(id)
}

// LastOf returns the index of the latest held message of role, or -1.
func (h *history) LastOf(role chat.Role) int {
	for i := len(h.msgs) - 1; i >= 0; i-- {
		if h.msgs[i].Role == role {
			return h.Base() + i
		}
	}
	return -1
}

// TurnAround returns the span of the turn that holds message i: the index of its user
// message (-1 when none precedes i in the window) and one past its last reply, where
// the next user message begins (or Len()).
func (h *history) TurnAround(i int) (user, end int) {
	i = max(i, h.Base())
	user, end = -1, i
	for end < h.Len() && h.at(end).Role != chat.RoleUser {
		end++
	}
	for j := min(i, h.Len()-1); j >= h.Base(); j-- {
		if h.at(j).Role == chat.RoleUser {
			return j, end
		}
	}
	return user, end
}

// Turns yields the span of each user turn held, oldest first: the index of its user
// message and one past its last reply (where the next user message begins, or Len()).
func (h *history) Turns() iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for i := h.Base(); i < h.Len(); i++ {
			if h.at(i).Role != chat.RoleUser {
				continue
			}
			if _, end := h.TurnAround(i + 1); !yield(i, end) {
				return
			}
		}
	}
}

// AnsweredCall returns the index of the held tool message that answers callID, or -1.
func (h *history) AnsweredCall(callID string) int {
	for i := len(h.msgs) - 1; i >= 0; i-- {
		if h.msgs[i].Role != chat.RoleTool {
			continue
		}
		for _, c := range h.msgs[i].Contents {
			if c.CallID == callID {
				return h.Base() + i
			}
		}
	}
	return -1
}

// OpenCalls returns the functionCalls at the end of the history that have no result
// yet (chat.OpenCallsAtEnd). Pages never hold them (Seal).
func (h *history) OpenCalls() []chat.Content {
	calls, _ := chat.OpenCallsAtEnd(h.msgs)
	return calls
}

// OpenCallsFrom returns the index of the assistant message whose tool calls are open
// at the end of the history, or Len() when none is open.
func (h *history) OpenCallsFrom() int {
	if len(h.OpenCalls()) == 0 {
		return h.Len()
	}
	i := h.Len() - 1
	for i > h.Base() && h.at(i).Role == chat.RoleTool {
		i--
	}
	return i
}

// Append adds msgs at the end.
func (h *history) Append(msgs ...chat.Message) { h.msgs = append(h.msgs, msgs...) }

// Update changes message i in place with f; false when i is not held. f may change
// the message's time or drop its body (a stub), never its id or role.
func (h *history) Update(i int, f func(*chat.Message)) bool {
	if !h.holds(i) {
		return false
	}
	h.stubs.cut(h.msgs, i-h.Base()) // its reference may change
	f(h.at(i))
	return true
}

// TruncateTo takes the history back to its first mark messages (a failed turn's
// mark) and returns the messages it took out, which the caller may still read. A mark
// at or past Len() changes nothing; pages are never taken back (a mark below Base()
// takes back to Base(): no turn in flight is ever paged).
func (h *history) TruncateTo(mark int) []chat.Message {
	mark = max(mark, h.Base()) - h.Base()
	if mark >= len(h.msgs) {
		return nil
	}
	h.stubs.cut(h.msgs, mark)
	cut := h.msgs[mark:]
	h.msgs = h.msgs[:mark:mark] // appends after a cut never write over what was cut
	return cut
}

// StubBytes is wire.HistoryStubBytes of the messages held: what the workflow keeps of
// them at the least, counted as messages are added.
func (h *history) StubBytes() int { return h.stubs.of(h.msgs) }

// Spillable returns the held messages whose bodies may move to the message store,
// oldest first: older (all but the latest) and tail (the latest keep messages, within
// tailBytes encoded). Stubs and the messages of open tool calls are in neither. The
// caller may drop the bodies of these messages (their stubs, and so StubBytes, stay
// the same), and nothing else of them.
func (h *history) Spillable(keep, tailBytes int) (older, tail []*chat.Message) {
	end := h.OpenCallsFrom() - h.Base()
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
// and always at least one message when any is left; the messages are a copy. From an
// offset below Base() the answer is the references of the pages that hold it (at most
// HistoryAnswerPages, each with its lineage) and no messages: the reader reads them
// from the message store (transfer.ReadPages) and asks again after them.
func (h *history) Page(in wire.HistoryInput) wire.HistoryResult {
	total := h.Len()
	from := min(max(in.Offset, 0), total)
	if from < h.Base() {
		return wire.HistoryResult{Offset: from, Total: total, Pages: h.pagesFrom(from)}
	}
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
		if size += wire.MessageBytes(*h.at(i)) + 1; size > maxBytes && i > from {
			to = i
			break
		}
	}
	return wire.HistoryResult{Messages: append([]chat.Message{}, h.Slice(from, to)...), Offset: from, Total: total}
}

// pagesFrom returns the references of the pages from the one holding message from
// (below Base()) on, at most HistoryAnswerPages, each naming its lineage.
func (h *history) pagesFrom(from int) []wire.PageRef {
	pages := h.paged.Pages
	i, _ := slices.BinarySearchFunc(pages, int64(from), func(r wire.PageRef, at int64) int {
		switch {
		case r.First+r.Count <= at:
			return -1
		case r.First > at:
			return 1
		}
		return 0
	})
	out := slices.Clone(pages[i:min(i+wire.HistoryAnswerPages, len(pages))])
	for j := range out {
		out[j].Lineage = h.paged.Lineage
	}
	return out
}

// Paged records level-0 pages written of the oldest messages held, under lineage
// (the chat's lineage, or its first), and index, the chat's index with them
// (wire.WritePagesResult.Index): their message ids join the filter, and the window
// drops them. refs must begin at Base() and follow each other, as seal writes them.
func (h *history) Paged(lineage string, refs, index []wire.PageRef) {
	if h.paged == nil {
		h.paged = &wire.PagedHistory{Lineage: lineage}
	}
	n := 0
	for _, r := range refs {
		for _, m := range h.msgs[n : n+int(r.Count)] {
			h.paged.IDs = h.paged.IDs.Add(m.MessageID)
		}
		n += int(r.Count)
	}
	h.paged.Pages = index
	h.paged.Base += n
	h.msgs = slices.Clone(h.msgs[n:]) // the paged messages' memory goes
	h.stubs = stubTotal{}
}

// lineage is the lineage of the chat's pages, "" before the first.
func (h *history) lineage() string {
	if h.paged == nil {
		return ""
	}
	return h.paged.Lineage
}

// index is the references of the chat's pages, as the chat carries them (highest
// levels first, wire.FoldIndex); nil before the first page.
func (h *history) index() []wire.PageRef {
	if h.paged == nil {
		return nil
	}
	return h.paged.Pages
}

// Carry returns the history as continue-as-new carries it: the messages held
// (wire.Carried.History) and the index of the paged ones (wire.Carried.Paged).
func (h *history) Carry() ([]chat.Message, *wire.PagedHistory) {
	if h.paged == nil {
		return h.msgs, nil
	}
	p := *h.paged
	return h.msgs, &p
}

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
