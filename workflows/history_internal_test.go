package workflows

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// randomChat is a seeded chat of n messages: user turns, replies, tool calls and
// results.
func randomChat(r *rand.Rand, n int) []chat.Message {
	var out []chat.Message
	for i := 0; len(out) < n; i++ {
		role := []chat.Role{chat.RoleUser, chat.RoleAssistant, chat.RoleTool, chat.RoleSystem}[r.IntN(4)]
		m := chat.TextMessage(fmt.Sprintf("id%d", i), role, "", fmt.Sprintf("text %d", i))
		if role == chat.RoleTool {
			m.Contents = []chat.Content{{Type: chat.ContentFunctionResult, CallID: fmt.Sprintf("c%d", r.IntN(n)), Result: "ok"}}
		}
		out = append(out, m)
	}
	return out
}

// The history with older messages in pages answers every question by absolute index as
// the whole history would, within what it holds, and never panics outside it: for
// seeded random chats and every place the pages may end.
func TestHistoryAnswersByAbsoluteIndex(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		all := randomChat(r, 1+r.IntN(60))
		base := r.IntN(len(all) + 1)
		paged := &wire.PagedHistory{Base: base, Lineage: "L"}
		for first := 0; first < base; first += 4 {
			paged.Pages = append(paged.Pages, wire.PageRef{Seq: int64(first / 4), First: int64(first), Count: int64(min(4, base-first))})
		}
		h := newHistory(slices.Clone(all[base:]), paged)
		if base == 0 {
			h = newHistory(slices.Clone(all), nil)
		}
		where := fmt.Sprintf("seed %d, %d messages, base %d", seed, len(all), base)
		require.Equal(t, len(all), h.Len(), where)
		require.Equal(t, base, h.Base(), where)
		for i := -2; i < len(all)+2; i++ {
			m, ok := h.At(i)
			assert.Equal(t, i >= base && i < len(all), ok, "%s: At(%d)", where, i)
			if ok {
				assert.Equal(t, all[i], m, "%s: At(%d)", where, i)
			}
			for j := i; j < len(all)+2; j += 3 {
				want := all[min(max(i, base), len(all)):min(max(j, base), len(all))]
				if max(i, base) > min(max(j, base), len(all)) {
					want = nil
				}
				got := h.Slice(i, j)
				assert.Equal(t, len(want), len(got), "%s: Slice(%d, %d)", where, i, j)
				if len(want) > 0 {
					assert.Equal(t, want, got, "%s: Slice(%d, %d)", where, i, j)
				}
			}
		}
		for i, m := range all {
			want := i
			if i < base {
				want = len(all) // paged: not looked for
			}
			assert.Equal(t, want, h.IndexOf(m.MessageID), "%s: IndexOf(%s)", where, m.MessageID)
		}
		for i, end := range h.Turns() {
			assert.Equal(t, chat.RoleUser, all[i].Role, where)
			assert.GreaterOrEqual(t, i, base, where)
			for k := i + 1; k < end; k++ {
				assert.NotEqual(t, chat.RoleUser, all[k].Role, where)
			}
			assert.True(t, end == len(all) || all[end].Role == chat.RoleUser, where)
		}
		if base > 0 {
			page := h.Page(wire.HistoryInput{Offset: r.IntN(base)})
			require.NotEmpty(t, page.Pages, where)
			assert.Empty(t, page.Messages, where)
			first := page.Pages[0]
			assert.LessOrEqual(t, first.First, int64(page.Offset), where)
			assert.Greater(t, first.First+first.Count, int64(page.Offset), where)
			assert.Equal(t, "L", first.Lineage, where)
		}
		cut := h.TruncateTo(r.IntN(len(all) + 2))
		assert.GreaterOrEqual(t, h.Len(), base, "%s: pages are never taken back", where)
		assert.Equal(t, len(all), h.Len()+len(cut), where)
		h.Append(chat.TextMessage("new", chat.RoleUser, "", "x"))
		last, _ := h.Last()
		assert.Equal(t, "new", last.MessageID, where)
		assert.Equal(t, wire.HistoryStubBytes(h.Window()), h.StubBytes(), where)
	}
}

// Pages take the oldest messages while the window keeps its size, up to where a turn
// begins (a turn longer than the window: before a message that is not a tool result),
// and never the turn that waits for an approval (from its user message on), nor the
// calls open at the end.
func TestSealableEnd(t *testing.T) {
	var msgs []chat.Message
	for i := range 15 {
		msgs = append(msgs, chat.TextMessage(fmt.Sprintf("u%d", i), chat.RoleUser, "", "q"),
			chat.TextMessage(fmt.Sprintf("u%d/1", i), chat.RoleAssistant, "", "a"))
	}
	call := chat.Message{MessageID: "u15/1", Role: chat.RoleAssistant, Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: "c1", Name: "refund"}}}
	waiting := append(slices.Clone(msgs), chat.TextMessage("u15", chat.RoleUser, "", "refund"), call)
	in := wire.AgentChatInput{History: &wire.HistoryWindow{WindowMessages: 8, PageMessages: 4}}

	s := &chatState{in: in, history: newHistory(slices.Clone(msgs), nil)}
	assert.Equal(t, 22, s.sealableEnd(), "30 messages, a window of 8")

	s = &chatState{in: in, history: newHistory(slices.Clone(waiting), nil)}
	assert.Equal(t, 24, s.sealableEnd(), "the open call stays: 32 messages, the calling reply is 31")
	s.approvals.Suspend(&turn{msg: waiting[10]}, wire.Participant{}, nil)
	assert.Equal(t, 10, s.sealableEnd(), "a turn waiting for an approval (u5, at 10) stays whole")

	s = &chatState{in: in, history: newHistory(slices.Clone(msgs[20:]), &wire.PagedHistory{Base: 20, Lineage: "L"})}
	assert.Equal(t, 22, s.sealableEnd(), "from a base of 20: the window of 8 stays")
	s.approvals.Suspend(&turn{msg: msgs[20]}, wire.Participant{}, nil)
	assert.Equal(t, 20, s.sealableEnd(), "never below the base")

	// A turn of tool rounds: pages end where it begins, never inside it.
	long := slices.Clone(msgs[:10])
	long = append(long, chat.TextMessage("t", chat.RoleUser, "", "look it up"))
	for k := range 6 {
		long = append(long, chat.Message{MessageID: fmt.Sprintf("t/%d", 2*k+1), Role: chat.RoleAssistant,
			Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: fmt.Sprintf("c%d", k), Name: "lookup"}}},
			chat.Message{MessageID: fmt.Sprintf("t/%d", 2*k+2), Role: chat.RoleTool,
				Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: fmt.Sprintf("c%d", k), Result: "r"}}})
	}
	long = append(long, chat.TextMessage("t/13", chat.RoleAssistant, "", "found"), chat.TextMessage("v", chat.RoleUser, "", "q"), chat.TextMessage("v/1", chat.RoleAssistant, "", "a"))
	s = &chatState{in: in, history: newHistory(long, nil)}
	assert.Equal(t, 10, s.sealableEnd(), "26 messages, a window of 8: 18 falls in turn t (10 to 23), so pages end at 10")
	s = &chatState{in: in, history: newHistory(slices.Clone(long[11:]), &wire.PagedHistory{Base: 11, Lineage: "L"})}
	assert.Equal(t, 17, s.sealableEnd(), "no turn begins between the base and the window: the turn is cut before a call (17), never between a call and its result (18)")
}

// Pages close at PageMessages messages or PageBytes encoded: a page whose messages take
// exactly PageBytes is one page, one byte more moves its last message to the next; a
// message over PageBodyBytes counts as its stub (its body goes to a row of its own); the
// last page holds what is left.
func TestPageCutsAtTheirLimits(t *testing.T) {
	text := func(id string, n int) chat.Message {
		return chat.TextMessage(id, chat.RoleUser, "", strings.Repeat("a", n))
	}
	sized := func(id string, bytes int) chat.Message { // a message of exactly bytes encoded
		m := text(id, 0)
		return text(id, bytes-wire.MessageBytes(m))
	}
	half := wire.PageBodyBytes - 100 // under PageBodyBytes: counted whole
	var msgs []chat.Message
	n := wire.PageBytes / half
	for i := range n {
		msgs = append(msgs, sized(fmt.Sprintf("m%d", i), half))
	}
	last := wire.PageBytes - n*half
	exact := append(slices.Clone(msgs), sized("last", last))
	require.Equal(t, wire.PageBytes, messagesBytes(exact)-len(exact)-1, "the page's messages take exactly PageBytes")
	assert.Equal(t, []int{n + 1}, pageCuts(append(slices.Clone(exact), text("next", 10)), 256)[:1], "exactly at PageBytes: one page")
	over := append(slices.Clone(msgs), sized("last", last+1), text("next", 10))
	assert.Equal(t, []int{n}, pageCuts(over, 256)[:1], "one byte over: the last message opens the next page")

	big := sized("big", wire.PageBodyBytes+1)
	assert.Equal(t, []int{4, 1}, pageCuts([]chat.Message{big, big, big, big, big}, 4), "a body over PageBodyBytes counts as its stub")
	assert.Equal(t, []int{3}, pageCuts(msgs[:3], 4), "the last page holds what is left")
}
